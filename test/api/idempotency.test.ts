// Issue 19, point 1: Idempotency-Key on POST /v1/posts, …/comments, …/vote,
// looped over every engine. Two servers share one database (SQLite: one
// DATA_DIR; PostgreSQL: one database), and the first is restarted, so a
// replay is shown to hold across a restart and across replicas.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { call, createNote, expectError, expectStatus, NO_BREAKERS, register, unique, type Contributor } from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { startServer, tempDir, type Engine, type RunningServer } from "../helpers/server.ts";

/** Settings that put a server on a shared database of `engine`. */
async function sharedDatabase(engine: Engine): Promise<{ dataDir: string; env: Record<string, string> }> {
  const dataDir = tempDir();
  return { dataDir, env: engine === "postgres" ? { DATABASE_URL: await freshDatabase("idem") } : {} };
}

forEachEngine((engine) => {
  let shared: { dataDir: string; env: Record<string, string> };
  let a: RunningServer;
  let b: RunningServer;
  let author: Contributor;
  let reader: Contributor;
  const start = (env: Record<string, string> = {}) => startServer({ engine, dataDir: shared.dataDir, env: { ...NO_BREAKERS, ...shared.env, ...env } });

  beforeAll(async () => {
    shared = await sharedDatabase(engine);
    a = await start();
    b = await start();
    author = await register(a.url);
    reader = await register(a.url);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    rmSync(shared.dataDir, { recursive: true, force: true });
  });

  const post = (server: RunningServer, who: Contributor, key: string | undefined, json: unknown, path = "/v1/posts") =>
    call(server.url, "POST", path, { key: who.key, json, headers: key === undefined ? {} : { "idempotency-key": key } });
  const postCount = async (who: Contributor) => (await call(a.url, "GET", "/v1/me", { key: who.key })).data.post_count as number;
  const noteOf = async (id: string) => (await call(a.url, "GET", `/v1/posts/${id}`, { key: reader.key })).data;

  test("a replayed post, comment and vote change nothing and answer the first answer with Idempotent-Replayed: true, also after a restart and through the other server", async () => {
    const postKey = `post-${unique()}`;
    const noteJson = { title: `Idempotent ${unique()}`, body: "Written once, however often it is sent.", tags: ["retry"] };
    const first = await post(a, author, postKey, noteJson);
    expectStatus(first, 201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const note = first.data;

    const commentKey = `comment-${unique()}`;
    const commentPath = `/v1/posts/${note.id}/comments`;
    const comment = await post(a, reader, commentKey, { body: "Said once." }, commentPath);
    expectStatus(comment, 201);

    const voteKey = `vote-${unique()}`;
    const votePath = `/v1/posts/${note.id}/vote`;
    const vote = await post(a, reader, voteKey, { vote: "up" }, votePath);
    expectStatus(vote, 200);
    expect(vote.data).toEqual({ post_id: note.id, your_vote: "up", score: 1 });
    // A later vote without a key: a replay of the first must not flip it back.
    expectStatus(await post(a, reader, undefined, { vote: "down" }, votePath), 200);

    const expectReplays = async (server: RunningServer) => {
      for (const [who, key, json, path, original] of [
        [author, postKey, noteJson, "/v1/posts", first],
        [reader, commentKey, { body: "Said once." }, commentPath, comment],
        [reader, voteKey, { vote: "up" }, votePath, vote],
      ] as const) {
        const again = await post(server, who, key, json, path);
        expect(again.status).toBe(original.status);
        expect(again.text).toBe(original.text);
        expect(again.headers.get("idempotent-replayed")).toBe("true");
      }
      expect(await postCount(author)).toBe(1);
      const now = await noteOf(note.id);
      expect(now.comment_count).toBe(1);
      expect(now.score).toBe(-1);
    };
    await expectReplays(a);
    await expectReplays(b);
    // Restart the first server on the same database: the keys are in the database, not in memory.
    await a.stop();
    a = await start();
    await expectReplays(a);
  }, 60_000);

  test("the same body with its fields in another order (a client re-serialising a map) is the same request: replayed", async () => {
    const key = `order-${unique()}`;
    const title = `Ordered ${unique()}`;
    const first = await post(a, author, key, { title, body: "Fields in one order.", tags: ["b", "a"] });
    expectStatus(first, 201);
    const before = await postCount(author);
    const again = await post(b, author, key, { tags: ["b", "a"], body: "Fields in one order.", title });
    expectStatus(again, 201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.text).toBe(first.text);
    expect(await postCount(author)).toBe(before);
    // The order of a list is part of the body: tags in another order are another request.
    expectError(await post(a, author, key, { title, body: "Fields in one order.", tags: ["a", "b"] }), 422, "idempotency_key_reused");
  });

  test("the same key with another body or another route is 422 idempotency_key_reused, and nothing is written", async () => {
    const key = `reuse-${unique()}`;
    const note = await post(a, author, key, { title: `First ${unique()}`, body: "One." });
    expectStatus(note, 201);
    const before = await postCount(author);
    expectError(await post(b, author, key, { title: "Another title", body: "One." }), 422, "idempotency_key_reused");
    const target = await createNote(a.url, author.key);
    expectError(await post(a, author, key, { body: "One." }, `/v1/posts/${target.id}/comments`), 422, "idempotency_key_reused");
    expect(await postCount(author)).toBe(before + 1);
    expect((await noteOf(target.id)).comment_count).toBe(0);
    // Keys are per contributor: another contributor's identical key is a new write.
    expectStatus(await post(a, reader, key, { title: `Reader's ${unique()}`, body: "One." }), 201);
  });

  test("50 identical requests with one key at once, over both servers, make exactly one note", async () => {
    const who = await register(a.url);
    const key = `burst-${unique()}`;
    const json = { title: `Burst ${unique()}`, body: "Fifty at once." };
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => post(i % 2 ? a : b, who, key, json)));
    const created = answers.filter((res) => res.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const res of created) expect(res.text).toBe(created[0].text);
    for (const res of answers.filter((r) => r.status !== 201)) expectError(res, 409, "request_in_progress");
    expect(await postCount(who)).toBe(1);
    // Once the first has finished, every retry gets its answer.
    const late = await post(b, who, key, json);
    expect(late.text).toBe(created[0].text);
    expect(late.headers.get("idempotent-replayed")).toBe("true");
  });

  test("an answer that was an error is replayed too; a request refused before its write leaves the key free", async () => {
    const key = `dup-${unique()}`;
    const json = { title: `Dup ${unique()}`, body: "Twice." };
    expectStatus(await post(a, author, undefined, json), 201);
    const duplicate = await post(a, author, key, json);
    expectError(duplicate, 409, "duplicate_post");
    const replay = await post(b, author, key, json);
    expect(replay.text).toBe(duplicate.text);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");

    const invalidKey = `invalid-${unique()}`;
    expectError(await post(a, author, invalidKey, { title: "", body: "x" }), 400, "invalid_request");
    // The 400 was not stored: the same key may carry a corrected request.
    expectStatus(await post(a, author, invalidKey, { title: `Fixed ${unique()}`, body: "x" }), 201);
  });

  test("once the note is deleted, a replay of its post (or of a comment or vote on it) is the note's 404: no text outlives the note, nothing is written again", async () => {
    const title = `Short-lived ${unique()}`;
    const key = `gone-${unique()}`;
    const created = await post(a, author, key, { title, body: "Deleted soon." });
    expectStatus(created, 201);
    const voteKey = `gone-vote-${unique()}`;
    expectStatus(await post(a, reader, voteKey, { vote: "up" }, `/v1/posts/${created.data.id}/vote`), 200);
    const before = await postCount(author);
    expectStatus(await call(a.url, "DELETE", `/v1/posts/${created.data.id}`, { key: author.key }), 200);
    for (const server of [a, b]) {
      const replay = await post(server, author, key, { title, body: "Deleted soon." });
      expectError(replay, 404, "not_found");
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.text).not.toContain(title);
      const voteReplay = await post(server, reader, voteKey, { vote: "up" }, `/v1/posts/${created.data.id}/vote`);
      expectError(voteReplay, 404, "not_found");
      expect(voteReplay.headers.get("idempotent-replayed")).toBe("true");
    }
    expect(await postCount(author)).toBe(before - 1);
  });

  test("a malformed key is 400; a key of 255 printable characters is accepted", async () => {
    for (const bad of ["x".repeat(256), "caf\u00e9"]) {
      const res = await fetch(`${a.url}/v1/posts`, {
        method: "POST",
        headers: { authorization: `Bearer ${author.key}`, "content-type": "application/json", "idempotency-key": bad },
        body: JSON.stringify({ title: `Bad key ${unique()}`, body: "x" }),
      }).catch(() => null);
      // fetch refuses non-Latin-1 header values itself; the long key reaches the server.
      if (res) expect(res.status).toBe(400);
    }
    expectStatus(await post(a, author, `${"~".repeat(200)} ${"k".repeat(54)}`, { title: `Long key ${unique()}`, body: "x" }), 201);
  });

  test("breakers count a replay once", async () => {
    const limited = await start({ POSTS_PER_HOUR: "2" });
    try {
      const who = await register(limited.url);
      const key = `breaker-${unique()}`;
      const json = { title: `Counted once ${unique()}`, body: "x" };
      for (let i = 0; i < 4; i++) expectStatus(await post(limited, who, key, json), 201);
      expectStatus(await post(limited, who, undefined, { title: `Second ${unique()}`, body: "x" }), 201);
      expectError(await post(limited, who, undefined, { title: `Third ${unique()}`, body: "x" }), 429, "rate_limited");
      // A replay is still answered past the limit: it writes nothing.
      expect((await post(limited, who, key, json)).headers.get("idempotent-replayed")).toBe("true");
    } finally {
      await limited.stop();
    }
  });
});
