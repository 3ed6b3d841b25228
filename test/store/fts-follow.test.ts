// The FTS5 index follows the search log (src/store/sqlite/fts-follow.ts): a
// batch that adds, deletes and takes a key again leaves the index as the notes
// are; while the index is behind the log, a search on the database path
// misses no note committed before it and finds none deleted; a batch commits
// while the fold thread holds the search file's write lock and its write turn
// (the search file is what it writes: search-file.ts); once the fold thread
// runs, it brings the index level with each fold and the writer makes no pass.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { analyze } from "../../src/core/search/analyzer.ts";
import { searchRequest } from "../../src/core/search/query.ts";
import { FTS_FOLLOW_ROWS } from "../../src/store/sqlite/search.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { attachSearchFile } from "../../src/store/sqlite/search-file.ts";
import { WORKER } from "../../src/store/sqlite/write-turn.ts";
import { tempDir } from "../helpers/server.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function openStore(prefix: string, searchFoldEvery?: number) {
  const dir = tempDir(prefix);
  dirs.push(dir);
  const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: 0, searchFoldEvery });
  await store.migrate();
  const { contributorNo } = await store.createContributor({ email: "f@example.org", keyPrefix: "cairn_ftsf00", keyDigest: new Uint8Array(32), createdAt: 0 });
  let n = 0;
  const note = (title: string, body: string) => ({ id: `00000000-0000-7000-8000-${String(++n).padStart(12, "0")}`, contributorNo, title, body, tags: [], createdAt: n });
  const create = (created: ReturnType<typeof note>) => store.createNote(created, () => false);
  const titles = async (query: string) => (await store.search(searchRequest(query, 10))).map((found) => found.title).sort();
  const lag = () => store.sqlite.query<{ lag: number }, []>("SELECT (SELECT coalesce(max(seq), 0) FROM search_log) - fts_seq AS lag FROM search_state").get()!.lag;
  return { dir, store, contributorNo, note, create, titles, lag };
}

function ftsIntegrity(dir: string): void {
  const db = new Database(join(dir, "cairn.db"));
  attachSearchFile(db);
  try {
    db.exec("INSERT INTO search_fts(search_fts, rank) VALUES ('integrity-check', 0)");
  } finally {
    db.close();
  }
}

test("one batch that adds, deletes and takes a key again leaves the FTS5 index as the notes are", async () => {
  const { dir, store, contributorNo, note, create, titles } = await openStore("cairn-fts-follow-");
  const [x1, x2, x3] = [note("Alpha one", "alpha"), note("Alpha two", "alpha"), note("Alpha three", "alpha")];
  for (const x of [x1, x2, x3]) await create(x);
  const [n1, n2, n3] = [note("Bravo", "bravo"), note("Charlie gone", "charlie"), note("Charlie kept", "charlie delta")];
  // Not awaited in between: one batch. n2 is added and deleted in it, and n3 takes its key.
  await Promise.all([create(n1), store.deleteNote(x3.id, contributorNo), create(n2), store.deleteNote(n2.id, contributorNo), create(n3)]);
  const keys = store.sqlite.query<{ id: string; pk: number }, []>("SELECT id, pk FROM posts").all();
  expect(keys.find((row) => row.id === n3.id)!.pk).toBe(5);
  expect(await titles("alpha")).toEqual(["Alpha one", "Alpha two"]);
  expect(await titles("bravo")).toEqual(["Bravo"]);
  expect(await titles("charlie")).toEqual(["Charlie kept"]);
  expect(store.searchIndex.memory.offReason).not.toBeNull();
  const matching = (word: string) => store.searchIndex.notesWith({ term: analyze(word)[0], tiers: null }, [], null).sort();
  expect(matching("charlie")).toEqual([5]);
  expect(matching("alpha")).toEqual([1, 2]);
  await store.close();
  ftsIntegrity(dir);
});

test("with the index behind the log, a search on the database path finds every note committed before it, and none deleted; a batch follows every FTS_FOLLOW_ROWS rows", async () => {
  const { dir, store, contributorNo, note, create, titles, lag } = await openStore("cairn-fts-lag-");
  let sawLag = 0;
  let followed = 0;
  for (let i = 0; i < 60; i++) {
    const word = `quill${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}z`;
    const made = note(`Note ${word}`, `${word} and more words ${i}`);
    const before = lag();
    // Three notes in one batch, then a search at once: the index has not followed them yet, most times.
    await Promise.all([create(made), create(note(`Other ${i}`, "other words")), create(note(`Third ${i}`, "third words"))]);
    if (lag() < before) followed++;
    if (lag() > 0) sawLag++;
    // (Other notes may come too: the search forgives a typo, and the words differ by one letter.)
    expect(await titles(word)).toContain(made.title);
    if (i % 4 === 3) {
      await store.deleteNote(made.id, contributorNo);
      expect(await titles(word)).not.toContain(made.title);
    }
  }
  // The database path really read behind the log (or the test proves nothing about it)...
  expect(sawLag).toBeGreaterThan(10);
  // ... and batches brought the index level by themselves too (the searches above did as well).
  expect(store.searchIndex.unfollowedRows).toBeLessThan(FTS_FOLLOW_ROWS);
  await store.close();
  const db = new Database(join(dir, "cairn.db"));
  attachSearchFile(db);
  expect(db.query<{ lag: number }, []>("SELECT (SELECT max(seq) FROM search_log) - fts_seq AS lag FROM search_state").get()!.lag).toBe(0);
  db.close();
  ftsIntegrity(dir);
});

test("writes alone bring the index level once FTS_FOLLOW_ROWS rows were logged, in the batch that reaches it", async () => {
  const { store, note, create, lag } = await openStore("cairn-fts-rows-");
  let most = 0;
  for (let i = 0; i < FTS_FOLLOW_ROWS + 20; i++) {
    await create(note(`Row ${i}`, `words of row ${i}`));
    most = Math.max(most, lag());
  }
  expect(most).toBe(FTS_FOLLOW_ROWS - 1);
  expect(lag()).toBeLessThan(FTS_FOLLOW_ROWS);
  expect(lag()).toBe(store.searchIndex.unfollowedRows);
  await store.close();
});

test("a write batch commits while the fold thread holds the search file's write lock and its write turn", async () => {
  const { dir, store, note, create, titles } = await openStore("cairn-fts-turn-");
  const turn = (store.searchIndex as unknown as { turn: { tryTake(who: number): boolean; give(who: number): void } }).turn;
  expect(turn.tryTake(WORKER)).toBe(true);
  // What the fold thread holds while it writes a fold or an FTS5 pass: the search file's write lock, never cairn.db's.
  const worker = new Database(join(dir, "cairn.db"));
  attachSearchFile(worker);
  worker.exec("BEGIN");
  worker.exec("UPDATE search_state SET fts_seq = fts_seq");
  await create(note("Waiting", "patient words"));
  expect(store.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM posts WHERE title = 'Waiting'").get()!.n).toBe(1);
  worker.exec("COMMIT");
  worker.close();
  turn.give(WORKER);
  // The database path brings the FTS5 index level before it reads.
  expect(await titles("patient")).toEqual(["Waiting"]);
  await store.close();
});

test("once the fold thread runs, it brings the FTS5 index level with each fold, and the writer makes no pass", async () => {
  // The store's first fold (at 8 rows) starts the thread; it then folds every 8 * THREAD_FOLD_FACTOR rows.
  const { dir, store, note, create, titles, lag } = await openStore("cairn-fts-thread-", 8);
  const search = store.searchIndex as unknown as { fts: { apply: (...args: unknown[]) => number }; termCounts: { threadFollowsFts: boolean; threadFolds: number } };
  let i = 0;
  const word = (n: number) => `wren${String.fromCharCode(97 + (n % 26))}${String.fromCharCode(97 + Math.floor(n / 26) % 26)}q`;
  const next = () => create(note(`Note ${word(i)}`, `${word(i++)} and more words`));
  for (let tries = 0; !search.termCounts.threadFollowsFts; tries++) {
    expect(tries).toBeLessThan(200);
    await next();
    await Bun.sleep(5);
  }
  const writerApply = search.fts.apply.bind(search.fts);
  let writerPasses = 0;
  search.fts.apply = (...args: unknown[]) => {
    writerPasses++;
    return writerApply(...args);
  };
  let most = 0;
  let levelled = 0;
  for (let n = 0; n < FTS_FOLLOW_ROWS + 72; n++) {
    const before = lag();
    await Promise.all([next(), next()]);
    // Writes at a pace the thread keeps up with here (a server's batches defer while it writes).
    await Bun.sleep(2);
    const now = lag();
    if (now < before) levelled++;
    most = Math.max(most, now);
  }
  // Without the thread's passes the lag would pass 2 * FTS_FOLLOW_ROWS; with the writer's, writerPasses would count them.
  expect(writerPasses).toBe(0);
  expect(levelled).toBeGreaterThan(3);
  expect(most).toBeLessThan(FTS_FOLLOW_ROWS);
  expect(search.termCounts.threadFolds).toBeGreaterThan(3);
  // The database path still reads every note (bringing the index level itself first when it lags).
  for (const n of [0, 37, i - 1]) expect(await titles(word(n))).toContain(`Note ${word(n)}`);
  await store.close();
  ftsIntegrity(dir);
});
