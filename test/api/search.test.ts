// POST /v1/search: what it finds, how it ranks, the result shape, snipping,
// the result cap, the query-only rule, length limits and hostile input.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../helpers/server.ts";
import {
  NO_BREAKERS,
  SEARCH_RESULT_KEYS,
  call,
  codePoints,
  createNote,
  expectError,
  expectStatus,
  keysOf,
  register,
  type Contributor,
} from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";

forEachEngine((engine) => {

  let server: RunningServer;
  let base: string;
  let author: Contributor;
  let searcher: Contributor;

  type Note = Awaited<ReturnType<typeof createNote>>;
  const notes: Record<string, Note> = {};

  // A long body of words of varying length: the snip point falls inside a word.
  const LONG_BODY = Array.from({ length: 200 }, (_, i) => ["marmalade", "ox", "tangerine", "fig", "pomegranate", "kiwi"][i % 6] + i).join(" ");
  const AT_400 = ("lorem ipsum " .repeat(40)).slice(0, 399) + "z";

  beforeAll(async () => {
    server = await startServer({ engine, env: NO_BREAKERS });
    base = server.url;
    author = await register(base);
    searcher = await register(base);
    const make = async (name: string, fields: { title: string; body: string; tags?: string[] }) => {
      notes[name] = await createNote(base, author.key, fields);
    };
    await make("titleWord", { title: "Xylophone tuning checklist", body: "Steps to follow before a concert." });
    await make("tagged", { title: "Cluster upgrade notes", body: "Drain nodes first.", tags: ["zorbatag", "ops"] });
    await make("bodyWord", { title: "Misc findings", body: "The quasar cache layer evicts too eagerly." });
    await make("deadlock", { title: "Pool trouble", body: "We hit a deadlock when two workers held the pool." });
    await make("livelocks", { title: "Scheduler trouble", body: "Several livelocks appeared under load." });
    // Ranking: title match created first, body-only match later (recency cannot explain the order).
    await make("quokkaTitle", { title: "Quokka migration guide", body: "How the move went." });
    await make("quokkaBody", { title: "Wildlife survey", body: "We counted one quokka near the river." });
    await make("long", { title: "Snipping sample gnu", body: LONG_BODY });
    await make("at400", { title: "Exactly four hundred gnu", body: AT_400 });
    await make("emojiLong", { title: "Emoji body gnu", body: "🐐 goat ".repeat(120) });
    await make("japanese", { title: "移行メモ", body: "日本語のテキストを検索できるか確かめた。" });
    await make("chinese", { title: "数据库备份", body: "每天晚上自动备份数据库文件。" });
    for (let i = 0; i < 12; i++) {
      await make(`many${i}`, { title: `Marmot sighting ${i}`, body: `Marmot number ${i} was seen.` });
    }
  });

  afterAll(async () => {
    await server?.stop();
  });

  const search = (query: unknown, key = searcher.key) => call(base, "POST", "/v1/search", { key, json: { query } });
  const ids = (res: { data: any }) => (res.data.results as { id: string }[]).map((r) => r.id);

  describe("what search finds", () => {
    test("a title word", async () => {
      const res = await search("xylophone");
      expectStatus(res, 200);
      expect(ids(res)).toEqual([notes.titleWord.id]);
    });

    test("a tag", async () => {
      expect(ids(await search("zorbatag"))).toEqual([notes.tagged.id]);
    });

    test("a body word", async () => {
      expect(ids(await search("quasar"))).toEqual([notes.bodyWord.id]);
    });

    test("case does not matter", async () => {
      expect(ids(await search("QUASAR"))).toEqual([notes.bodyWord.id]);
      expect(ids(await search("XyLoPhOnE"))).toEqual([notes.titleWord.id]);
    });

    test("a stemmed form: `deadlocks` finds `deadlock`, `livelock` finds `livelocks`", async () => {
      expect(ids(await search("deadlocks"))).toEqual([notes.deadlock.id]);
      expect(ids(await search("deadlocked"))).toEqual([notes.deadlock.id]);
      expect(ids(await search("livelock"))).toEqual([notes.livelocks.id]);
    });

    test("several words: a note holding all of them is found", async () => {
      expect(ids(await search("deadlock workers pool"))[0]).toBe(notes.deadlock.id);
    });

    test("a CJK word inside a sentence (no spaces to split on): 日本語 in 日本語のテキスト", async () => {
      expect(ids(await search("日本語"))).toEqual([notes.japanese.id]);
      expect(ids(await search("テキスト"))).toEqual([notes.japanese.id]);
      expect(ids(await search("备份"))).toEqual([notes.chinese.id]);
      expect(ids(await search("数据库"))).toEqual([notes.chinese.id]);
    });

    test("a CJK query that shares characters but no pair with a note finds nothing", async () => {
      const res = await search("本テ");
      expectStatus(res, 200);
      expect(res.data.results).toEqual([]);
    });

    test("a long question keeps its telling words wherever they stand: past 16 words, the rarest are searched", async () => {
      // 16 words in no note, then the one that matters: words in no note take no place.
      const nohits = Array.from({ length: 16 }, (_, i) => `nohit${i}x`).join(" ");
      expect(ids(await search(`${nohits} xylophone`))).toEqual([notes.titleWord.id]);
      // 20 words found in three notes each, then one found in a single note: the first 16 words would miss it.
      const shared = Array.from({ length: 20 }, (_, i) => `shared${i}w`).join(" ");
      for (let i = 0; i < 3; i++) await createNote(base, author.key, { title: `Shared vocabulary ${i}`, body: shared });
      const rare = await createNote(base, author.key, { title: "One of a kind", body: "The rare1word stands here." });
      expect(ids(await search(`${shared} rare1word`))).toContain(rare.id);
    });

    test("no match: 200 with no results", async () => {
      const res = await search("nonexistentwordzzq");
      expectStatus(res, 200);
      expect(res.data).toEqual({ query: "nonexistentwordzzq", results: [] });
    });

    test("a title match ranks above a body-only match", async () => {
      const res = await search("quokka");
      expect(ids(res)).toEqual([notes.quokkaTitle.id, notes.quokkaBody.id]);
    });

    test("a deleted note is no longer found", async () => {
      const gone = await createNote(base, author.key, { title: "Ephemeral wombat", body: "Soon deleted." });
      expect(ids(await search("wombat"))).toEqual([gone.id]);
      expectStatus(await call(base, "DELETE", `/v1/posts/${gone.id}`, { key: author.key }), 200);
      const res = await search("wombat");
      expectStatus(res, 200);
      expect(res.data.results).toEqual([]);
    });

    test("at most 10 results", async () => {
      const res = await search("marmot");
      expectStatus(res, 200);
      expect(res.data.results.length).toBe(10);
      const all = Object.entries(notes).filter(([name]) => name.startsWith("many")).map(([, n]) => n.id);
      for (const id of ids(res)) expect(all).toContain(id);
      expect(new Set(ids(res)).size).toBe(10);
    });
  });

  describe("the result shape", () => {
    test("response is exactly {query, results}; each result has exactly the Note fields plus body_truncated", async () => {
      const res = await search("xylophone");
      expect(keysOf(res.data)).toEqual(["query", "results"]);
      expect(res.data.query).toBe("xylophone");
      const [result] = res.data.results;
      expect(keysOf(result)).toEqual(SEARCH_RESULT_KEYS);
      for (const banned of ["rank", "similarity", "up", "down", "ups", "downs", "bm25", "email"]) expect(result).not.toHaveProperty(banned);
      expect(result).toEqual({ ...notes.titleWord, body_truncated: false });
    });

    test("the score is the net score and comment_count is current", async () => {
      const voter = await register(base);
      await call(base, "POST", `/v1/posts/${notes.bodyWord.id}/vote`, { key: voter.key, json: { vote: "up" } });
      await call(base, "POST", `/v1/posts/${notes.bodyWord.id}/vote`, { key: searcher.key, json: { vote: "down" } });
      await call(base, "POST", `/v1/posts/${notes.bodyWord.id}/vote`, { key: voter.key, json: { vote: "up" } });
      await call(base, "POST", `/v1/posts/${notes.bodyWord.id}/comments`, { key: voter.key, json: { body: "seen" } });
      const [result] = (await search("quasar")).data.results;
      expect(result.score).toBe(0);
      expect(result.comment_count).toBe(1);
      expect(result).not.toHaveProperty("up");
      expect(result).not.toHaveProperty("down");
    });

    test("a long body is snipped to at most 400 characters at a word boundary, body_truncated true", async () => {
      const res = await search("snipping");
      const [result] = res.data.results;
      expect(result.id).toBe(notes.long.id);
      expect(result.body_truncated).toBe(true);
      expect(codePoints(result.body)).toBeLessThanOrEqual(400);
      expect(codePoints(result.body)).toBeGreaterThan(300);
      expect(LONG_BODY.startsWith(result.body)).toBe(true);
      // Cut at a word boundary: the original continues with whitespace, and no word is cut.
      expect(LONG_BODY[result.body.length]).toMatch(/\s/);
      expect(result.body).not.toMatch(/\s$/);
      const words = new Set(LONG_BODY.split(" "));
      for (const word of result.body.split(" ")) expect(words.has(word)).toBe(true);
      // The full fetch still has the whole body.
      const full = await call(base, "GET", `/v1/posts/${result.id}`, { key: searcher.key });
      expect(full.data.body).toBe(LONG_BODY);
    });

    test("a body of exactly 400 characters is untouched, body_truncated false", async () => {
      expect(AT_400.length).toBe(400);
      const result = (await search("four hundred")).data.results.find((r: any) => r.id === notes.at400.id);
      expect(result.body).toBe(AT_400);
      expect(result.body_truncated).toBe(false);
    });

    test("a short body is untouched, body_truncated false", async () => {
      const [result] = (await search("quasar")).data.results;
      expect(result.body).toBe(notes.bodyWord.body);
      expect(result.body_truncated).toBe(false);
    });

    test("snipping counts code points and never splits an emoji", async () => {
      const [result] = (await search("emoji")).data.results;
      expect(result.id).toBe(notes.emojiLong.id);
      expect(result.body_truncated).toBe(true);
      expect(codePoints(result.body)).toBeLessThanOrEqual(400);
      expect(codePoints(result.body)).toBeGreaterThan(300);
      expect(notes.emojiLong.body.startsWith(result.body)).toBe(true);
      expect(result.body).not.toMatch(/[\ud800-\udbff]$/);
      // Whole words only: the original continues with whitespace right after the snip.
      expect(notes.emojiLong.body[result.body.length]).toMatch(/\s/);
    });
  });

  describe("query rules", () => {
    test("any field besides query is 400 saying search takes only a query and the server decides the count", async () => {
      const extras = [{ limit: 5 }, { offset: 10 }, { k: 3 }, { count: 20 }, { ranking: "score" }, { similarity: 0.5 }, { tags: ["x"] }];
      for (const extra of extras) {
        const res = await call(base, "POST", "/v1/search", { key: searcher.key, json: { query: "quasar", ...extra } });
        const message = expectError(res, 400, "invalid_request");
        expect(message.toLowerCase()).toContain("only");
        expect(message).toContain("query");
        expect(message.toLowerCase()).toContain("server decides");
        expect(message.toLowerCase()).toContain("how many results");
      }
    });

    test("query missing or not a string is 400 naming the field", async () => {
      expect(expectError(await call(base, "POST", "/v1/search", { key: searcher.key, json: {} }), 400, "invalid_request")).toContain("query");
      for (const bad of [42, null, true, ["quasar"], { q: "quasar" }]) {
        expect(expectError(await search(bad), 400, "invalid_request")).toContain("query");
      }
    });

    test("query: empty or whitespace-only is 400", async () => {
      expect(expectError(await search(""), 400, "invalid_request")).toContain("query");
      expect(expectError(await search("   \t\n"), 400, "invalid_request")).toContain("query");
    });

    test("query: 1 character accepted, 500 accepted, 501 refused", async () => {
      expectStatus(await search("q"), 200);
      const at500 = ("quasar " .repeat(72)).slice(0, 499) + "x";
      expect(at500.length).toBe(500);
      expectStatus(await search(at500), 200);
      const message = expectError(await search(at500 + "x"), 400, "invalid_request");
      expect(message).toContain("query");
      expect(message).toContain("500");
    });

    test("query: characters are code points (500 emoji accepted, 501 refused)", async () => {
      expectStatus(await search("🔍".repeat(500)), 200);
      expectError(await search("🔍".repeat(501)), 400, "invalid_request");
    });

    test("query: the limit applies after trimming", async () => {
      const padded = `   ${"a".repeat(500)}   `;
      expectStatus(await search(padded), 200);
    });

    test("no key is 401", async () => {
      expectError(await call(base, "POST", "/v1/search", { json: { query: "quasar" } }), 401, "unauthorized");
    });
  });

  describe("hostile queries", () => {
    const hostile: string[] = [
      '"',
      '""',
      '"unterminated',
      "'",
      "*",
      "quasar*",
      "*quasar",
      ":",
      "title:quasar",
      "body:",
      "-",
      "-quasar",
      "--",
      "NEAR",
      "NEAR(quasar cache)",
      "NEAR(quasar cache, 2)",
      "AND",
      "OR",
      "NOT",
      "quasar AND",
      "AND quasar",
      "quasar OR OR cache",
      "NOT quasar",
      "(",
      ")",
      "(quasar",
      "quasar)",
      "((()))",
      "^",
      "^quasar",
      "{}",
      "{title body}: quasar",
      "[",
      "]",
      "+",
      "\\",
      "\\\\\"",
      "%",
      "_",
      "😀",
      "🦀 quasar 🦀",
      "👨‍👩‍👧‍👦",
      "x".repeat(500),
      "q".repeat(499) + "*",
      "\u0000",
      "quasar\u0000cache",
      "\ud800",
      "\udfff quasar \ud800",
      "مرحبا بالعالم",
      "\u202equasar\u202c",
      "שלום quasar",
      "'; DROP TABLE posts; --",
      "\" OR 1=1 --",
      "1; SELECT * FROM contributors",
      "') UNION SELECT email FROM contributors --",
      "!@#$%^&*()",
      ".,;:!?",
      "~`|<>/",
      "<script>alert(1)</script>",
      "\n\r\t quasar",
      "quasar\u200b",
      "ﬁ ligature",
      "İstanbul",
      "Ǆ ß ẞ",
      "e\u0301",
      "\uFEFF",
      "quasar ".repeat(71).trim(),
      "a b c d e f g h i j k l m n o p q r s t u v w x y z",
      "rowid",
      "posts_fts",
      "search_fts",
      "t3 : quasar",
      "{t0 t1}: quasar",
      "MATCH",
      "bm25(posts_fts)",
    ];

    test(`${hostile.length} hostile strings: 200 or a length 400, never 5xx`, async () => {
      expect(hostile.length).toBeGreaterThanOrEqual(30);
      const wrong: string[] = [];
      for (const query of hostile) {
        const res = await search(query);
        // Every string above is 1..500 characters; only one that trims to nothing may be refused (length rule).
        const expected = query.trim().length === 0 ? 400 : 200;
        if (res.status !== expected) {
          wrong.push(`${JSON.stringify(query).slice(0, 60)} -> ${res.status} ${res.text.slice(0, 120)}`);
        } else if (expected === 200) {
          expect(keysOf(res.data)).toEqual(["query", "results"]);
          expect(Array.isArray(res.data.results)).toBe(true);
          expect(res.data.results.length).toBeLessThanOrEqual(10);
        } else {
          expect(expectError(res, 400, "invalid_request")).toContain("query");
        }
      }
      expect(wrong).toEqual([]);
      // The server still answers normally.
      expect(ids(await search("quasar"))).toEqual([notes.bodyWord.id]);
      expectStatus(await call(base, "GET", "/v1/healthz"), 200);
    });

    test("search syntax characters are treated as words", async () => {
      for (const query of ['"quasar"', "quasar*", "title:quasar", "-quasar", "(quasar)", "^quasar", "{quasar}", "NEAR(quasar)", "quasar AND", "NOT quasar"]) {
        const res = await search(query);
        expectStatus(res, 200);
        expect(ids(res)).toContain(notes.bodyWord.id);
      }
      // NOT is a word, not an operator: "quasar NOT cache" must not exclude the note holding both.
      const res = await search("quasar NOT cache");
      expectStatus(res, 200);
      expect(ids(res)).toContain(notes.bodyWord.id);
    });

    test("raw bytes that are not valid UTF-8 inside the JSON string never cause a 5xx", async () => {
      const bytes = Buffer.concat([Buffer.from('{"query":"quasar '), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('"}')]);
      const res = await call(base, "POST", "/v1/search", {
        key: searcher.key,
        raw: bytes,
        headers: { "content-type": "application/json" },
      });
      expect(res.status).toBe(200);
      expect(ids(res)).toContain(notes.bodyWord.id);
    });

    test("hostile text stored in notes is searchable and returned verbatim", async () => {
      const title = `"NEAR(" AND * : - ^ {x} 🦀 \u202eevil gnat`;
      const body = "'; DROP TABLE posts; -- \u0000 zero byte gnat";
      const note = await createNote(base, author.key, { title, body });
      const res = await search("gnat");
      expectStatus(res, 200);
      const hit = res.data.results.find((r: any) => r.id === note.id);
      expect(hit.title).toBe(title);
      expect(hit.body).toBe(body);
      const full = await call(base, "GET", `/v1/posts/${note.id}`, { key: searcher.key });
      expect(full.data.title).toBe(title);
      expect(full.data.body).toBe(body);
    });
  });
});
