// The in-memory postings of the SQLite engine (docs/design.md, "Search"):
// two stores on one data directory (as two servers would be) see each other's
// writes on their next search, a reused key never mixes two notes, a store
// that fell behind the trimmed log builds again, and a store over its memory
// budget falls back to the FTS5 index with the same results; each with the
// postings on the search thread (search-thread.ts) and on the store's own thread.
import { Database } from "bun:sqlite";
import { attachSearchFile } from "../../src/store/sqlite/search-file.ts";
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { searchRequest } from "../../src/core/search/query.ts";
import { searchPostings } from "../../src/core/search/memory-queries.ts";
import { SqliteSearchLog, sqliteMemorySearch } from "../../src/store/sqlite/memory-search.ts";
import { DEFAULT_SEARCH_MEMORY_BYTES } from "../../src/store/sqlite/search.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { tempDir } from "../helpers/server.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function pair(options: { searchThread: boolean; searchLogKeep?: number; searchMemoryBytes?: number; searchLoadNowPostings?: number }) {
  const dir = tempDir("cairn-memory-search-");
  dirs.push(dir);
  const settings = { searchMemoryBytes: DEFAULT_SEARCH_MEMORY_BYTES, ...options };
  const writer = new SqliteStore({ dataDir: dir, ...settings });
  await writer.migrate();
  const reader = new SqliteStore({ dataDir: dir, ...settings });
  await reader.migrate();
  const { contributorNo } = await writer.createContributor({ email: "m@example.org", keyPrefix: "cairn_mmmmmm", keyDigest: new Uint8Array(32), createdAt: 0 });
  let n = 0;
  const create = async (title: string, body: string) => {
    const id = `00000000-0000-7000-8000-${String(++n).padStart(12, "0")}`;
    const created = await writer.createNote({ id, contributorNo, title, body, tags: [], createdAt: n }, () => false);
    if (!("id" in created)) throw new Error("unexpected duplicate");
    return id;
  };
  const remove = async (id: string) => expect(await writer.deleteNote(id, contributorNo)).toBe("deleted");
  const titles = async (store: SqliteStore, query: string) => (await store.search(searchRequest(query, 10))).map((note) => note.title);
  const close = async () => {
    await writer.close();
    await reader.close();
  };
  return { writer, reader, create, remove, titles, close };
}

for (const searchThread of [true, false]) describe(searchThread ? "postings on the search thread" : "postings on the store's thread", () => {
  test("a note written or deleted through one store is found, or gone, at the other's next search", async () => {
    const { writer, reader, create, remove, titles, close } = await pair({ searchThread });
    try {
      expect(reader.searchMemoryOffReason).toBeNull();
      const first = await create("Gravel cairn one", "stones along the ridge");
      await create("Gravel cairn two", "more stones");
      expect(await titles(reader, "gravel")).toEqual(["Gravel cairn two", "Gravel cairn one"]);
      await remove(first);
      expect(await titles(reader, "gravel")).toEqual(["Gravel cairn two"]);
      expect(await titles(writer, "gravel")).toEqual(["Gravel cairn two"]);
      expect(reader.searchMemoryOffReason).toBeNull();
    } finally {
      await close();
    }
  });

  test("a key reused after the newest note is deleted serves the new text, never the old one", async () => {
    const { reader, create, remove, titles, close } = await pair({ searchThread });
    try {
      await create("Basalt column", "hexagonal basalt");
      expect(await titles(reader, "basalt")).toEqual(["Basalt column"]);
      const newest = await create("Obsidian shard", "volcanic glass obsidian");
      expect(await titles(reader, "obsidian")).toEqual(["Obsidian shard"]);
      // SQLite hands the deleted newest note's key to the next note: both happen before the reader's next search.
      await remove(newest);
      const reused = await create("Pumice stone", "light volcanic pumice");
      expect(reused).toBeDefined();
      expect(await titles(reader, "obsidian")).toEqual([]);
      expect(await titles(reader, "pumice")).toEqual(["Pumice stone"]);
      expect(await titles(reader, "volcanic")).toEqual(["Pumice stone"]);
      expect(await titles(reader, "basalt")).toEqual(["Basalt column"]);
    } finally {
      await close();
    }
  });

  test("a store's own writes, another store's between them, and its own delete all reach its postings", async () => {
    // The writer's catch-up after its own batches reads the log without a
    // transaction while every row since is one of its adds (memory-search.ts);
    // another store's add or its own delete sends it to the read in one snapshot.
    const { writer, reader, create, remove, titles, close } = await pair({ searchThread });
    try {
      await create("Alpha granite", "granite quarry");
      expect(await titles(writer, "granite")).toEqual(["Alpha granite"]);
      const other = await reader.createNote(
        { id: "00000000-0000-7000-8000-900000000001", contributorNo: 1, title: "Beta granite", body: "granite from the other store", tags: [], createdAt: 50 },
        () => false,
      );
      expect("id" in other).toBe(true);
      const gamma = await create("Gamma granite", "granite and more granite");
      const sorted = async (store: SqliteStore, query: string) => (await titles(store, query)).sort();
      expect(await sorted(writer, "granite")).toEqual(["Alpha granite", "Beta granite", "Gamma granite"]);
      await remove(gamma);
      await create("Delta basalt", "basalt, not granite");
      expect(await sorted(writer, "granite")).toEqual(["Alpha granite", "Beta granite", "Delta basalt"]);
      expect(await titles(writer, "quarry")).toEqual(["Alpha granite"]);
      expect(await titles(writer, "basalt")).toEqual(["Delta basalt"]);
      expect(await titles(reader, "granite")).toEqual(await titles(writer, "granite"));
      expect(writer.searchMemoryOffReason).toBeNull();
    } finally {
      await close();
    }
  });

  test("a store that fell behind the trimmed log builds its postings again and misses nothing", async () => {
    const { reader, create, remove, titles, close } = await pair({ searchThread, searchLogKeep: 4 });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push(await create(`Flint ${i}`, `flint knapping ${i === 11 ? "chert" : ""}`));
      await remove(ids[0]);
      expect((await titles(reader, "flint")).length).toBe(10);
      expect(await titles(reader, "chert")).toEqual(["Flint 11"]);
      expect(reader.searchMemoryOffReason).toBeNull();
    } finally {
      await close();
    }
  });

  test("over its memory budget a store searches the FTS5 index instead, with the same results", async () => {
    const { reader, writer, create, titles, close } = await pair({ searchThread, searchMemoryBytes: 20_000 });
    try {
      expect(reader.searchMemoryOffReason).toBeNull(); // empty: fits
      for (let i = 0; i < 40; i++) await create(`Granite slab ${i}`, `granite ${"quartz ".repeat(i % 5)} feldspar${i} mica${i}`);
      const served = await titles(reader, "granite quartz");
      expect(reader.searchMemoryOffReason).toMatch(/over SEARCH_MEMORY_MB/);
      expect(served).toEqual(await titles(writer, "granite quartz"));
      expect(served.length).toBe(10);
      expect(served.slice(0, 8).every((title) => /Granite slab \d+/.test(title))).toBe(true);
    } finally {
      await close();
    }
  });

  test("a corpus built in the background: the FTS5 index answers meanwhile, then the postings, with writes made during the build", async () => {
    const { writer, create, titles, close } = await pair({ searchThread });
    const dir = writer.sqlite.filename.replace(/\/cairn\.db$/, "");
    const late = new SqliteStore({ dataDir: dir, searchMemoryBytes: DEFAULT_SEARCH_MEMORY_BYTES, searchLoadNowPostings: 0, searchThread });
    try {
      for (let i = 0; i < 300; i++) await create(`Scree ${i}`, `loose scree slope ${i % 7 === 0 ? "talus" : "gravel"} ${i}`);
      await late.migrate();
      expect(late.searchMemoryOffReason).toMatch(/being built/);
      const during = await titles(late, "talus scree");
      await create("Talus cone", "talus talus talus at the foot of the cliff");
      await late.searchMemoryBuilt();
      expect(late.searchMemoryOffReason).toBeNull();
      const after = await titles(late, "talus scree");
      expect(after[0]).toBe("Talus cone");
      expect(after.slice(1)).toEqual(during.slice(0, 9));
      expect(await titles(late, "talus scree")).toEqual(await titles(writer, "talus scree"));
    } finally {
      await late.close();
      await close();
    }
  });
});

test("a key this store wrote, removed and taken again within one read of the log, is read back: never this store's own vector", async () => {
  // Another process may delete this store's newest note and take its row id
  // before this store reads the log: the key's last add is then the other
  // note's. Rows written directly, so the race is certain.
  const dir = tempDir("cairn-memory-search-");
  dirs.push(dir);
  const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: DEFAULT_SEARCH_MEMORY_BYTES });
  await store.migrate();
  await store.close();
  const sqlite = new Database(join(dir, "cairn.db"));
  attachSearchFile(sqlite);
  try {
    const log = new SqliteSearchLog(sqlite, 0);
    const from = (sqlite.query("SELECT coalesce(max(seq), 0) AS seq FROM search_log").get() as { seq: number }).seq;
    const own = "1,0,1 basalt:1";
    const others = "1,0,1 pumice:1";
    sqlite.run("INSERT INTO search_log(pk, removed) VALUES (77, NULL), (77, ?), (77, NULL)", [own]);
    sqlite.run("INSERT INTO search_vectors(pk, vector) VALUES (77, ?)", [others]);
    const read = await log.changesSince(from, new Map([[77, own]]));
    expect(read?.changes).toEqual([{ key: 77, removed: null, added: others }]);
    // Added only (no removal in the read): this store's own vector, not read back.
    const next = read!.position;
    sqlite.run("INSERT INTO search_log(pk, removed) VALUES (78, NULL)");
    sqlite.run("INSERT INTO search_vectors(pk, vector) VALUES (78, ?)", [others]);
    expect((await log.changesSince(next, new Map([[78, own]])))?.changes).toEqual([{ key: 78, removed: null, added: own }]);
  } finally {
    sqlite.close();
  }
});

for (const rows of [true, false]) test(`a batch's vectors that reach the postings after a read of the log took its rows are never taken for a later note on the same key (${rows ? "with its rows" : "a batch with a removal: no rows"})`, async () => {
  // The search thread gets a batch's vectors in a message sent after COMMIT; a
  // lagging thread may read the log first (a search asked before the batch)
  // and take the batch's rows, and the note's delete, from the database. The
  // newest note's key is then taken by the next note; when the late vectors
  // arrived they were kept for the next read, which found that note's add row
  // (and no removal) and indexed it with the deleted note's terms: found by
  // words it does not hold, not by its own, and the term counts drifted once
  // it was removed (an outside soak audit saw rankings differ from a fresh build).
  const dir = tempDir("cairn-memory-search-");
  dirs.push(dir);
  const writer = new SqliteStore({ dataDir: dir, searchMemoryBytes: 0 });
  await writer.migrate();
  const reader = new Database(join(dir, "cairn.db"), { readonly: true });
  attachSearchFile(reader, true);
  const follower = sqliteMemorySearch(reader, DEFAULT_SEARCH_MEMORY_BYTES);
  try {
    await follower.start();
    const { contributorNo } = await writer.createContributor({ email: "l@example.org", keyPrefix: "cairn_llllll", keyDigest: new Uint8Array(32), createdAt: 0 });
    const note = (n: number, title: string, body: string) => ({ id: `00000000-0000-7000-8000-${String(n).padStart(12, "0")}`, contributorNo, title, body, tags: [], createdAt: n });
    await writer.createNote(note(1, "Granite tor", "weathered granite"), () => false);
    await writer.createNote(note(2, "Basalt column", "hexagonal basalt"), () => false);
    const row = writer.sqlite.query("SELECT p.pk, v.vector, (SELECT max(seq) FROM search_log) AS seq FROM posts p JOIN search_vectors v ON v.pk = p.pk WHERE p.id = ?").get(note(2, "", "").id) as { pk: number; vector: string; seq: number };
    expect(await writer.deleteNote(note(2, "", "").id, contributorNo)).toBe("deleted");
    // A read of the log (a search) before the batch's message: it takes the note's add and its removal.
    await follower.follow();
    // The next note takes the deleted newest note's key.
    await writer.createNote(note(3, "Pumice stone", "light volcanic pumice"), () => false);
    expect((writer.sqlite.query("SELECT pk FROM posts WHERE id = ?").get(note(3, "", "").id) as { pk: number }).pk).toBe(row.pk);
    // The batch's message arrives late: with its rows when they are its adds alone, else only with its last row.
    if (rows) follower.committed(new Map([[row.pk, row.vector]]), { first: row.seq, last: row.seq }, row.seq);
    else follower.committed(new Map([[row.pk, row.vector]]), undefined, row.seq);
    const keys = async (query: string) => (await searchPostings((await follower.current())!, [query], 10)).map((ranked) => ranked.key);
    expect(await keys("pumice")).toEqual([row.pk]);
    expect(await keys("basalt")).toEqual([]);
    expect(await keys("granite")).toHaveLength(1);
    const index = (await follower.current())!;
    expect([index.notes, index.notesWith("basalt"), index.notesWith("pumic")]).toEqual([2, 0, 1]);
  } finally {
    follower.close();
    reader.close();
    await writer.close();
  }
});
