// The search file (src/store/sqlite/search-file.ts): the tables that follow
// the search log live beside cairn.db. A database whose search tables are
// still in cairn.db (every one before the file) has them moved when a store
// opens it; a search file that is missing (a restore from a backup), ahead of
// cairn.db (cairn.db restored from an older backup beside it) or behind rows
// the log no longer holds is made again from the stored vectors. After each,
// search on the database path (FTS5 and the counts) answers as before, the
// counts per tier equal those counted from the vectors, and FTS5's own check passes.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { searchRequest } from "../../src/core/search/query.ts";
import { TIERS } from "../../src/core/search/ranking.ts";
import { ftsColumns } from "../../src/store/sqlite/fts-follow.ts";
import { attachSearchFile, SEARCH_FILE_NAME, tierColumn } from "../../src/store/sqlite/search-file.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { tempDir } from "../helpers/server.ts";
import { countedFromVectors } from "../helpers/term-truth.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const WORDS = "alder birch cedar cairn cliff col crag delta dune fell firth gorge glen heath karst knoll loch marsh moor mere pass peak ridge scree tarn tor vale wadi".split(" ");
const QUERIES = ["cairn", "tarn scree", "alder birch cedar", "loch moor", "wadi", "ridge peak pass"];

const open = async (dir: string, searchLogKeep?: number) => {
  const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: 0, searchLogKeep });
  await store.migrate();
  return store;
};

/** Writes `count` notes (every third one deleted again) through the store. */
async function write(store: SqliteStore, from: number, count: number): Promise<void> {
  const { contributorNo } = await store.createContributor({ email: `w${from}@example.org`, keyPrefix: `cairn_sf${String(from).padStart(4, "0")}`, keyDigest: new Uint8Array(32), createdAt: 0 });
  for (let i = from; i < from + count; i++) {
    const id = `00000000-0000-7000-8000-${String(i + 1).padStart(12, "0")}`;
    const words = Array.from({ length: 3 + (i % 7) }, (_, w) => WORDS[(i * 7 + w * 3) % WORDS.length]);
    await store.createNote({ id, contributorNo, title: `${WORDS[i % WORDS.length]} note ${i}`, body: words.join(" "), tags: [], createdAt: i }, () => false);
    if (i % 3 === 2) await store.deleteNote(id, contributorNo);
  }
}

/** What the database path answers, and the counts per tier against those counted from the vectors. */
async function answers(store: SqliteStore): Promise<string[][]> {
  const counts = countedFromVectors(store);
  const terms = [...counts.keys()];
  expect(store.searchIndex.tierCounts(terms)).toEqual(terms.map((term) => counts.get(term)!));
  return Promise.all(QUERIES.map(async (query) => (await store.search(searchRequest(query, 50))).map((note) => note.title)));
}

function expectWhole(dir: string): void {
  const db = new Database(join(dir, "cairn.db"));
  attachSearchFile(db);
  try {
    db.exec("INSERT INTO search_fts(search_fts, rank) VALUES ('integrity-check', 0)");
    const inMain = db.query<{ name: string }, []>("SELECT name FROM main.sqlite_master WHERE name IN ('search_terms', 'search_fts')").all();
    expect(inMain).toEqual([]);
  } finally {
    db.close();
  }
}

const removeSearchFile = (dir: string) => {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(join(dir, SEARCH_FILE_NAME + suffix), { force: true });
};

test("a database whose search tables are in cairn.db (the layout before the search file) has them moved when a store opens it", async () => {
  const dir = tempDir("cairn-search-file-move-");
  dirs.push(dir);
  let store = await open(dir);
  await write(store, 0, 60);
  const before = await answers(store);
  expect(before.flat().length).toBeGreaterThan(20);
  await store.close();
  // The layout before: the counts and the FTS5 index in cairn.db, how far they followed in search_totals, no search file.
  const db = new Database(join(dir, "cairn.db"));
  attachSearchFile(db);
  const columns = Array.from({ length: TIERS }, (_, tier) => tierColumn(tier)).join(", ");
  db.exec("CREATE TABLE main.search_terms (term text NOT NULL, tier integer NOT NULL, notes integer NOT NULL, PRIMARY KEY (term, tier)) WITHOUT ROWID");
  db.exec("INSERT INTO main.search_terms SELECT * FROM search.search_terms");
  db.exec(`CREATE VIRTUAL TABLE main.search_fts USING fts5(${columns}, content='', contentless_delete=1, tokenize='ascii', detail='column')`);
  const insert = db.query(`INSERT INTO main.search_fts(rowid, ${columns}) VALUES (?${", ?".repeat(TIERS)})`);
  for (const { pk, vector } of db.query<{ pk: number; vector: string }, []>("SELECT pk, vector FROM search_vectors").all()) insert.run(pk, ...ftsColumns(vector));
  db.exec("UPDATE main.search_totals SET terms_seq = (SELECT terms_seq FROM search.search_state), fts_seq = (SELECT fts_seq FROM search.search_state)");
  db.close();
  removeSearchFile(dir);
  store = await open(dir);
  expect(await answers(store)).toEqual(before);
  await write(store, 100, 12);
  const after = await answers(store);
  await store.close();
  expectWhole(dir);
  store = await open(dir);
  expect(await answers(store)).toEqual(after);
  await store.close();
});

test("a search file that is missing, as after a restore from a backup, is made again from the stored vectors", async () => {
  const dir = tempDir("cairn-search-file-missing-");
  dirs.push(dir);
  let store = await open(dir);
  await write(store, 0, 45);
  const backup = join(dir, "backup.db");
  await store.backup(backup);
  await write(store, 45, 9);
  await store.close();
  const restored = tempDir("cairn-search-file-restored-");
  dirs.push(restored);
  copyFileSync(backup, join(restored, "cairn.db"));
  expect(existsSync(join(restored, SEARCH_FILE_NAME))).toBe(false);
  store = await open(restored);
  const titles = (await answers(store)).flat();
  expect(titles.length).toBeGreaterThan(10);
  // Only what the backup held: no note written after it.
  expect(titles.filter((title) => Number(title.split(" ").pop()) >= 45)).toEqual([]);
  await store.close();
  expectWhole(restored);
});

test("a search file ahead of cairn.db (cairn.db put back from an older copy beside it) is made again", async () => {
  const dir = tempDir("cairn-search-file-ahead-");
  dirs.push(dir);
  let store = await open(dir);
  await write(store, 0, 30);
  const old = await answers(store);
  const backup = join(dir, "older.db");
  await store.backup(backup);
  await write(store, 30, 30);
  await store.close();
  // A directory of its own (a process would have stopped before its files were put back): the older cairn.db, the newer search file.
  const putBack = tempDir("cairn-search-file-put-back-");
  dirs.push(putBack);
  copyFileSync(backup, join(putBack, "cairn.db"));
  copyFileSync(join(dir, SEARCH_FILE_NAME), join(putBack, SEARCH_FILE_NAME));
  store = await open(putBack);
  expect(await answers(store)).toEqual(old);
  await store.close();
  expectWhole(putBack);
});

test("a search file behind rows the log no longer holds is made again", async () => {
  const dir = tempDir("cairn-search-file-behind-");
  dirs.push(dir);
  let store = await open(dir, 8);
  await write(store, 0, 20);
  await store.close();
  const saved = join(dir, "saved-search.db");
  copyFileSync(join(dir, SEARCH_FILE_NAME), saved);
  store = await open(dir, 8);
  // Past LOG_TRIM_EVERY rows (search.ts): the log is trimmed to the last 8 rows the search file has followed.
  await write(store, 20, 1200);
  const now = await answers(store);
  await store.close();
  const oldest = new Database(join(dir, "cairn.db"), { readonly: true });
  const first = oldest.query<{ seq: number }, []>("SELECT min(seq) AS seq FROM search_log").get()!.seq;
  oldest.close();
  expect(first).toBeGreaterThan(100);
  removeSearchFile(dir);
  copyFileSync(saved, join(dir, SEARCH_FILE_NAME));
  store = await open(dir, 8);
  expect(await answers(store)).toEqual(now);
  await store.close();
  expectWhole(dir);
});
