// The ranking rules of search on a real (temporary) SQLite store: common and
// rare words, typo correction, tie-breaking, notes bulk-loaded by SQL and
// hostile input, on both search paths: the in-memory postings and the FTS5
// index alone. Exactness itself: test/store/search-exact.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { searchRequest } from "../../src/core/search/query.ts";
import { DEFAULT_SEARCH_MEMORY_BYTES } from "../../src/store/sqlite/search.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { tempDir } from "../helpers/server.ts";

const paths = [
  { name: "in-memory postings", searchMemoryBytes: DEFAULT_SEARCH_MEMORY_BYTES },
  { name: "FTS5 index alone", searchMemoryBytes: 0 },
];

for (const { name, searchMemoryBytes } of paths) describe(name, () => {
  let dir: string;
  let store: SqliteStore;
  let nextPk = 0;
  const titles = new Map<string, string>();

  function insert(note: { title: string; body: string; tags?: string[]; score?: number; at?: number }): string {
    const id = `00000000-0000-7000-8000-${String(++nextPk).padStart(12, "0")}`;
    store.sqlite
      .query("INSERT INTO posts (id, contributor_no, title, body, tags, score, comment_count, created_at) VALUES (?, 1, ?, ?, ?, ?, 0, ?)")
      .run(id, note.title, note.body, JSON.stringify(note.tags ?? []), note.score ?? 0, note.at ?? nextPk);
    titles.set(id, note.title);
    return id;
  }
  const search = async (query: string) => (await store.search(searchRequest(query, 10))).map((note) => titles.get(note.id));
  const WINDOW = 1000; // older releases scored only the newest 1,000 matches; these corpora are larger

  beforeAll(async () => {
    dir = tempDir("cairn-search-");
    store = new SqliteStore({ dataDir: dir, searchMemoryBytes });
    await store.migrate();
    store.sqlite.query("INSERT INTO contributors (email, key_prefix, key_digest, active, created_at) VALUES ('t@example.org', 'cairn_tttttt', x'00', 1, 0)").run();
    store.sqlite.transaction(() => {
      insert({ title: "SQLITE_BUSY: database is locked", body: "Two writers; set busy_timeout and use BEGIN IMMEDIATE." });
      insert({ title: "Postgres replication lag", body: "The replica fell behind during the batch job." });
      insert({ title: "Certificate expired on Monday", body: "certbot renewal failed; nginx was not reloaded." });
      // Old notes holding a rare word, then more than WINDOW newer notes holding only a common one.
      insert({ title: "Zephyr gateway timeouts", body: "The zephyr proxy dropped idle connections; common fix below." });
      insert({ title: "Notes on zephyr", body: "Another zephyr write-up, common words only." });
      for (let i = 0; i < WINDOW + 200; i++) insert({ title: `Filler note ${i}`, body: `common words everywhere, number ${i}, ubiquitous` });
      // As many again without "common" (so it is in fewer than half of all notes), all holding "ubiquitous" (in more than half).
      for (let i = 0; i < WINDOW + 300; i++) insert({ title: `Other note ${i}`, body: `ubiquitous text, number ${i}` });
      // Identical text: ties go to the higher net score, then the newer note.
      insert({ title: "Quibble twin", body: "same text", score: 1, at: 1000 });
      insert({ title: "Quibble twin", body: "same text", score: 5, at: 500 });
      insert({ title: "Quibble twin", body: "same text", score: 5, at: 2000 });
    })();
    // Rows written by SQL (as a bulk load would) join the index at the next start.
    store.searchIndex.catchUp();
    // Distinguish the twins by their order of insertion.
    const twins = [...titles].filter(([, title]) => title === "Quibble twin").map(([id]) => id);
    twins.forEach((id, i) => titles.set(id, `Quibble twin ${["score 1", "score 5 older", "score 5 newer"][i]}`));
  });

  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe("ranking", () => {
    test("every note holding any word competes: the best of them come first", async () => {
      const found = await search("replication certificate locked");
      expect(found.slice(0, 3).sort()).toEqual(["Certificate expired on Monday", "Postgres replication lag", "SQLITE_BUSY: database is locked"]);
    });

    test("a rare word is not crowded out when the query's words are in more than WINDOW notes", async () => {
      const found = await search("common zephyr");
      expect(found.slice(0, 2).sort()).toEqual(["Notes on zephyr", "Zephyr gateway timeouts"]);
      expect(found.length).toBe(10);
    });

    test("a word in more than half of all notes still counts a little: the notes holding the rare word come first", async () => {
      const found = await search("ubiquitous zephyr");
      expect(found.slice(0, 2).sort()).toEqual(["Notes on zephyr", "Zephyr gateway timeouts"]);
      expect(found.length).toBe(10);
      expect((await search("ubiquitous")).length).toBe(10);
      expect((await search("ubiquitous qqqqxz")).length).toBe(10);
    });

    test("a word in more than WINDOW notes alone still answers, newest matches first among equals", async () => {
      const found = await search("filler");
      expect(found.length).toBe(10);
      for (const title of found) expect(title).toMatch(/^Filler note \d+$/);
    });

    test("ties go to the higher net score, then the newer note", async () => {
      expect(await search("quibble")).toEqual(["Quibble twin score 5 newer", "Quibble twin score 5 older", "Quibble twin score 1"]);
    });

    test("function words do not decide the ranking", async () => {
      expect((await search("how to fix the replication lag"))[0]).toBe("Postgres replication lag");
    });
  });

  describe("typo tolerance", () => {
    test("a word in no note is replaced by the closest index term", async () => {
      expect((await search("datbase is locked"))[0]).toBe("SQLITE_BUSY: database is locked");
      expect((await search("certifcate expired"))[0]).toBe("Certificate expired on Monday");
      expect((await search("replicaton"))[0]).toBe("Postgres replication lag");
    });

    test("nothing close enough: no results", async () => {
      expect(await search("nonexistentwordzzq")).toEqual([]);
      expect(await search("wombat")).toEqual([]);
    });

    test("a word that is in some note is never corrected", async () => {
      insert({ title: "Replicaton is spelt wrong here", body: "typo kept on purpose" });
      store.searchIndex.catchUp();
      expect(await search("replicaton")).toEqual(["Replicaton is spelt wrong here"]);
    });
  });

  describe("hostile input reaches the index only as quoted words", () => {
    test("search syntax, quotes and odd characters never throw", async () => {
      const hostile = ['"', '""', "*", "zephyr*", "title:zephyr", "-zephyr", "NEAR(zephyr common, 2)", "(", "^", "{title}:", "AND", "OR NOT",
        "😀", "\u0000", "\ud800", "e\u0301", "İstanbul", "'; DROP TABLE posts; --", "a b c d e f g h i j k l m n o p q r s t u v w x y z"];
      for (const query of hostile) {
        const request = searchRequest(query, 10);
        if (request.words.length === 0) continue;
        expect(Array.isArray(await store.search(request))).toBe(true);
      }
      expect(await search("zephyr*")).toContain("Zephyr gateway timeouts");
    });
  });

  describe("a burst of recent notes on one word", () => {
    let burstDir: string;
    let burstStore: SqliteStore;

    beforeAll(async () => {
      burstDir = tempDir("cairn-search-burst-");
      burstStore = new SqliteStore({ dataDir: burstDir, searchMemoryBytes });
      await burstStore.migrate();
      const add = burstStore.sqlite.query(
        "INSERT INTO posts (id, contributor_no, title, body, tags, score, comment_count, created_at) VALUES (?, 1, ?, ?, '[]', 0, 0, ?)",
      );
      burstStore.sqlite.query("INSERT INTO contributors (email, key_prefix, key_digest, active, created_at) VALUES ('t@example.org', 'cairn_tttttt', x'00', 1, 0)").run();
      burstStore.sqlite.transaction(() => {
        let n = 0;
        const note = (title: string, body: string) => add.run(`00000000-0000-7000-8000-${String(++n).padStart(12, "0")}`, title, body, n);
        note("Zephyr gateway timeouts", "The zephyr proxy dropped idle connections.");
        note("Notes on zephyr", "Another zephyr write-up.");
        for (let i = 0; i < 4500; i++) note(`Older note ${i}`, `plain words, number ${i}`);
        // A burst: the newest 2,500 notes all hold "torrent", older ones never do.
        for (let i = 0; i < 2500; i++) note(`Torrent note ${i}`, `torrent of writes, number ${i}`);
      })();
      burstStore.searchIndex.catchUp();
    });

    afterAll(async () => {
      await burstStore.close();
      rmSync(burstDir, { recursive: true, force: true });
    });

    test("does not hide older notes holding a rarer word", async () => {
      const found = await burstStore.search(searchRequest("torrent zephyr", 10));
      expect(found.slice(0, 2).map((note) => note.title).sort()).toEqual(["Notes on zephyr", "Zephyr gateway timeouts"]);
      expect(found.length).toBe(10);
    });
  });
});
