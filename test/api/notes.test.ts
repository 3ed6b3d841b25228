// Notes: creation limits and normalisation, the duplicate guard, fetch, delete,
// the 404/400 rules for ids, and GET /v1/me counts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../helpers/server.ts";
import {
  NEVER_SEEN_ID,
  NO_BREAKERS,
  CREATED_NOTE_KEYS,
  TIMESTAMP,
  UUID_V7,
  call,
  codePoints,
  createNote,
  expectError,
  expectStatus,
  keysOf,
  register,
  unique,
  type Contributor,
} from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";

forEachEngine((engine) => {

  let server: RunningServer;
  let base: string;
  let author: Contributor;
  let reader: Contributor;

  beforeAll(async () => {
    server = await startServer({ engine, env: NO_BREAKERS });
    base = server.url;
    author = await register(base);
    reader = await register(base);
  });

  afterAll(async () => {
    await server?.stop();
  });

  const createRaw = (json: unknown, key = author.key) => call(base, "POST", "/v1/posts", { key, json });

  /** A fresh title so the duplicate guard never interferes. */
  const t = () => `Title ${unique()}`;

  describe("POST /v1/posts: the Note", () => {
    test("201 with exactly the Note fields, normalised", async () => {
      const res = await createRaw({ title: "  Connection pool deadlock  ", body: "Set max_connections lower.", tags: ["Postgres", "pool"] });
      expectStatus(res, 201);
      expect(keysOf(res.data)).toEqual(CREATED_NOTE_KEYS);
      expect(res.data.id).toMatch(UUID_V7);
      expect(res.data.contributor_no).toBe(author.no);
      expect(res.data.title).toBe("Connection pool deadlock");
      expect(res.data.body).toBe("Set max_connections lower.");
      expect(res.data.tags).toEqual(["postgres", "pool"]);
      expect(res.data.score).toBe(0);
      expect(res.data.comment_count).toBe(0);
      expect(res.data.created_at).toMatch(TIMESTAMP);
      expect(Math.abs(Date.parse(res.data.created_at) - Date.now())).toBeLessThan(60_000);
    });

    test("GET /v1/posts/{id} returns the same Note in full, to any contributor", async () => {
      const note = await createNote(base, author.key, { body: "line one\nline two\n\n" + "x".repeat(5000), tags: ["a"] });
      const mine = await call(base, "GET", `/v1/posts/${note.id}`, { key: author.key });
      const theirs = await call(base, "GET", `/v1/posts/${note.id}`, { key: reader.key });
      expectStatus(mine, 200);
      expect(mine.data).toEqual(note);
      expect(theirs.text).toBe(mine.text);
      expect(mine.data.body.length).toBe(note.body.length);
    });

    test("tags are optional: omitted or null gives [] (as `supersedes` takes null)", async () => {
      const note = await createNote(base, author.key, { title: t() });
      expect(note.tags).toEqual([]);
      const empty = await createNote(base, author.key, { title: t(), tags: [] });
      expect(empty.tags).toEqual([]);
      const nulled = await createRaw({ title: t(), body: "b", tags: null });
      expectStatus(nulled, 201);
      expect(nulled.data.tags).toEqual([]);
      expect(expectError(await createRaw({ title: t(), body: "b", tags: "sqlite" }), 400, "invalid_request")).toBe("`tags` must be an array of strings or null.");
    });

    test("unknown request fields are ignored and never echoed", async () => {
      const res = await createRaw({ title: t(), body: "b", tags: ["x"], visibility: "private", limit: 3, extra: { nested: [1, 2] } });
      expectStatus(res, 201);
      expect(keysOf(res.data)).toEqual(CREATED_NOTE_KEYS);
      expect(res.text).not.toContain("visibility");
      expect(res.text).not.toContain("nested");
    });

    test("ids are UUID v7, time-ordered across notes", async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await createNote(base, author.key)).id);
      for (const id of ids) expect(id).toMatch(UUID_V7);
      expect([...ids].sort()).toEqual(ids);
      expect(new Set(ids).size).toBe(5);
      // The first 48 bits are the creation time in milliseconds.
      const ms = parseInt(ids[0].replaceAll("-", "").slice(0, 12), 16);
      expect(Math.abs(ms - Date.now())).toBeLessThan(60_000);
    });
  });

  describe("POST /v1/posts: field limits", () => {
    test("title: missing or not a string is 400 naming the field", async () => {
      expect(expectError(await createRaw({ body: "b" }), 400, "invalid_request")).toContain("title");
      expect(expectError(await createRaw({ title: 5, body: "b" }), 400, "invalid_request")).toContain("title");
      expect(expectError(await createRaw({ title: null, body: "b" }), 400, "invalid_request")).toContain("title");
    });

    test("title: empty or only whitespace is 400", async () => {
      expect(expectError(await createRaw({ title: "", body: "b" }), 400, "invalid_request")).toContain("title");
      expect(expectError(await createRaw({ title: "   \t\n ", body: "b" }), 400, "invalid_request")).toContain("title");
    });

    test("title: 1 character is accepted", async () => {
      const res = await createRaw({ title: "x", body: `one char title ${unique()}` });
      expectStatus(res, 201);
      expect(res.data.title).toBe("x");
    });

    test("title: 200 characters accepted, 201 refused", async () => {
      const at200 = unique("T").padEnd(200, "t");
      expectStatus(await createRaw({ title: at200, body: "b" }), 201);
      const message = expectError(await createRaw({ title: at200 + "t", body: "b" }), 400, "invalid_request");
      expect(message).toContain("title");
      expect(message).toContain("200");
    });

    test("title: the limit applies after trimming", async () => {
      const at200 = unique("P").padEnd(200, "p");
      const res = await createRaw({ title: `   ${at200}   `, body: "b" });
      expectStatus(res, 201);
      expect(res.data.title).toBe(at200);
    });

    test("title: characters are code points (200 emoji accepted, 201 refused)", async () => {
      const emoji = "🦀".repeat(199);
      const title = emoji + unique("").slice(-1);
      expect(codePoints(title)).toBe(200);
      expect(title.length).toBeGreaterThan(200);
      const res = await createRaw({ title, body: "b" });
      expectStatus(res, 201);
      expect(res.data.title).toBe(title);
      expectError(await createRaw({ title: "🦀".repeat(201), body: "b" }), 400, "invalid_request");
    });

    test("body: missing, not a string or empty is 400 naming the field", async () => {
      expect(expectError(await createRaw({ title: t() }), 400, "invalid_request")).toContain("body");
      expect(expectError(await createRaw({ title: t(), body: 12 }), 400, "invalid_request")).toContain("body");
      expect(expectError(await createRaw({ title: t(), body: "" }), 400, "invalid_request")).toContain("body");
      expect(expectError(await createRaw({ title: t(), body: "  \n\t " }), 400, "invalid_request")).toContain("body");
    });

    test("body: 1 character accepted", async () => {
      const res = await createRaw({ title: t(), body: "z" });
      expectStatus(res, 201);
      expect(res.data.body).toBe("z");
    });

    test("body: 20,000 characters accepted and returned complete, 20,001 refused", async () => {
      const at20k = "word ".repeat(4000).slice(0, 19_999) + "!";
      expect(at20k.length).toBe(20_000);
      const res = await createRaw({ title: t(), body: at20k });
      expectStatus(res, 201);
      expect(res.data.body).toBe(at20k);
      const got = await call(base, "GET", `/v1/posts/${res.data.id}`, { key: reader.key });
      expect(got.data.body).toBe(at20k);
      const message = expectError(await createRaw({ title: t(), body: at20k + "!" }), 400, "invalid_request");
      expect(message).toContain("body");
      expect(message).toContain("20000");
    });

    test("body: characters are code points (15,000 emoji + 5,000 letters = 20,000 accepted)", async () => {
      const body = "😀".repeat(15_000) + "a".repeat(5_000);
      expect(codePoints(body)).toBe(20_000);
      expect(body.length).toBe(35_000);
      const res = await createRaw({ title: t(), body });
      expectStatus(res, 201);
      expect(res.data.body).toBe(body);
      expectError(await createRaw({ title: t(), body: body + "a" }), 400, "invalid_request");
    });

    test("tags: at most 8 distinct", async () => {
      const eight = ["a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"];
      const res = await createRaw({ title: t(), body: "b", tags: eight });
      expectStatus(res, 201);
      expect(res.data.tags).toEqual(eight);
      const message = expectError(await createRaw({ title: t(), body: "b", tags: [...eight, "a9"] }), 400, "invalid_request");
      expect(message).toContain("tags");
      expect(message).toContain("8");
    });

    test("tags: duplicates do not count toward the 8 (removed, first order kept)", async () => {
      const res = await createRaw({ title: t(), body: "b", tags: ["a1", "a2", "A1", "a3", "a4", "a2", "a5", "a6", "a7", "a8", "A8"] });
      expectStatus(res, 201);
      expect(res.data.tags).toEqual(["a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"]);
    });

    test("tags: lower-cased, duplicates removed, order kept", async () => {
      const res = await createRaw({ title: t(), body: "b", tags: ["Zeta", "alpha", "ZETA", "Mid", "alpha", "zeta"] });
      expectStatus(res, 201);
      expect(res.data.tags).toEqual(["zeta", "alpha", "mid"]);
    });

    test("tags: each 1 to 32 characters", async () => {
      const at32 = "t".repeat(32);
      const res = await createRaw({ title: t(), body: "b", tags: [at32, "x"] });
      expectStatus(res, 201);
      expect(res.data.tags).toEqual([at32, "x"]);
      const tooLong = expectError(await createRaw({ title: t(), body: "b", tags: ["t".repeat(33)] }), 400, "invalid_request");
      expect(tooLong).toContain("tags");
      expect(tooLong).toContain("32");
      expect(expectError(await createRaw({ title: t(), body: "b", tags: [""] }), 400, "invalid_request")).toContain("tags");
      expect(expectError(await createRaw({ title: t(), body: "b", tags: ["ok", "  "] }), 400, "invalid_request")).toContain("tags");
    });

    test("tags: 32 upper-case letters are accepted (lower-cased), 33 refused", async () => {
      const res = await createRaw({ title: t(), body: "b", tags: ["Q".repeat(32)] });
      expectStatus(res, 201);
      expect(res.data.tags).toEqual(["q".repeat(32)]);
      expectError(await createRaw({ title: t(), body: "b", tags: ["Q".repeat(33)] }), 400, "invalid_request");
    });

    test("tags: every tag matches ^[a-z0-9][a-z0-9._+#-]*$ after lower-casing", async () => {
      for (const valid of [["c++", "c#", "node.js", "snake_case", "x-y"], ["9lives", "a", "0", "k8s.io+x#y-z_w"]]) {
        const res = await createRaw({ title: t(), body: "b", tags: valid });
        expectStatus(res, 201);
        expect(res.data.tags).toEqual(valid);
      }
      const invalidTags = ["-lead", ".dot", "_under", "+plus", "#hash", "two words", "a/b", "a,b", "a:b", "ünïcode", "emoji😀", "tab\tin", "a*", "(x)", "semi;colon", "quote\"d", "é"];
      const accepted: string[] = [];
      for (const tag of invalidTags) {
        const r = await createRaw({ title: t(), body: "b", tags: [tag] });
        if (r.status !== 400) accepted.push(`${tag} -> ${r.status}`);
        else expect(expectError(r, 400, "invalid_request")).toContain("tags");
      }
      expect(accepted).toEqual([]);
    });

    test("tags: not an array of strings is 400", async () => {
      expect(expectError(await createRaw({ title: t(), body: "b", tags: "rust" }), 400, "invalid_request")).toContain("tags");
      expect(expectError(await createRaw({ title: t(), body: "b", tags: [1, 2] }), 400, "invalid_request")).toContain("tags");
      expect(expectError(await createRaw({ title: t(), body: "b", tags: [null] }), 400, "invalid_request")).toContain("tags");
      expect(expectError(await createRaw({ title: t(), body: "b", tags: { a: 1 } }), 400, "invalid_request")).toContain("tags");
    });

    test("a refused note is not stored", async () => {
      const who = await register(base);
      await createRaw({ title: "x".repeat(201), body: "b" }, who.key);
      await createRaw({ title: "ok", body: "b", tags: ["bad tag"] }, who.key);
      await createRaw({ title: "ok", body: "" }, who.key);
      const me = await call(base, "GET", "/v1/me", { key: who.key });
      expect(me.data.post_count).toBe(0);
    });
  });

  describe("duplicate guard (409 duplicate_post)", () => {
    const postCount = async (key: string) => (await call(base, "GET", "/v1/me", { key })).data.post_count as number;

    test("an identical repeat of the latest note is 409 and stores nothing", async () => {
      const who = await register(base);
      const note = { title: "Retry storm fix", body: "Use exponential backoff.", tags: ["retry", "http"] };
      const created = await createRaw(note, who.key);
      expectStatus(created, 201);
      const res = await createRaw(note, who.key);
      const message = expectError(res, 409, "duplicate_post");
      // The answer names the note it repeats, so a client retrying after a timeout finds what it created.
      expect(res.data.error.post_id).toBe(created.data.id);
      expect(message.toLowerCase()).toContain("identical to your last note");
      expect(message.toLowerCase()).toContain("skipped");
      expect(message.toLowerCase()).toContain("do not retry");
      expect(await postCount(who.key)).toBe(1);
      // Again: still 409, still one note.
      expectError(await createRaw(note, who.key), 409, "duplicate_post");
      expect(await postCount(who.key)).toBe(1);
    });

    test("equality is after trimming and tag normalisation (case, duplicates)", async () => {
      const who = await register(base);
      expectStatus(await createRaw({ title: "Same note", body: "Same body.", tags: ["go", "grpc"] }, who.key), 201);
      const variants = [
        { title: "  Same note  ", body: "Same body.", tags: ["go", "grpc"] },
        { title: "Same note", body: "\n Same body. \n", tags: ["go", "grpc"] },
        { title: "Same note", body: "Same body.", tags: ["GO", "gRPC"] },
        { title: "Same note", body: "Same body.", tags: ["go", "grpc", "Go"] },
        { title: "\tSame note", body: "Same body.  ", tags: ["Go", "GRPC", "grpc"] },
      ];
      for (const variant of variants) expectError(await createRaw(variant, who.key), 409, "duplicate_post");
      expect(await postCount(who.key)).toBe(1);
    });

    test("tags: omitted and [] are the same (no tags)", async () => {
      const who = await register(base);
      expectStatus(await createRaw({ title: "No tags", body: "Plain." }, who.key), 201);
      expectError(await createRaw({ title: "No tags", body: "Plain.", tags: [] }, who.key), 409, "duplicate_post");
    });

    test("tag order does not make a repeat new (same tag set)", async () => {
      // Interpretation: tags are a set kept in the author's order; a repeat that
      // only reorders them is the same note to a runaway agent.
      const who = await register(base);
      expectStatus(await createRaw({ title: "Ordered", body: "Tags reordered.", tags: ["alpha", "beta"] }, who.key), 201);
      expectError(await createRaw({ title: "Ordered", body: "Tags reordered.", tags: ["beta", "alpha"] }, who.key), 409, "duplicate_post");
      expect(await postCount(who.key)).toBe(1);
    });

    test("a near-duplicate is 201: one character different, or different tags", async () => {
      const who = await register(base);
      const note = { title: "Near duplicate", body: "The same body.", tags: ["a"] };
      expectStatus(await createRaw(note, who.key), 201);
      expectStatus(await createRaw({ ...note, body: "The same body!" }, who.key), 201);
      expectStatus(await createRaw({ ...note, body: "The same body!", title: "Near duplicatE" }, who.key), 201);
      expectStatus(await createRaw({ ...note, body: "The same body!", title: "Near duplicatE", tags: ["a", "b"] }, who.key), 201);
      expectStatus(await createRaw({ ...note, body: "The same body!", title: "Near duplicatE", tags: [] }, who.key), 201);
      expect(await postCount(who.key)).toBe(5);
    });

    test("only the caller's own latest note counts: another contributor may post the same note", async () => {
      const a = await register(base);
      const b = await register(base);
      const note = { title: "Shared wisdom", body: "Everyone says this." };
      expectStatus(await createRaw(note, a.key), 201);
      expectStatus(await createRaw(note, b.key), 201);
    });

    test("only the LATEST note is compared: A, B, A again is 201", async () => {
      const who = await register(base);
      const a = { title: "Note A", body: "Body A" };
      const b = { title: "Note B", body: "Body B" };
      expectStatus(await createRaw(a, who.key), 201);
      expectStatus(await createRaw(b, who.key), 201);
      expectStatus(await createRaw(a, who.key), 201);
      expectError(await createRaw(a, who.key), 409, "duplicate_post");
      expect(await postCount(who.key)).toBe(3);
    });

    test("the latest EXISTING note is compared: after deleting the latest, the earlier one is the latest", async () => {
      const who = await register(base);
      const a = { title: "Earlier", body: "Earlier body" };
      const b = { title: "Later", body: "Later body" };
      expectStatus(await createRaw(a, who.key), 201);
      const later = await createRaw(b, who.key);
      expectStatus(later, 201);
      expectStatus(await call(base, "DELETE", `/v1/posts/${later.data.id}`, { key: who.key }), 200);
      // A is now the latest existing note: repeating it is a duplicate.
      expectError(await createRaw(a, who.key), 409, "duplicate_post");
      // B no longer exists: posting it again is new.
      expectStatus(await createRaw(b, who.key), 201);
      expect(await postCount(who.key)).toBe(2);
    });

    test("after deleting the only note, the same note can be posted again", async () => {
      const who = await register(base);
      const note = { title: "Only", body: "Only body" };
      const first = await createRaw(note, who.key);
      expectStatus(first, 201);
      expectStatus(await call(base, "DELETE", `/v1/posts/${first.data.id}`, { key: who.key }), 200);
      expectStatus(await createRaw(note, who.key), 201);
    });
  });

  describe("ids: 400 malformed, 404 unknown or deleted (identical)", () => {
    const malformed = [
      "not-a-uuid",
      "1234",
      "01890a5dac96774bbcceb302099a8057",
      "01890a5d-ac96-774b-bcce-b302099a805",
      "01890a5d-ac96-774b-bcce-b302099a80577",
      "01890a5g-ac96-774b-bcce-b302099a8057",
      "{01890a5d-ac96-774b-bcce-b302099a8057}",
      "%20",
      "..%2F..%2Fetc",
      "01890a5d-ac96-774b-bcce-b302099a8057%00",
      "' OR 1=1 --",
    ];

    test("every id route answers 400 invalid_request for a malformed id", async () => {
      const wrong: string[] = [];
      for (const raw of malformed) {
        const id = raw.includes("%") ? raw : encodeURIComponent(raw);
        const answers = [
          await call(base, "GET", `/v1/posts/${id}`, { key: reader.key }),
          await call(base, "GET", `/v1/public/posts/${id}`),
          await call(base, "GET", `/v1/posts/${id}/comments`, { key: reader.key }),
          await call(base, "POST", `/v1/posts/${id}/comments`, { key: reader.key, json: { body: "c" } }),
          await call(base, "POST", `/v1/posts/${id}/vote`, { key: reader.key, json: { vote: "up" } }),
          await call(base, "DELETE", `/v1/posts/${id}`, { key: reader.key }),
        ];
        for (const [i, res] of answers.entries()) {
          if (res.status !== 400 || res.data?.error?.code !== "invalid_request") wrong.push(`${raw} route#${i} -> ${res.status}`);
          else expect(res.data.error.message).toContain("UUID");
        }
      }
      expect(wrong).toEqual([]);
    });

    test("a deleted note answers exactly as a never-seen id on every route", async () => {
      const note = await createNote(base, author.key);
      await call(base, "POST", `/v1/posts/${note.id}/comments`, { key: reader.key, json: { body: "before delete" } });
      await call(base, "POST", `/v1/posts/${note.id}/vote`, { key: reader.key, json: { vote: "up" } });
      expectStatus(await call(base, "DELETE", `/v1/posts/${note.id}`, { key: author.key }), 200);

      const routes = (id: string) =>
        [
          ["GET", `/v1/posts/${id}`, reader.key, undefined],
          ["GET", `/v1/posts/${id}`, author.key, undefined],
          ["GET", `/v1/public/posts/${id}`, undefined, undefined],
          ["GET", `/v1/posts/${id}/comments`, reader.key, undefined],
          ["POST", `/v1/posts/${id}/comments`, reader.key, { body: "after delete" }],
          ["POST", `/v1/posts/${id}/vote`, reader.key, { vote: "up" }],
          ["POST", `/v1/posts/${id}/vote`, author.key, { vote: "down" }],
          ["DELETE", `/v1/posts/${id}`, author.key, undefined],
          ["DELETE", `/v1/posts/${id}`, reader.key, undefined],
        ] as const;
      const deleted = routes(note.id);
      const never = routes(NEVER_SEEN_ID);
      const randomV4 = routes(crypto.randomUUID());
      for (let i = 0; i < deleted.length; i++) {
        const ask = async ([method, path, key, json]: (typeof deleted)[number]) =>
          call(base, method, path, { key, ...(json === undefined ? {} : { json }) });
        const a = await ask(deleted[i]);
        const b = await ask(never[i]);
        const c = await ask(randomV4[i]);
        expectError(a, 404, "not_found");
        expect(a.text).toBe(b.text);
        expect(a.text).toBe(c.text);
        expect(a.text).not.toContain(note.id);
        expect(a.headers.get("content-type")).toBe(b.headers.get("content-type"));
      }
    });

    test("the 404 message says the id was not found", async () => {
      const message = expectError(await call(base, "GET", `/v1/posts/${NEVER_SEEN_ID}`, { key: reader.key }), 404, "not_found");
      expect(message.toLowerCase()).toMatch(/not found|no note/);
    });

    test("an upper-case UUID names the same note", async () => {
      const note = await createNote(base, author.key);
      const res = await call(base, "GET", `/v1/posts/${note.id.toUpperCase()}`, { key: reader.key });
      expectStatus(res, 200);
      expect(res.data.id).toBe(note.id);
    });
  });

  describe("DELETE /v1/posts/{id}", () => {
    test("the author deletes: 200 exactly {deleted: true, id}; the note is gone", async () => {
      const note = await createNote(base, author.key);
      const res = await call(base, "DELETE", `/v1/posts/${note.id}`, { key: author.key });
      expectStatus(res, 200);
      expect(res.data).toEqual({ deleted: true, id: note.id });
      expect(keysOf(res.data)).toEqual(["deleted", "id"]);
      expectError(await call(base, "GET", `/v1/posts/${note.id}`, { key: author.key }), 404, "not_found");
      expectError(await call(base, "DELETE", `/v1/posts/${note.id}`, { key: author.key }), 404, "not_found");
    });

    test("another contributor gets 403 forbidden and the note stays", async () => {
      const note = await createNote(base, author.key);
      const message = expectError(await call(base, "DELETE", `/v1/posts/${note.id}`, { key: reader.key }), 403, "forbidden");
      expect(message.toLowerCase()).toContain("author");
      expect(message.toLowerCase()).toMatch(/retrying will not help|retry/);
      const still = await call(base, "GET", `/v1/posts/${note.id}`, { key: reader.key });
      expectStatus(still, 200);
      expect(still.data).toEqual(note);
    });

    test("an unknown id is 404 not_found", async () => {
      expectError(await call(base, "DELETE", `/v1/posts/${NEVER_SEEN_ID}`, { key: author.key }), 404, "not_found");
    });

    test("a DELETE with a JSON body is still a delete (body ignored)", async () => {
      const note = await createNote(base, author.key);
      const res = await call(base, "DELETE", `/v1/posts/${note.id}`, { key: author.key, json: { reason: "cleanup" } });
      expectStatus(res, 200);
      expect(res.data).toEqual({ deleted: true, id: note.id });
    });
  });

  describe("GET /v1/me", () => {
    test("a new contributor: exact fields, post_count 0, last_posted_at null, no recent posts, search available", async () => {
      const who = await register(base);
      const res = await call(base, "GET", "/v1/me", { key: who.key });
      expectStatus(res, 200);
      expect(keysOf(res.data)).toEqual(["contributor_no", "created_at", "last_posted_at", "post_count", "recent_posts", "search"]);
      expect(res.data.contributor_no).toBe(who.no);
      expect(res.data.created_at).toBe(who.createdAt);
      expect(res.data.post_count).toBe(0);
      expect(res.data.last_posted_at).toBeNull();
      expect(res.data.recent_posts).toEqual([]);
      expect(keysOf(res.data.search)).toEqual(["available", "note"]);
      expect(res.data.search.available).toBe(true);
      expect(typeof res.data.search.note).toBe("string");
      expect(res.data.search.note.length).toBeGreaterThan(5);
    });

    test("counts live notes; recent_posts at most 5, newest first; both drop after deletes", async () => {
      const who = await register(base);
      const notes: Awaited<ReturnType<typeof createNote>>[] = [];
      for (let i = 1; i <= 7; i++) notes.push(await createNote(base, who.key, { title: `Mine ${i}`, body: `Body ${i}` }));
      // Other people's notes never count.
      await createNote(base, reader.key);

      let me = (await call(base, "GET", "/v1/me", { key: who.key })).data;
      expect(me.post_count).toBe(7);
      expect(me.last_posted_at).toBe(notes[6].created_at);
      expect(me.recent_posts).toEqual(
        [7, 6, 5, 4, 3].map((i) => ({ id: notes[i - 1].id, title: `Mine ${i}`, created_at: notes[i - 1].created_at })),
      );
      for (const recent of me.recent_posts) expect(keysOf(recent)).toEqual(["created_at", "id", "title"]);

      // Delete the newest: the count drops and the list moves up.
      expectStatus(await call(base, "DELETE", `/v1/posts/${notes[6].id}`, { key: who.key }), 200);
      me = (await call(base, "GET", "/v1/me", { key: who.key })).data;
      expect(me.post_count).toBe(6);
      expect(me.last_posted_at).toBe(notes[5].created_at);
      expect(me.recent_posts.map((p: any) => p.title)).toEqual(["Mine 6", "Mine 5", "Mine 4", "Mine 3", "Mine 2"]);

      // Delete one in the middle.
      expectStatus(await call(base, "DELETE", `/v1/posts/${notes[3].id}`, { key: who.key }), 200);
      me = (await call(base, "GET", "/v1/me", { key: who.key })).data;
      expect(me.post_count).toBe(5);
      expect(me.recent_posts.map((p: any) => p.title)).toEqual(["Mine 6", "Mine 5", "Mine 3", "Mine 2", "Mine 1"]);

      // Delete the rest: back to nothing.
      for (const i of [0, 1, 2, 4, 5]) expectStatus(await call(base, "DELETE", `/v1/posts/${notes[i].id}`, { key: who.key }), 200);
      me = (await call(base, "GET", "/v1/me", { key: who.key })).data;
      expect(me.post_count).toBe(0);
      expect(me.last_posted_at).toBeNull();
      expect(me.recent_posts).toEqual([]);
    });

    test("fewer than 5 notes: all of them, newest first", async () => {
      const who = await register(base);
      const a = await createNote(base, who.key, { title: "First" });
      const b = await createNote(base, who.key, { title: "Second" });
      const me = (await call(base, "GET", "/v1/me", { key: who.key })).data;
      expect(me.post_count).toBe(2);
      expect(me.last_posted_at).toBe(b.created_at);
      expect(me.recent_posts).toEqual([
        { id: b.id, title: "Second", created_at: b.created_at },
        { id: a.id, title: "First", created_at: a.created_at },
      ]);
    });
  });
});
