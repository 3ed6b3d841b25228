// Issue 19, point 2: GET /v1/me/posts, looped over every engine: 50 a page,
// newest first, an opaque cursor, and pages that never repeat or skip an
// older note while the same contributor writes and deletes meanwhile.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { call, createNote, expectError, expectStatus, inBatches, keysOf, NO_BREAKERS, register, TIMESTAMP, type Contributor } from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";
import { startServer, type RunningServer } from "../helpers/server.ts";

const FIELDS = ["comment_count", "created_at", "id", "score", "superseded_by", "supersedes", "tags", "title"];

forEachEngine((engine) => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ engine, env: NO_BREAKERS });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  const page = (who: Contributor, cursor?: string) =>
    call(server.url, "GET", `/v1/me/posts${cursor === undefined ? "" : `?cursor=${encodeURIComponent(cursor)}`}`, { key: who.key });

  test("pages through 1,000 notes of one contributor while the same contributor writes and deletes: no repeat, no skipped older note", async () => {
    const author = await register(server.url);
    // One at a time, so creation order is also the order of the note's row keys and times.
    const initial = await inBatches(1_000, 1, (i) => createNote(server.url, author.key, { title: `Mine ${i}`, body: `Note number ${i}.`, tags: ["paging"] }));
    const deleted = new Set<string>();
    const written = new Set<string>();
    // Another client of the same contributor, running while the pages are read: a new note, then a delete of an older one.
    let paging = true;
    const writer = (async () => {
      let n = 0;
      while (paging) {
        written.add((await createNote(server.url, author.key, { title: `Meanwhile ${n}`, body: `Written while paging ${n}.` })).id);
        const victim = initial[(n * 37) % initial.length].id;
        if (!deleted.has(victim)) {
          deleted.add(victim);
          expectStatus(await call(server.url, "DELETE", `/v1/posts/${victim}`, { key: author.key }), 200);
        }
        n++;
      }
    })();

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    try {
      do {
        const res = await page(author, cursor);
        expectStatus(res, 200);
        expect(keysOf(res.data)).toEqual(["next", "posts"]);
        if (res.data.next !== null) expect(res.data.posts).toHaveLength(50);
        seen.push(...res.data.posts.map((p: { id: string }) => p.id));
        cursor = res.data.next ?? undefined;
        pages++;
        await Bun.sleep(5); // let the writer interleave
      } while (cursor !== undefined);
    } finally {
      paging = false;
      await writer;
    }
    expect(new Set(seen).size).toBe(seen.length);
    const seenSet = new Set(seen);
    // Every older note that was not deleted meanwhile is listed.
    const missing = initial.filter((note) => !deleted.has(note.id) && !seenSet.has(note.id));
    expect(missing).toEqual([]);
    expect(deleted.size).toBeGreaterThan(0);
    expect(written.size).toBeGreaterThan(0);
    expect(pages).toBeGreaterThanOrEqual(Math.ceil((1_000 - deleted.size) / 50));
    // Newest first: the initial notes that were listed come in the reverse of their creation order.
    const order = new Map(initial.map((note, i) => [note.id, i]));
    const listedInitial = seen.filter((id) => order.has(id)).map((id) => order.get(id)!);
    expect(listedInitial).toEqual([...listedInitial].sort((x, y) => y - x));
  }, 120_000);

  test("the fields of the contract, only the caller's notes, and an empty last page", async () => {
    const author = await register(server.url);
    const other = await register(server.url);
    expect((await page(author)).data).toEqual({ posts: [], next: null });
    const note = await createNote(server.url, author.key, { tags: ["b", "a"] });
    await createNote(server.url, other.key);
    expectStatus(await call(server.url, "POST", `/v1/posts/${note.id}/vote`, { key: other.key, json: { vote: "up" } }), 200);
    expectStatus(await call(server.url, "POST", `/v1/posts/${note.id}/comments`, { key: other.key, json: { body: "hi" } }), 201);
    const res = await page(author);
    expect(res.data.next).toBeNull();
    expect(res.data.posts).toHaveLength(1);
    const [listed] = res.data.posts;
    expect(keysOf(listed)).toEqual(FIELDS);
    expect(listed).toMatchObject({ id: note.id, title: note.title, tags: note.tags, score: 1, comment_count: 1, supersedes: null, superseded_by: null });
    expect(listed.created_at).toMatch(TIMESTAMP);
  });

  test("exactly 50 notes: one page with next null; 51: two pages", async () => {
    const author = await register(server.url);
    await inBatches(50, 10, (i) => createNote(server.url, author.key, { title: `Fifty ${i}` }));
    const first = await page(author);
    expect(first.data.posts).toHaveLength(50);
    expect(first.data.next).toBeNull();
    await createNote(server.url, author.key, { title: "Fifty-one" });
    const again = await page(author);
    expect(again.data.posts[0].title).toBe("Fifty-one");
    expect(typeof again.data.next).toBe("string");
    const last = await page(author, again.data.next);
    expect(last.data.posts).toHaveLength(1);
    expect(last.data.next).toBeNull();
  });

  test("a malformed cursor is 400; no key is 401", async () => {
    const author = await register(server.url);
    for (const bad of ["", "abc", "c1.", "c1.!!", "c1.MA", `c1.${Buffer.from("-5").toString("base64url")}`, `c1.${Buffer.from("99999999999999999999").toString("base64url")}`, "c1.MTI=x"]) {
      expectError(await page(author, bad), 400, "invalid_request");
    }
    expectError(await call(server.url, "GET", "/v1/me/posts"), 401, "unauthorized");
  });

  test("unknown query parameters are ignored, as unknown body fields are", async () => {
    const author = await register(server.url);
    const note = await createNote(server.url, author.key);
    for (const query of ["?limit=5", "?utm_source=x", "?foo=bar", "?x=1&x=2"]) {
      const res = await call(server.url, "GET", `/v1/me/posts${query}`, { key: author.key });
      expectStatus(res, 200);
      expect(res.data.posts.map((p: { id: string }) => p.id)).toEqual([note.id]);
    }
  });
});
