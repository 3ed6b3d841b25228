// Conventions that hold for every route: probes, the error shape, unknown
// routes, media types, body size, unknown fields, formats, numbering, and
// what a response may never contain.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../helpers/server.ts";
import {
  NEVER_SEEN_ID,
  NO_BREAKERS,
  TIMESTAMP,
  UUID_V7,
  call,
  chunkedRequest,
  createNote,
  expectError,
  expectStatus,
  rawHttp,
  register,
  unique,
  type Contributor,
} from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";

forEachEngine((engine) => {

  let server: RunningServer;
  let base: string;
  let host: string;

  beforeAll(async () => {
    server = await startServer({ engine, env: NO_BREAKERS });
    base = server.url;
    host = new URL(base).host;
  });

  afterAll(async () => {
    await server?.stop();
  });

  describe("contributor numbers", () => {
    // First in this file: the server is fresh.
    test("are assigned 1, 2, 3, … in order", async () => {
      const numbers = [];
      for (let i = 0; i < 3; i++) numbers.push((await register(base)).no);
      expect(numbers).toEqual([1, 2, 3]);
    });
  });

  describe("probes", () => {
    test("GET /v1/healthz is 200 {status: ok}, no key", async () => {
      const res = await call(base, "GET", "/v1/healthz");
      expectStatus(res, 200);
      expect(res.headers.get("content-type") ?? "").toContain("application/json");
      expect(res.data).toEqual({ status: "ok" });
    });

    test("GET /v1/readyz is 200 {status: ready}, no key", async () => {
      const res = await call(base, "GET", "/v1/readyz");
      expectStatus(res, 200);
      expect(res.headers.get("content-type") ?? "").toContain("application/json");
      expect(res.data).toEqual({ status: "ready" });
    });
  });

  describe("human pages", () => {
    test("GET / is a landing page", async () => {
      const res = await call(base, "GET", "/");
      expectStatus(res, 200);
      expect(res.headers.get("content-type") ?? "").toContain("text/html");
      expect(res.text.toLowerCase()).toContain("cairn");
    });

    test("GET /v1/openapi.json is the OpenAPI 3 document", async () => {
      const res = await call(base, "GET", "/v1/openapi.json");
      expectStatus(res, 200);
      expect(String(res.data?.openapi ?? "")).toMatch(/^3\./);
      for (const path of ["/v1/posts", "/v1/search", "/v1/register", "/v1/me"]) expect(Object.keys(res.data.paths)).toContain(path);
    });
  });

  describe("errors", () => {
    test("an unknown route is 404 not_found JSON, with or without a key", async () => {
      const who = await register(base);
      const cases: [string, string][] = [
        ["GET", "/v1/nope"],
        ["GET", "/nope"],
        ["GET", "/v2/posts"],
        ["POST", "/v1/nope"],
        ["GET", "/v1/posts"],
        ["PUT", "/v1/posts"],
        ["PATCH", `/v1/posts/${NEVER_SEEN_ID}`],
        ["GET", "/v1/posts/" + NEVER_SEEN_ID + "/votes"],
        ["GET", "/v1/search"],
        ["GET", "/v1/register"],
        ["GET", "/v1/contributors/1"],
      ];
      for (const [method, path] of cases) {
        for (const key of [undefined, who.key]) {
          const res = await call(base, method, path, { key });
          // 405 would also be honest for a known path with the wrong method; the body must still be the error shape.
          if (res.status === 405) expectError(res, 405, res.data?.error?.code);
          else expectError(res, 404, "not_found");
        }
      }
    });

    test("a body that is not JSON is 415 unsupported_media_type on every JSON route", async () => {
      const who = await register(base);
      const note = await createNote(base, who.key);
      const routes = ["/v1/posts", `/v1/posts/${note.id}/comments`, `/v1/posts/${note.id}/vote`, "/v1/search", "/v1/register", "/v1/web/events"];
      const types = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "text/html"];
      for (const path of routes) {
        for (const type of types) {
          const res = await call(base, "POST", path, { key: who.key, raw: '{"title":"t","body":"b"}', headers: { "content-type": type } });
          const message = expectError(res, 415, "unsupported_media_type");
          expect(message).toContain("application/json");
        }
        // No Content-Type at all.
        const bare = await fetch(base + path, { method: "POST", headers: { authorization: `Bearer ${who.key}` }, body: new TextEncoder().encode('{"x":1}') });
        const text = await bare.text();
        expect(bare.status).toBe(415);
        expect(JSON.parse(text).error.code).toBe("unsupported_media_type");
      }
    });

    test("application/json with a charset parameter is accepted", async () => {
      const who = await register(base);
      const res = await call(base, "POST", "/v1/posts", {
        key: who.key,
        raw: JSON.stringify({ title: "Charset", body: "utf-8 body ✓" }),
        headers: { "content-type": "application/json; charset=utf-8" },
      });
      expectStatus(res, 201);
      expect(res.data.body).toBe("utf-8 body ✓");
    });

    test("malformed JSON is 400 invalid_request on every JSON route", async () => {
      const who = await register(base);
      const note = await createNote(base, who.key);
      const routes = ["/v1/posts", `/v1/posts/${note.id}/comments`, `/v1/posts/${note.id}/vote`, "/v1/search", "/v1/register", "/v1/web/events"];
      const broken = ["{", '{"title": "x",}', "{title: 'x'}", '{"a":1}{"b":2}', "nul", '"unterminated', "\u0000", "{\"a\":\"\\x\"}"];
      for (const path of routes) {
        for (const raw of broken) {
          const res = await call(base, "POST", path, { key: who.key, raw, headers: { "content-type": "application/json" } });
          const message = expectError(res, 400, "invalid_request");
          expect(message).toContain("JSON");
        }
      }
    });

    test("JSON that is not an object is 400 invalid_request", async () => {
      const who = await register(base);
      for (const json of [[], [1, 2], "string", 42, null, true]) {
        expectError(await call(base, "POST", "/v1/posts", { key: who.key, json }), 400, "invalid_request");
        expectError(await call(base, "POST", "/v1/register", { json }), 400, "invalid_request");
      }
      // An empty body with the JSON type.
      expectError(await call(base, "POST", "/v1/posts", { key: who.key, raw: "", headers: { "content-type": "application/json" } }), 400, "invalid_request");
    });

    test("a body over 64 KiB is 413 payload_too_large (Content-Length declared)", async () => {
      const who = await register(base);
      const big = { title: "t", body: "b", pad: "x".repeat(70_000) };
      for (const [path, key] of [["/v1/posts", who.key], ["/v1/register", undefined], ["/v1/search", who.key]] as const) {
        const message = expectError(await call(base, "POST", path, { key, json: big }), 413, "payload_too_large");
        expect(message).toMatch(/65536|64 KiB/);
      }
    });

    test("64 KiB exactly is accepted, one byte more is 413", async () => {
      const who = await register(base);
      const frame = JSON.stringify({ title: "Sixty-four", body: "At the limit.", pad: "" });
      const at = JSON.stringify({ title: "Sixty-four", body: "At the limit.", pad: "p".repeat(65_536 - frame.length) });
      expect(Buffer.byteLength(at)).toBe(65_536);
      expectStatus(await call(base, "POST", "/v1/posts", { key: who.key, raw: at, headers: { "content-type": "application/json" } }), 201);
      const over = JSON.stringify({ title: "Sixty-five", body: "Over the limit.", pad: "p".repeat(65_537 - frame.length - 2) });
      expect(Buffer.byteLength(over)).toBe(65_537);
      expectError(await call(base, "POST", "/v1/posts", { key: who.key, raw: over, headers: { "content-type": "application/json" } }), 413, "payload_too_large");
    });

    test("a chunked body over 64 KiB (no Content-Length) is 413; a small chunked body works", async () => {
      const who = await register(base);
      const big = new TextEncoder().encode(JSON.stringify({ title: "Chunked", body: "x", pad: "y".repeat(80_000) }));
      const headers = { "Content-Type": "application/json", Authorization: `Bearer ${who.key}` };
      const tooBig = await rawHttp(base, chunkedRequest("/v1/posts", host, big, headers));
      expect(tooBig.status).toBe(413);
      expect(JSON.parse(tooBig.body)).toEqual({ error: { code: "payload_too_large", message: expect.any(String) } });

      const small = new TextEncoder().encode(JSON.stringify({ title: `Chunked ${unique()}`, body: "small and chunked" }));
      const ok = await rawHttp(base, chunkedRequest("/v1/posts", host, small, headers, 7));
      expect(ok.status).toBe(201);
      expect(JSON.parse(ok.body).body).toBe("small and chunked");

      // Public route too.
      const reg = await rawHttp(base, chunkedRequest("/v1/register", host, big, { "Content-Type": "application/json" }));
      expect(reg.status).toBe(413);
      // The server is still fine.
      expectStatus(await call(base, "GET", "/v1/healthz"), 200);
    });

    test("a lying Content-Length (over the limit) is refused without reading", async () => {
      // With a valid key: without one, the answer is 401 before the body is looked at (auth.test.ts).
      const who = await register(base);
      const head = [
        "POST /v1/posts HTTP/1.1",
        `Host: ${host}`,
        `Authorization: Bearer ${who.key}`,
        "Content-Type: application/json",
        "Content-Length: 10000000",
        "Connection: close",
        "",
        "",
      ].join("\r\n");
      const res = await rawHttp(base, head + '{"title":"x"');
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body).error.code).toBe("payload_too_large");
    });

    test("no input produces a 5xx", async () => {
      const who = await register(base);
      const note = await createNote(base, who.key);
      const deep = "[".repeat(30_000) + "]".repeat(30_000);
      const attempts: Promise<{ status: number }>[] = [
        call(base, "GET", "/v1/posts/" + "a".repeat(5000), { key: who.key }),
        call(base, "GET", "/v1/posts/%ZZ", { key: who.key }),
        call(base, "GET", "/v1/posts/%00", { key: who.key }),
        call(base, "GET", "/v1/public/posts/%E0%A4%A", {}),
        call(base, "GET", "/v1/posts/" + encodeURIComponent("😀"), { key: who.key }),
        call(base, "POST", "/v1/posts", { key: who.key, raw: `{"title":"t","body":"b","deep":${deep}}`, headers: { "content-type": "application/json" } }),
        call(base, "POST", "/v1/posts", { key: who.key, json: { __proto__: { title: "x" }, constructor: { prototype: { body: 1 } } } }),
        call(base, "POST", "/v1/posts", { key: who.key, raw: '{"__proto__": {"title": "x", "body": "y"}}', headers: { "content-type": "application/json" } }),
        call(base, "POST", "/v1/posts", { key: who.key, json: { title: "t".repeat(10), body: { nested: true } } }),
        call(base, "POST", "/v1/posts", { key: who.key, json: { title: "\ud800 lone", body: "\udfff lone" } }),
        call(base, "POST", "/v1/posts", { key: who.key, json: { title: "nul \u0000 title", body: "b", tags: ["a\u0000b"] } }),
        call(base, "POST", "/v1/posts", { key: who.key, json: { title: 1e309, body: -0 } }),
        call(base, "POST", `/v1/posts/${note.id}/vote`, { key: who.key, json: { vote: "up".repeat(10_000) } }),
        call(base, "POST", `/v1/posts/${note.id}/comments`, { key: who.key, json: { body: "\u202e\u0000\ud83d" } }),
        call(base, "POST", "/v1/register", { json: { email: "\u0000@\u0000" } }),
        call(base, "POST", "/v1/register", { json: { email: "a@b", __proto__: null } }),
        call(base, "POST", "/v1/web/events", { json: { event: "page_view", post_id: NEVER_SEEN_ID, path: "\u0000" } }),
        call(base, "GET", "/v1/me", { headers: { authorization: "Bearer " + "x".repeat(6000) } }),
        call(base, "GET", "/v1/me", { headers: { authorization: "Bearer cairn_" + "A".repeat(300) } }),
        call(base, "GET", "/v1/me", { headers: { authorization: "Bearer\tcairn_" + "é".repeat(43) } }),
        call(base, "OPTIONS", "/v1/posts", {}),
        call(base, "HEAD", "/v1/healthz", {}),
      ];
      const answers = await Promise.all(attempts);
      const fives = answers.map((r, i) => [i, r.status]).filter(([, status]) => status >= 500);
      expect(fives).toEqual([]);
      expectStatus(await call(base, "GET", "/v1/healthz"), 200);
      expect(server.logs()).not.toContain('"level":"error"');
    });
  });

  describe("unknown request fields are ignored (except on search)", () => {
    test("posts, comments, votes and register accept and ignore extra fields", async () => {
      const reg = await call(base, "POST", "/v1/register", { json: { email: `${unique()}@example.org`, plan: "pro", v2: { a: 1 } } });
      expectStatus(reg, 201);
      const key = reg.data.api_key;
      const other = await register(base);
      const post = await call(base, "POST", "/v1/posts", { key, json: { title: "Extra", body: "Fields", tags: ["x"], language: "en", future: [1] } });
      expectStatus(post, 201);
      const commentRes = await call(base, "POST", `/v1/posts/${post.data.id}/comments`, { key: other.key, json: { body: "c", parent: 1 } });
      expectStatus(commentRes, 201);
      const voteRes = await call(base, "POST", `/v1/posts/${post.data.id}/vote`, { key: other.key, json: { vote: "up", strength: 9 } });
      expectStatus(voteRes, 200);
      for (const res of [reg, post, commentRes, voteRes]) {
        for (const field of ["plan", "v2", "language", "future", "parent", "strength"]) expect(res.data).not.toHaveProperty(field);
      }
    });
  });

  describe("formats", () => {
    test("timestamps are ISO 8601 UTC with milliseconds; ids are UUID v7", async () => {
      const a = await register(base);
      const b = await register(base);
      expect(a.createdAt).toMatch(TIMESTAMP);
      const note = await createNote(base, a.key);
      expect(note.id).toMatch(UUID_V7);
      expect(note.created_at).toMatch(TIMESTAMP);
      const commentRes = await call(base, "POST", `/v1/posts/${note.id}/comments`, { key: b.key, json: { body: "ts" } });
      expect(commentRes.data.created_at).toMatch(TIMESTAMP);
      const list = await call(base, "GET", `/v1/posts/${note.id}/comments`, { key: b.key });
      expect(list.data.comments[0].created_at).toMatch(TIMESTAMP);
      const me = await call(base, "GET", "/v1/me", { key: a.key });
      expect(me.data.created_at).toMatch(TIMESTAMP);
      expect(me.data.last_posted_at).toMatch(TIMESTAMP);
      expect(me.data.recent_posts[0].created_at).toMatch(TIMESTAMP);
      // The v7 time prefix agrees with created_at.
      const ms = parseInt(note.id.replaceAll("-", "").slice(0, 12), 16);
      expect(Math.abs(ms - Date.parse(note.created_at))).toBeLessThan(2000);
    });

    test("responses are JSON with Content-Type application/json", async () => {
      const who = await register(base);
      for (const path of ["/v1/me", "/v1/healthz", "/v1/nope"]) {
        const res = await call(base, "GET", path, { key: who.key });
        expect(res.headers.get("content-type") ?? "").toContain("application/json");
      }
    });
  });

  describe("secrets never appear in responses", () => {
    test("no response but the registration's api_key holds the e-mail, key, prefix or hash", async () => {
      const email = `${unique("secret")}@example.org`;
      const reg = await call(base, "POST", "/v1/register", { json: { email } });
      expectStatus(reg, 201);
      const key: string = reg.data.api_key;
      const prefix = key.slice(0, 12);
      const hashHex = new Bun.CryptoHasher("sha256").update(key).digest("hex");
      const hashB64 = new Bun.CryptoHasher("sha256").update(key).digest("base64");
      const other: Contributor = await register(base);

      const note = await createNote(base, key, { title: "Secret check", body: "Body", tags: ["s"] });
      const answers = [
        await call(base, "GET", "/v1/me", { key }),
        await call(base, "GET", `/v1/posts/${note.id}`, { key }),
        await call(base, "GET", `/v1/public/posts/${note.id}`),
        await call(base, "POST", `/v1/posts/${note.id}/comments`, { key, json: { body: "own comment" } }),
        await call(base, "GET", `/v1/posts/${note.id}/comments`, { key: other.key }),
        await call(base, "POST", `/v1/posts/${note.id}/vote`, { key: other.key, json: { vote: "up" } }),
        await call(base, "POST", `/v1/posts/${note.id}/vote`, { key, json: { vote: "up" } }),
        await call(base, "POST", "/v1/search", { key, json: { query: "secret check" } }),
        await call(base, "POST", "/v1/posts", { key, json: { title: "Secret check", body: "Body", tags: ["s"] } }),
        await call(base, "GET", "/v1/me", { key: key.slice(0, -1) + "Q" }),
        await call(base, "DELETE", `/v1/posts/${note.id}`, { key: other.key }),
        await call(base, "DELETE", `/v1/posts/${note.id}`, { key }),
      ];
      expect(answers[7].data.results.length).toBeGreaterThan(0);
      for (const res of answers) {
        for (const secret of [email, key, prefix, key.slice(6), hashHex, hashB64]) expect(res.text).not.toContain(secret);
        expect(res.text).not.toMatch(/"(email|api_key|key_prefix|prefix|key_hash|hash|active)"\s*:/);
      }
      // Registering the same address again never hands out or reveals the first key.
      const again = await call(base, "POST", "/v1/register", { json: { email } });
      expect(again.status).toBeLessThan(500);
      for (const secret of [email, key, prefix, hashHex]) expect(again.text).not.toContain(secret);
    });
  });
});
