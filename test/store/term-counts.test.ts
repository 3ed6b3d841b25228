// The term counts on SQLite (src/store/sqlite/term-counts.ts): folded from the
// search log in batches, yet exact at every read. Two stores on one data
// directory (as two servers would be) create, delete and supersede notes,
// reusing keys, across several folds and with a short log; at checkpoints
// both stores' counts per tier and typo vocabulary equal those counted from
// the stored vectors, and once folded the table holds exactly those counts.
// After a store's first fold its folds are prepared by a worker thread and
// applied between write batches (fold-thread.ts); the same checks hold.
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { TIERS } from "../../src/core/search/ranking.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { FOLD_EVERY, FOLD_TERMS, THREAD_FOLD_FACTOR } from "../../src/store/sqlite/term-folds.ts";
import { tempDir } from "../helpers/server.ts";
import { countedFromVectors } from "../helpers/term-truth.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const WORDS = "alder birch cedar cairn cliff col crag delta dune fell firth gorge glen heath karst knoll loch marsh moor mere pass peak ridge scree tarn tor vale wadi".split(" ");

/** A small deterministic generator (the test must fail the same way twice). */
function generator(seed: number) {
  let state = seed;
  const next = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(list: T[]) => list[Math.floor(next() * list.length)] };
}

/** Notes holding each term per tier, counted from the stored vectors. */
const truth = countedFromVectors;

const logState = (store: SqliteStore) =>
  store.sqlite
    .query<{ folded: number; last: number; kept: number }, []>(
      "SELECT (SELECT terms_seq FROM search_state) AS folded, (SELECT coalesce(max(seq), 0) FROM search_log) AS last, (SELECT count(*) FROM search_log WHERE seq > (SELECT terms_seq FROM search_state)) AS kept",
    )
    .get()!;

function expectExact(store: SqliteStore, expected: Map<string, number[]>) {
  const terms = [...expected.keys(), "absentword", WORDS[0]];
  const counts = store.searchIndex.tierCounts(terms);
  terms.forEach((term, i) => expect([term, counts[i]]).toEqual([term, expected.get(term) ?? new Array<number>(TIERS).fill(0)]));
  // Asked again with nothing logged since (the pending change kept from the last read), and for two terms only.
  const none = new Array<number>(TIERS).fill(0);
  expect(store.searchIndex.tierCounts(["cairn", "scree"])).toEqual([expected.get("cairn") ?? none, expected.get("scree") ?? none]);
  for (const [from, to] of [["a", "d"], ["g", "m"], ["m", "{"], ["c", "ca"]]) {
    const want = [...expected]
      .filter(([term]) => term >= from && term < to)
      .map(([term, perTier]) => ({ term, doc: perTier.reduce((a, b) => a + b, 0) }))
      .filter((row) => row.doc > 0)
      .sort((a, b) => (a.term < b.term ? -1 : 1));
    const got = store.searchIndex.vocabulary(from, to);
    expect([...got].sort((a, b) => (a.term < b.term ? -1 : 1))).toEqual(want);
  }
}

for (const foldEvery of [FOLD_EVERY, 37]) test(`term counts folded from the log every ${foldEvery} rows are exact at every read, across two stores, deletes, superseding and reused keys`, async () => {
  const dir = tempDir("cairn-term-counts-");
  dirs.push(dir);
  const settings = { dataDir: dir, searchMemoryBytes: 0, searchLogKeep: 64, searchFoldEvery: foldEvery };
  const stores = [new SqliteStore(settings), new SqliteStore(settings)];
  for (const store of stores) await store.migrate();
  const [a, b] = stores;
  const authors = [];
  for (let i = 0; i < 8; i++) authors.push((await a.createContributor({ email: `t${i}@example.org`, keyPrefix: `cairn_tc${i}000`, keyDigest: new Uint8Array(32), createdAt: 0 })).contributorNo);
  const rng = generator(18);
  const text = (n: number) => Array.from({ length: n }, () => (rng.next() < 0.3 ? `${rng.pick(WORDS)}${rng.int(40)}` : rng.pick(WORDS))).join(" ");
  const live: { id: string; author: number; superseded: boolean }[] = [];
  let n = 0;
  let sawPending = false;
  // Past the first fold (on the store's own thread) and a few of the fold thread's, which come every THREAD_FOLD_FACTOR times as many rows.
  const operations = Math.max(foldEvery * (THREAD_FOLD_FACTOR + 2) + 100, 600);
  for (let op = 1; op <= operations; op++) {
    const store = rng.pick(stores);
    const roll = rng.next();
    if (roll < 0.12 && live.length > 0) {
      // Deleting the newest note most of the time lets the next note take its key again.
      const index = rng.next() < 0.5 ? live.length - 1 : rng.int(live.length);
      const [gone] = live.splice(index, 1);
      expect(await store.deleteNote(gone.id, gone.author)).toBe("deleted");
    } else {
      const author = rng.pick(authors);
      const older = roll < 0.2 ? live.find((note) => note.author === author && !note.superseded) : undefined;
      const id = `00000000-0000-7000-8000-${String(++n).padStart(12, "0")}`;
      const note = { id, contributorNo: author, title: text(1 + rng.int(5)), body: text(rng.int(60)), tags: rng.next() < 0.3 ? [rng.pick(WORDS)] : [], createdAt: n, supersedes: older?.id ?? null };
      const created = await store.createNote(note, () => false);
      expect("id" in created).toBe(true);
      if (older) older.superseded = true;
      live.push({ id, author, superseded: false });
    }
    if (op % 97 === 0 || op === operations) {
      const state = logState(a);
      if (state.last > state.folded) sawPending = true;
      // The log keeps every row not folded yet, however short SEARCH_LOG_KEEP.
      expect(state.kept).toBe(state.last - state.folded);
      const expected = truth(a);
      expectExact(a, expected);
      expectExact(b, expected);
    }
  }
  const state = logState(a);
  expect(sawPending).toBe(true);
  expect(state.folded).toBeGreaterThan(foldEvery);
  // After each store's first fold (on its own thread), folds were prepared by its fold thread (fold-thread.ts).
  expect(stores.map((store) => store.searchIndex.termCounts.threadFolds).reduce((x, y) => x + y)).toBeGreaterThan(0);
  // Folded all: the table alone holds exactly the counts, and no empty row.
  a.searchIndex.termCounts.fold();
  const rows = a.sqlite.query<{ term: string; tier: number; notes: number }, []>("SELECT term, tier, notes FROM search_terms").all();
  const table = new Map<string, number[]>();
  for (const row of rows) {
    expect(row.notes).toBeGreaterThan(0);
    if (!table.has(row.term)) table.set(row.term, new Array<number>(TIERS).fill(0));
    table.get(row.term)![row.tier] = row.notes;
  }
  expect(table).toEqual(truth(a));
  expect(logState(a).kept).toBe(0);
  for (const store of stores) await store.close();
}, 120_000);

test("the upgrade to folded counts (0007_search_terms_seq) takes the counts of a database written before it as current", async () => {
  const dir = tempDir("cairn-term-counts-upgrade-");
  dirs.push(dir);
  let store = new SqliteStore({ dataDir: dir, searchMemoryBytes: 0 });
  await store.migrate();
  const { contributorNo } = await store.createContributor({ email: "u@example.org", keyPrefix: "cairn_tcup00", keyDigest: new Uint8Array(32), createdAt: 0 });
  for (let i = 0; i < 40; i++) {
    await store.createNote({ id: `00000000-0000-7000-8000-${String(i + 1).padStart(12, "0")}`, contributorNo, title: `Tarn ${i}`, body: WORDS.slice(0, 1 + (i % 9)).join(" "), tags: [], createdAt: i }, () => false);
  }
  // Before the step every write counted its terms: the table was current and the column did not exist.
  store.searchIndex.termCounts.fold();
  store.sqlite.exec("ALTER TABLE search_totals DROP COLUMN terms_seq");
  // Later steps (0008_note_tags_one_order, 0009_fts_follows_log: the FTS5 index is level with the log here) are undone too: migrations run in order once.
  store.sqlite.exec("ALTER TABLE search_totals DROP COLUMN fts_seq");
  store.sqlite.exec("DELETE FROM __drizzle_migrations WHERE created_at >= 1796300000000");
  await store.close();
  store = new SqliteStore({ dataDir: dir, searchMemoryBytes: 0 });
  await store.migrate();
  const state = logState(store);
  expect(state.folded).toBe(state.last);
  expect(state.last).toBeGreaterThanOrEqual(40);
  expectExact(store, truth(store));
  await store.close();
});

test("notes of many distinct terms fold by FOLD_TERMS, well before FOLD_EVERY rows, and stay exact", async () => {
  const dir = tempDir("cairn-term-counts-terms-");
  dirs.push(dir);
  const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: 0 });
  await store.migrate();
  const { contributorNo } = await store.createContributor({ email: "big@example.org", keyPrefix: "cairn_tcbig0", keyDigest: new Uint8Array(32), createdAt: 0 });
  // Each note holds ~FOLD_TERMS / 4 distinct terms: the fourth note's change reaches FOLD_TERMS.
  const perNote = Math.ceil(FOLD_TERMS / 4);
  for (let i = 0; i < 6; i++) {
    const body = Array.from({ length: perNote }, (_, w) => `w${i}x${w}`).join(" ");
    await store.createNote({ id: `00000000-0000-7000-8000-${String(i + 1).padStart(12, "0")}`, contributorNo, title: `Big ${i}`, body, tags: [], createdAt: i }, () => false);
    if (i < 3) expect(logState(store).folded).toBe(0);
  }
  const { folded, kept } = logState(store);
  expect(folded).toBeGreaterThan(0);
  expect(kept).toBeLessThan(FOLD_EVERY);
  expect(kept).toBeLessThan(4);
  const expected = truth(store);
  const probe = ["w0x0", "w3x7", "w5x99", "big", "absentword"];
  expect(store.searchIndex.tierCounts(probe)).toEqual(probe.map((term) => expected.get(term) ?? new Array<number>(TIERS).fill(0)));
  await store.close();
}, 30_000);
