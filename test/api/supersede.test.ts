// Superseding a note (shared/API.md, "Extensions, round 3", "Superseding a
// note"): POST /v1/posts {"supersedes"}, the Note's supersedes/superseded_by,
// search never returning a superseded note (on SQLite both search paths), the
// delete cases, the errors in their order, races between two servers on one
// database, and the note page's one permitted link.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type Engine, type RunningServer } from "../helpers/server.ts";
import {
  NEVER_SEEN_ID,
  NO_BREAKERS,
  CREATED_NOTE_KEYS,
  NOTE_KEYS,
  SEARCH_RESULT_KEYS,
  call,
  createNote,
  expectError,
  expectStatus,
  keysOf,
  rawHttp,
  register,
  unique,
  type Contributor,
} from "../helpers/api.ts";
import { testEngines } from "../helpers/engines.ts";

/** Every engine, and on SQLite both search paths: the in-memory postings and the FTS5 index alone. */
type Variant = { engine: Engine; name: string; env: Record<string, string> };
const variants: Variant[] = testEngines().flatMap((engine): Variant[] =>
  engine === "sqlite"
    ? [
        { engine, name: "sqlite", env: {} },
        { engine, name: "sqlite, FTS5 index alone (SEARCH_MEMORY_MB=0)", env: { SEARCH_MEMORY_MB: "0" } },
      ]
    : [{ engine, name: engine, env: {} }],
);

for (const variant of variants) describe(variant.name, () => {
  let server: RunningServer;
  /** A second server on the same database (races between processes). */
  let second: RunningServer;
  let base: string;
  let author: Contributor;
  let other: Contributor;

  beforeAll(async () => {
    server = await startServer({ engine: variant.engine, env: { ...NO_BREAKERS, ...variant.env } });
    second =
      variant.engine === "sqlite"
        ? await startServer({ env: { ...NO_BREAKERS, ...variant.env }, dataDir: server.dataDir })
        : await startServer({ engine: "postgres", env: { ...NO_BREAKERS, ...variant.env, DATABASE_URL: server.databaseUrl! } });
    base = server.url;
    author = await register(base);
    other = await register(base);
  });

  afterAll(async () => {
    await second?.stop();
    await server?.stop();
  });

  const post = (json: Record<string, unknown>, key = author.key, at = base) => call(at, "POST", "/v1/posts", { key, json });
  /**
   * The ids the second server's search answers: on SQLite at once (every search reads the log first); a PostgreSQL
   * replica follows another's writes within a second (docs/design.md, "Search"), so it is asked until it agrees.
   */
  const secondSearch = async (query: string, expected: string[]): Promise<string[]> => {
    const deadline = performance.now() + (variant.engine === "sqlite" ? 0 : 1_000);
    for (;;) {
      const res = await call(second.url, "POST", "/v1/search", { key: other.key, json: { query } });
      const ids = res.data.results.map((r: { id: string }) => r.id);
      if (Bun.deepEquals(ids, expected) || performance.now() >= deadline) return ids;
      await Bun.sleep(20);
    }
  };
  const get = (id: string) => call(base, "GET", `/v1/posts/${id}`, { key: other.key });
  const getPublic = (id: string) => call(base, "GET", `/v1/public/posts/${id}`);
  const search = async (query: string) => {
    const res = await call(base, "POST", "/v1/search", { key: other.key, json: { query } });
    expectStatus(res, 200);
    return res.data.results as { id: string; supersedes: string | null; superseded_by: string | null }[];
  };
  const searchIds = async (query: string) => (await search(query)).map((r) => r.id);
  const postCount = async (key = author.key) => (await call(base, "GET", "/v1/me", { key })).data.post_count as number;
  /** An older note and the note that supersedes it, both holding the word `word`. */
  const pair = async (word = unique("w")) => {
    const older = await createNote(base, author.key, { title: `Old ${word}`, body: `The old way to do ${word}.` });
    const res = await post({ title: `New ${word}`, body: `The new way to do ${word}.`, supersedes: older.id });
    expectStatus(res, 201);
    return { word, older, newer: res.data as typeof older };
  };

  describe("POST /v1/posts with supersedes", () => {
    test("201: the new note names the older in `supersedes`; the older names the newer in `superseded_by` (keyed and public)", async () => {
      const { older, newer } = await pair();
      // The 201 answer: the Note plus `similar`, which never lists the note it supersedes.
      expect(keysOf(newer)).toEqual(CREATED_NOTE_KEYS);
      expect(((newer as { similar?: { id: string }[] }).similar ?? []).map((s) => s.id)).not.toContain(older.id);
      expect(newer.supersedes).toBe(older.id);
      expect(newer.superseded_by).toBeNull();
      for (const res of [await get(older.id), await getPublic(older.id)]) {
        expectStatus(res, 200);
        expect(keysOf(res.data)).toEqual(NOTE_KEYS);
        expect(res.data).toMatchObject({ id: older.id, title: older.title, body: older.body, supersedes: null, superseded_by: newer.id });
      }
      for (const res of [await get(newer.id), await getPublic(newer.id)]) {
        expect(res.data).toMatchObject({ id: newer.id, supersedes: older.id, superseded_by: null });
      }
    });

    test("every Note answer carries both fields, null when unset: created, fetched, public, and search results", async () => {
      const word = unique("plain");
      const note = await createNote(base, author.key, { title: `Plain ${word}`, body: "Nothing replaced." });
      expect(note.supersedes).toBeNull();
      expect(note.superseded_by).toBeNull();
      expect((await get(note.id)).data).toMatchObject({ supersedes: null, superseded_by: null });
      expect((await getPublic(note.id)).data).toMatchObject({ supersedes: null, superseded_by: null });
      const [result] = await search(word);
      expect(keysOf(result)).toEqual(SEARCH_RESULT_KEYS);
      expect(result).toMatchObject({ id: note.id, supersedes: null, superseded_by: null });
    });

    test("a search result of a superseding note names the note it replaced", async () => {
      const { word, older, newer } = await pair();
      const results = await search(word);
      expect(results.map((r) => r.id)).toEqual([newer.id]);
      expect(results[0]).toMatchObject({ supersedes: older.id, superseded_by: null });
    });

    test("`supersedes` absent or null: an ordinary note", async () => {
      const res = await post({ title: `T ${unique()}`, body: "b", supersedes: null });
      expectStatus(res, 201);
      expect(res.data.supersedes).toBeNull();
    });

    test("an upper-case id names the same note (answered lower-case)", async () => {
      const older = await createNote(base, author.key);
      const res = await post({ title: `T ${unique()}`, body: "b", supersedes: older.id.toUpperCase() });
      expectStatus(res, 201);
      expect(res.data.supersedes).toBe(older.id);
      expect((await get(older.id)).data.superseded_by).toBe(res.data.id);
    });
  });

  test("the OpenAPI document states the request field, the Note's two fields and the 403/404/409 answers", async () => {
    const doc = (await call(base, "GET", "/v1/openapi.json")).data;
    const op = doc.paths["/v1/posts"].post;
    expect(op.requestBody.content["application/json"].schema.properties.supersedes.description).toContain("already_superseded");
    const note = op.responses["201"].content["application/json"].schema;
    expect(note.required).toEqual(expect.arrayContaining(["supersedes", "superseded_by"]));
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["403", "404", "409"]));
    const conflict = JSON.stringify(op.responses["409"].content["application/json"].schema.properties.error.properties.code);
    expect(conflict).toContain('"duplicate_post"');
    expect(conflict).toContain('"already_superseded"');
    const search = doc.paths["/v1/search"].post.responses["200"].content["application/json"].schema;
    expect(search.properties.results.items.required).toEqual(expect.arrayContaining(["supersedes", "superseded_by"]));
  });

  describe("a superseded note", () => {
    test("keeps its votes and comments, and can still be voted on and commented", async () => {
      const older = await createNote(base, author.key, { title: `Voted ${unique()}` });
      expectStatus(await call(base, "POST", `/v1/posts/${older.id}/vote`, { key: other.key, json: { vote: "up" } }), 200);
      expectStatus(await call(base, "POST", `/v1/posts/${older.id}/comments`, { key: other.key, json: { body: "This helped." } }), 201);
      expectStatus(await post({ title: `Replacement ${unique()}`, body: "b", supersedes: older.id }), 201);
      const after = (await get(older.id)).data;
      expect(after).toMatchObject({ score: 1, comment_count: 1 });
      const comments = await call(base, "GET", `/v1/posts/${older.id}/comments`, { key: other.key });
      expect(comments.data.comments.map((c: { body: string }) => c.body)).toEqual(["This helped."]);
      const third = await register(base);
      const vote = await call(base, "POST", `/v1/posts/${older.id}/vote`, { key: third.key, json: { vote: "up" } });
      expectStatus(vote, 200);
      expect(vote.data.score).toBe(2);
      expectStatus(await call(base, "POST", `/v1/posts/${older.id}/comments`, { key: third.key, json: { body: "Still true for v1." } }), 201);
    });

    test("never appears in search; the newer note does", async () => {
      const { word, older, newer } = await pair();
      const ids = await searchIds(word);
      expect(ids).toEqual([newer.id]);
      expect(ids).not.toContain(older.id);
      // Words only the older note holds find nothing.
      expect(await searchIds(`old ${word}`)).toEqual([newer.id]);
    });

    test("stays out of search when the other server searches (another process; a PostgreSQL replica within a second)", async () => {
      const { word, newer } = await pair();
      expect(await secondSearch(word, [newer.id])).toEqual([newer.id]);
    });

    test("the public HTML page says \"superseded by\" with the newer note's URL, its only link to a note", async () => {
      const { older, newer } = await pair();
      const page = await call(base, "GET", `/v1/public/posts/${older.id}`, { headers: { accept: "text/html" } });
      expectStatus(page, 200);
      expect(page.text).toContain("superseded by");
      const hrefs = [...page.text.matchAll(/href\s*=\s*["']?([^"' >]+)/gi)].map((m) => m[1]);
      // A path the browser resolves: without PUBLIC_BASE_URL the page never names a host (the Host header may be forged).
      expect(hrefs.filter((href) => /\/v1\/|[0-9a-f]{8}-/.test(href))).toEqual([`/v1/public/posts/${newer.id}`]);
      const forged = await rawHttp(base, [`GET /v1/public/posts/${older.id} HTTP/1.1`, "Host: evil.example", "Accept: text/html", "Connection: close", "", ""].join("\r\n"));
      expect(forged.status).toBe(200);
      expect(forged.body).toContain(`href="/v1/public/posts/${newer.id}"`);
      expect(forged.body).not.toContain("evil.example");
      // The newer note's page (not superseded) carries no such link.
      const current = await call(base, "GET", `/v1/public/posts/${newer.id}`, { headers: { accept: "text/html" } });
      expect(current.text).not.toContain("superseded by");
      expect(current.text).not.toMatch(/<a\s/i);
    });
  });

  describe("deletes", () => {
    test("deleting the newer note puts the older back into search, and its superseded_by becomes null", async () => {
      const { word, older, newer } = await pair();
      expectStatus(await call(base, "DELETE", `/v1/posts/${newer.id}`, { key: author.key }), 200);
      expect((await get(older.id)).data.superseded_by).toBeNull();
      expect((await getPublic(older.id)).data.superseded_by).toBeNull();
      expect(await searchIds(word)).toEqual([older.id]);
      // Found by the other server too.
      expect(await secondSearch(word, [older.id])).toEqual([older.id]);
      // And it may be superseded again.
      expectStatus(await post({ title: `Again ${word}`, body: "b", supersedes: older.id }), 201);
    });

    test("deleting the older note leaves no trace: the newer note's supersedes becomes null", async () => {
      const { word, older, newer } = await pair();
      expectStatus(await call(base, "DELETE", `/v1/posts/${older.id}`, { key: author.key }), 200);
      expectError(await get(older.id), 404, "not_found");
      expect((await get(newer.id)).data.supersedes).toBeNull();
      expect((await search(word))[0]).toMatchObject({ id: newer.id, supersedes: null });
    });

    test("a chain A <- B <- C: deleting B puts A back into search and C no longer names B", async () => {
      const word = unique("chain");
      const a = await createNote(base, author.key, { title: `A ${word}`, body: `First ${word}.` });
      const b = (await post({ title: `B ${word}`, body: `Second ${word}.`, supersedes: a.id })).data;
      const c = (await post({ title: `C ${word}`, body: `Third ${word}.`, supersedes: b.id })).data;
      expect(await searchIds(word)).toEqual([c.id]);
      expectStatus(await call(base, "DELETE", `/v1/posts/${b.id}`, { key: author.key }), 200);
      expect((await get(a.id)).data).toMatchObject({ supersedes: null, superseded_by: null });
      expect((await get(c.id)).data).toMatchObject({ supersedes: null, superseded_by: null });
      expect((await searchIds(word)).sort()).toEqual([a.id, c.id].sort());
    });

    test("the superseded note can be deleted by its author only (403 for others), like any note", async () => {
      const { older } = await pair();
      expectError(await call(base, "DELETE", `/v1/posts/${older.id}`, { key: other.key }), 403, "forbidden");
      expectStatus(await get(older.id), 200);
    });
  });

  describe("errors (nothing is stored)", () => {
    test("400 for a malformed id, naming the field", async () => {
      const before = await postCount();
      for (const bad of ["nope", "12345", `${NEVER_SEEN_ID}x`, ""]) {
        const message = expectError(await post({ title: `T ${unique()}`, body: "b", supersedes: bad }), 400, "invalid_request");
        expect(message).toContain("supersedes");
      }
      for (const bad of [42, true, ["x"], { id: NEVER_SEEN_ID }]) {
        expect(expectError(await post({ title: `T ${unique()}`, body: "b", supersedes: bad }), 400, "invalid_request")).toContain("supersedes");
      }
      expect(await postCount()).toBe(before);
    });

    test("404 not_found when the target does not exist, or was deleted", async () => {
      const before = await postCount();
      expectError(await post({ title: `T ${unique()}`, body: "b", supersedes: NEVER_SEEN_ID }), 404, "not_found");
      const gone = await createNote(base, author.key);
      expectStatus(await call(base, "DELETE", `/v1/posts/${gone.id}`, { key: author.key }), 200);
      expectError(await post({ title: `T ${unique()}`, body: "b", supersedes: gone.id }), 404, "not_found");
      expect(await postCount()).toBe(before);
    });

    test("403 forbidden when the target is another contributor's note", async () => {
      const theirs = await createNote(base, other.key);
      const before = await postCount();
      expectError(await post({ title: `T ${unique()}`, body: "b", supersedes: theirs.id }), 403, "forbidden");
      expect(await postCount()).toBe(before);
      expect((await get(theirs.id)).data.superseded_by).toBeNull();
    });

    test("409 already_superseded with error.post_id naming the note that superseded it", async () => {
      const { older, newer } = await pair();
      const before = await postCount();
      const res = await post({ title: `T ${unique()}`, body: "b", supersedes: older.id });
      expectError(res, 409, "already_superseded");
      expect(res.data.error.post_id).toBe(newer.id);
      expect(await postCount()).toBe(before);
      // Superseding the winner instead works.
      expectStatus(await post({ title: `T ${unique()}`, body: "b", supersedes: newer.id }), 201);
    });

    test("the duplicate rule applies first: an identical repeat of the latest note is 409 duplicate_post whatever `supersedes` says", async () => {
      const latest = await createNote(base, author.key, { title: `Dup ${unique()}`, body: "same" });
      const theirs = await createNote(base, other.key);
      for (const supersedes of [NEVER_SEEN_ID, theirs.id, latest.id]) {
        const res = await post({ title: latest.title, body: "same", supersedes });
        expectError(res, 409, "duplicate_post");
        expect(res.data.error.post_id).toBe(latest.id);
      }
      const { older, newer } = await pair();
      const res = await post({ title: newer.title, body: newer.body, supersedes: older.id });
      expectError(res, 409, "duplicate_post");
      expect(res.data.error.post_id).toBe(newer.id);
    });
  });

  describe("races", () => {
    test("ten notes racing (over two servers) to supersede one: one wins, the others get 409 already_superseded naming the winner", async () => {
      for (let round = 0; round < 3; round++) {
        const older = await createNote(base, author.key);
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) => post({ title: `Racer ${i} ${unique()}`, body: `b${i}`, supersedes: older.id }, author.key, i % 2 ? second.url : base)),
        );
        const won = answers.filter((res) => res.status === 201);
        expect(won).toHaveLength(1);
        const winner = won[0].data.id as string;
        for (const res of answers.filter((r) => r.status !== 201)) {
          expectError(res, 409, "already_superseded");
          expect(res.data.error.post_id).toBe(winner);
        }
        expect((await get(older.id)).data.superseded_by).toBe(winner);
      }
    });

    test("racing a supersede with deleting its target: either the note is stored and names it, or it is refused with 404", async () => {
      for (let round = 0; round < 3; round++) {
        const word = unique("race");
        const older = await createNote(base, author.key, { title: `Old ${word}` });
        const [created, deleted] = await Promise.all([
          post({ title: `New ${word}`, body: "b", supersedes: older.id }, author.key, second.url),
          call(base, "DELETE", `/v1/posts/${older.id}`, { key: author.key }),
        ]);
        expectStatus(deleted, 200);
        if (created.status === 201) {
          // Created first, then the older note was deleted: no trace of it remains.
          expect((await get(created.data.id)).data.supersedes).toBeNull();
          expect(await searchIds(word)).toEqual([created.data.id]);
        } else {
          expectError(created, 404, "not_found");
          expect(await searchIds(word)).toEqual([]);
        }
      }
    });
  });
});
