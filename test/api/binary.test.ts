// The compiled executable (dist/cairn, built here with `bun run build`):
// the same contract end to end, with the migrations and FTS5 embedded, and the
// operator verbs of the same binary working against the running server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { BINARY, ROOT, startServer, type RunningServer } from "../helpers/server.ts";
import {
  API_KEY,
  NEVER_SEEN_ID,
  NOTE_KEYS,
  SEARCH_RESULT_KEYS,
  TIMESTAMP,
  UUID_V7,
  adminJson,
  call,
  createNote,
  expectError,
  expectStatus,
  filesContaining,
  keysOf,
  register,
  stats,
  type Contributor,
} from "../helpers/api.ts";

let server: RunningServer;
let base: string;
let a: Contributor;
let b: Contributor;

beforeAll(async () => {
  const build = Bun.spawnSync([process.execPath, "run", "build"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(`bun run build failed:\n${build.stdout}\n${build.stderr}`);
  expect(statSync(BINARY).mode & 0o111).not.toBe(0);
  server = await startServer({ binary: true, env: { POSTS_PER_HOUR: "2" } });
  base = server.url;
  a = await register(base);
  b = await register(base);
});

afterAll(async () => {
  await server?.stop();
});

describe("dist/cairn serve", () => {
  test("probes answer", async () => {
    expect((await call(base, "GET", "/v1/healthz")).data).toEqual({ status: "ok" });
    const ready = await call(base, "GET", "/v1/readyz");
    expectStatus(ready, 200);
    expect(ready.data).toEqual({ status: "ready" });
  });

  test("register, post, fetch (keyed and public), vote, comment, search, delete", async () => {
    expect(a.no).toBe(1);
    expect(b.no).toBe(2);
    expect(a.key).toMatch(API_KEY);
    expect(a.createdAt).toMatch(TIMESTAMP);

    const note = await createNote(base, a.key, { title: "  Binary deadlock note ", body: "Compiled executables index too.", tags: ["Bin", "bin"] });
    expect(keysOf(note)).toEqual(NOTE_KEYS);
    expect(note.id).toMatch(UUID_V7);
    expect(note.title).toBe("Binary deadlock note");
    expect(note.tags).toEqual(["bin"]);

    const keyed = await call(base, "GET", `/v1/posts/${note.id}`, { key: b.key });
    const pub = await call(base, "GET", `/v1/public/posts/${note.id}`);
    expect(pub.text).toBe(keyed.text);
    expect((pub.headers.get("cache-control") ?? "").replaceAll(" ", "")).toBe("public,max-age=60");

    const vote = await call(base, "POST", `/v1/posts/${note.id}/vote`, { key: b.key, json: { vote: "down" } });
    expect(vote.data).toEqual({ post_id: note.id, your_vote: "down", score: -1 });
    expectError(await call(base, "POST", `/v1/posts/${note.id}/vote`, { key: a.key, json: { vote: "up" } }), 403, "forbidden");

    const comment = await call(base, "POST", `/v1/posts/${note.id}/comments`, { key: b.key, json: { body: " hello " } });
    expectStatus(comment, 201);
    expect(comment.data.comment_count).toBe(1);
    expect(comment.data.body).toBe("hello");

    const found = await call(base, "POST", "/v1/search", { key: b.key, json: { query: "deadlocks" } });
    expectStatus(found, 200);
    expect(found.data.results.map((r: any) => r.id)).toEqual([note.id]);
    expect(keysOf(found.data.results[0])).toEqual(SEARCH_RESULT_KEYS);
    expectStatus(await call(base, "POST", "/v1/search", { key: b.key, json: { query: '"NEAR( * : -x ^ {}' } }), 200);
    expectError(await call(base, "POST", "/v1/search", { key: b.key, json: { query: "x", limit: 1 } }), 400, "invalid_request");

    expectError(await call(base, "POST", "/v1/posts", { key: a.key, json: { title: "Binary deadlock note", body: "Compiled executables index too.", tags: ["bin"] } }), 409, "duplicate_post");

    const before = await stats(server);
    expectError(await call(base, "DELETE", `/v1/posts/${note.id}`, { key: b.key }), 403, "forbidden");
    expect((await call(base, "DELETE", `/v1/posts/${note.id}`, { key: a.key })).data).toEqual({ deleted: true, id: note.id });
    const after = await stats(server);
    expect(before.notes - after.notes).toBe(1);
    expect(before.comments - after.comments).toBe(1);
    expect(before.votes - after.votes).toBe(1);

    const gone = await call(base, "GET", `/v1/posts/${note.id}`, { key: b.key });
    const never = await call(base, "GET", `/v1/posts/${NEVER_SEEN_ID}`, { key: b.key });
    expectError(gone, 404, "not_found");
    expect(gone.text).toBe(never.text);
    expect((await call(base, "POST", "/v1/search", { key: b.key, json: { query: "deadlock" } })).data.results).toEqual([]);
  });

  test("the post breaker from the environment trips with 429 and Retry-After", async () => {
    const who = await register(base);
    await createNote(base, who.key);
    await createNote(base, who.key);
    const res = await call(base, "POST", "/v1/posts", { key: who.key, json: { title: "third", body: "third" } });
    expectError(res, 429, "rate_limited");
    expect(res.headers.get("retry-after") ?? "").toMatch(/^\d+$/);
  });

  test("errors keep the contract shape: 401, 404 route, 415, 400, 413", async () => {
    const unauth = await call(base, "GET", "/v1/me");
    expectError(unauth, 401, "unauthorized");
    expect(unauth.headers.get("www-authenticate") ?? "").toMatch(/^Bearer\b/);
    expectError(await call(base, "GET", "/v1/nope"), 404, "not_found");
    expectError(await call(base, "POST", "/v1/posts", { key: a.key, raw: "x", headers: { "content-type": "text/plain" } }), 415, "unsupported_media_type");
    expectError(await call(base, "POST", "/v1/posts", { key: a.key, raw: "{", headers: { "content-type": "application/json" } }), 400, "invalid_request");
    expectError(await call(base, "POST", "/v1/posts", { key: a.key, json: { title: "t", body: "x".repeat(70_000) } }), 413, "payload_too_large");
    expectStatus(await call(base, "POST", "/v1/web/events", { json: { event: "copy_command" } }), 202);
  });
});

describe("dist/cairn admin against the running binary server", () => {
  test("revoke takes effect on the next request, activate restores, provision prints a working key", async () => {
    const who = await register(base);
    expectStatus(await call(base, "GET", "/v1/me", { key: who.key }), 200);
    expect(await adminJson(server, "revoke", String(who.no))).toEqual({ contributor_no: who.no, active: false });
    expectError(await call(base, "GET", "/v1/me", { key: who.key }), 401, "unauthorized");
    expect(await adminJson(server, "activate", String(who.no))).toEqual({ contributor_no: who.no, active: true });
    expectStatus(await call(base, "GET", "/v1/me", { key: who.key }), 200);

    const printed = await adminJson(server, "provision", "--email", "binary-ops@example.org");
    expect(printed.api_key).toMatch(API_KEY);
    const me = await call(base, "GET", "/v1/me", { key: printed.api_key });
    expectStatus(me, 200);
    expect(me.data.contributor_no).toBe(printed.contributor_no);

    const s = await stats(server);
    expect(s.contributors).toBeGreaterThanOrEqual(4);
    expect(s.web_events.some((row) => row.event === "copy_command")).toBe(true);
  });

  test("no raw key in the data files", async () => {
    for (const key of [a.key, b.key]) {
      expect(filesContaining(server.dataDir, key)).toEqual([]);
      expect(filesContaining(server.dataDir, key.slice(6))).toEqual([]);
    }
    expect(filesContaining(server.dataDir, a.key.slice(0, 12)).length).toBeGreaterThan(0);
  });

  test("SIGTERM drains and exits 0", async () => {
    const code = await server.stop("SIGTERM");
    expect(code).toBe(0);
    expect(server.logs()).toContain("stopped");
    server = undefined as unknown as RunningServer;
  });
});

describe("dist/cairn's worker threads", () => {
  // The fold thread's and the search thread's workers are entry points of
  // their own in the executable (worker-url.ts). The fold worker's source
  // path, resolved against the working directory, once loaded nowhere but in
  // the repository, so a deployed server folded on its serving thread without
  // a word. Run from its data directory (startServer), the executable must
  // start them: the search thread at start, and after the first fold
  // (FOLD_EVERY log rows) and the checkpointer's start (its first batches),
  // three worker threads run. Linux only (/proc).
  test.skipIf(process.platform !== "linux")("the fold and search threads start from the executable run outside the repository", async () => {
    const own = await startServer({ binary: true, env: { POSTS_PER_HOUR: "0", SIMILAR_NOTES: "0", LOG_LEVEL: "warn" } });
    try {
      const author = await register(own.url);
      const write = async (from: number, to: number) => {
        for (let i = from; i < to; i += 8) {
          await Promise.all(Array.from({ length: 8 }, (_, j) => createNote(own.url, author.key, { title: `Fold thread note ${i + j}`, body: `Cairn and tarn ${i + j}.` })));
        }
      };
      const workers = () =>
        readdirSync(`/proc/${own.proc.pid}/task`).filter((task) => readFileSync(`/proc/${own.proc.pid}/task/${task}/comm`, "utf8").trim() === "Worker").length;
      await write(0, 600);
      const deadline = Date.now() + 10_000;
      while (workers() < 3 && Date.now() < deadline) await Bun.sleep(50);
      // A worker that failed to load lives for a moment before it is ended: all must still run after more writes.
      await Bun.sleep(500);
      await write(600, 700);
      expect(workers()).toBe(3);
      expect(own.logs()).not.toContain("search thread failed");
    } finally {
      await own.stop();
    }
  }, 60_000);
});
