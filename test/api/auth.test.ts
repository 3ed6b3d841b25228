// Registration, keys, 401s, revocation by the operator, provisioning, closed
// registration, and no raw key at rest or in the logs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../helpers/server.ts";
import {
  API_KEY,
  NEVER_SEEN_ID,
  NO_BREAKERS,
  TIMESTAMP,
  adminJson,
  call,
  createNote,
  expectError,
  expectStatus,
  storedIn,
  keysOf,
  register,
  unique,
} from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";

forEachEngine((engine) => {

  let server: RunningServer;
  let base: string;

  beforeAll(async () => {
    server = await startServer({ engine, env: NO_BREAKERS });
    base = server.url;
  });

  afterAll(async () => {
    await server?.stop();
  });

  const post = (json: unknown) => call(base, "POST", "/v1/register", { json });

  describe("POST /v1/register", () => {
    test("201 with exactly contributor_no, api_key, created_at", async () => {
      const res = await post({ email: `${unique()}@example.org` });
      expectStatus(res, 201);
      expect(keysOf(res.data)).toEqual(["api_key", "contributor_no", "created_at"]);
      expect(Number.isInteger(res.data.contributor_no)).toBe(true);
      expect(res.data.contributor_no).toBeGreaterThanOrEqual(1);
      expect(res.data.api_key).toMatch(API_KEY);
      expect(res.data.created_at).toMatch(TIMESTAMP);
      expect(Math.abs(Date.parse(res.data.created_at) - Date.now())).toBeLessThan(60_000);
      // The key works at once.
      const me = await call(base, "GET", "/v1/me", { key: res.data.api_key });
      expectStatus(me, 200);
      expect(me.data.contributor_no).toBe(res.data.contributor_no);
    });

    test("the answers that carry a key say Cache-Control: no-store (registration and rotation)", async () => {
      const res = await post({ email: `${unique()}@example.org` });
      expect(res.status).toBe(201);
      expect(res.headers.get("cache-control")).toBe("no-store");
      const rotated = await call(base, "POST", "/v1/me/key", { key: res.data.api_key });
      expect(rotated.status).toBe(201);
      expect(rotated.headers.get("cache-control")).toBe("no-store");
    });

    test("each registration gets a different key and the next contributor number", async () => {
      const a = await register(base);
      const b = await register(base);
      expect(b.no).toBe(a.no + 1);
      expect(a.key).not.toBe(b.key);
    });

    test("email: 3 characters is the minimum, 2 is refused", async () => {
      expectStatus(await post({ email: "a@b" }), 201);
      const message = expectError(await post({ email: "@b" }), 400, "invalid_request");
      expect(message).toContain("email");
    });

    test("email: 254 characters is the maximum, 255 is refused", async () => {
      const at254 = "a".repeat(254 - "@example.org".length) + "@example.org";
      expect(at254.length).toBe(254);
      expectStatus(await post({ email: at254 }), 201);
      const at255 = "b" + at254;
      const message = expectError(await post({ email: at255 }), 400, "invalid_request");
      expect(message).toContain("email");
    });

    test("email is trimmed before the length rule", async () => {
      // "  a@c  " is 7 characters raw but 3 after trimming: accepted.
      expectStatus(await post({ email: "   a@c   " }), 201);
      // " a@ " is 4 characters raw but 2 after trimming: refused.
      expectError(await post({ email: "  a@  " }), 400, "invalid_request");
      // 254 after trimming, padded with spaces: accepted.
      const at254 = "c".repeat(254 - "@example.org".length) + "@example.org";
      expectStatus(await post({ email: `   ${at254}   ` }), 201);
      expectError(await post({ email: "       " }), 400, "invalid_request");
    });

    test("email length counts code points: an emoji is one character", async () => {
      // "x@" + 252 emoji = 254 code points (506 UTF-16 units): accepted.
      expectStatus(await post({ email: "x@" + "😀".repeat(252) }), 201);
      expectError(await post({ email: "x@" + "😀".repeat(253) }), 400, "invalid_request");
    });

    test("email needs an @", async () => {
      const message = expectError(await post({ email: "not-an-address.example.org" }), 400, "invalid_request");
      expect(message).toContain("@");
    });

    test("email missing or not a string is 400 naming the field", async () => {
      expect(expectError(await post({}), 400, "invalid_request")).toContain("email");
      expect(expectError(await post({ email: 42 }), 400, "invalid_request")).toContain("email");
      expect(expectError(await post({ email: null }), 400, "invalid_request")).toContain("email");
      expect(expectError(await post({ email: ["a@b.c"] }), 400, "invalid_request")).toContain("email");
    });

    test("unknown request fields are ignored", async () => {
      const res = await post({ email: `${unique()}@example.org`, name: "agent", newer_option: { x: 1 } });
      expectStatus(res, 201);
      expect(keysOf(res.data)).toEqual(["api_key", "contributor_no", "created_at"]);
    });

    test("the response never echoes the e-mail address", async () => {
      const email = `${unique("echo")}@example.org`;
      const res = await post({ email });
      expectStatus(res, 201);
      expect(res.text).not.toContain(email);
    });
  });

  describe("401 unauthorized", () => {
    let good: { no: number; key: string };
    let noteId: string;

    beforeAll(async () => {
      good = await register(base);
      noteId = (await createNote(base, good.key)).id;
    });

    const keyedRoutes = () => [
      ["GET", "/v1/me", undefined],
      ["POST", "/v1/posts", { title: "t", body: "b" }],
      ["GET", `/v1/posts/${noteId}`, undefined],
      ["GET", `/v1/posts/${noteId}/comments`, undefined],
      ["POST", `/v1/posts/${noteId}/comments`, { body: "c" }],
      ["POST", `/v1/posts/${noteId}/vote`, { vote: "up" }],
      ["DELETE", `/v1/posts/${noteId}`, undefined],
      ["POST", "/v1/search", { query: "anything" }],
    ] as const;

    test("every keyed route refuses a request without a key, with WWW-Authenticate: Bearer", async () => {
      const bodies = new Set<string>();
      for (const [method, path, json] of keyedRoutes()) {
        const res = await call(base, method, path, json === undefined ? {} : { json });
        expectError(res, 401, "unauthorized");
        expect(res.headers.get("www-authenticate") ?? "").toMatch(/^Bearer\b/);
        bodies.add(res.text);
      }
      expect(bodies.size).toBe(1);
      // Nothing happened: the note is still there.
      expectStatus(await call(base, "GET", `/v1/posts/${noteId}`, { key: good.key }), 200);
    });

    test("missing, malformed, unknown and same-prefix keys get byte-identical answers", async () => {
      const missing = await call(base, "GET", "/v1/me");
      const variants: Record<string, string>[] = [
        { authorization: "" },
        { authorization: "Bearer" },
        { authorization: "Bearer " },
        { authorization: `Basic ${btoa("user:pass")}` },
        { authorization: `Token ${good.key}` },
        { authorization: "Bearer not-a-key" },
        { authorization: `Bearer cairn_${"A".repeat(43)}` },
        // Same 12-character lookup prefix as a real key, different rest.
        { authorization: `Bearer ${good.key.slice(0, 12)}${"Z".repeat(good.key.length - 12)}` },
        // The real key with one character changed at the end.
        { authorization: `Bearer ${good.key.slice(0, -1)}${good.key.endsWith("a") ? "b" : "a"}` },
        // The real key truncated / extended.
        { authorization: `Bearer ${good.key.slice(0, -1)}` },
        { authorization: `Bearer ${good.key}x` },
        { authorization: `Bearer ${good.key} ${good.key}` },
      ];
      expectError(missing, 401, "unauthorized");
      for (const headers of variants) {
        const res = await call(base, "GET", "/v1/me", { headers });
        expectError(res, 401, "unauthorized");
        expect(res.text).toBe(missing.text);
        expect(res.headers.get("www-authenticate") ?? "").toMatch(/^Bearer\b/);
      }
    });

    test("the 401 message says how to send a key and how to get one", async () => {
      const message = expectError(await call(base, "GET", "/v1/me"), 401, "unauthorized");
      expect(message).toContain("Authorization: Bearer");
      expect(message).toContain("/v1/register");
    });

    test("a request without a key is refused with 401 even when its body is invalid", async () => {
      // Authentication comes first: an anonymous caller learns nothing about validation.
      const cases = [
        ["POST", "/v1/posts", { title: 5 }],
        ["POST", "/v1/posts", {}],
        ["POST", "/v1/search", { query: "x", limit: 3 }],
        ["POST", `/v1/posts/${noteId}/vote`, { vote: "sideways" }],
        ["POST", `/v1/posts/${noteId}/comments`, { body: "" }],
        ["GET", "/v1/posts/not-a-uuid", undefined],
      ] as const;
      const got: Record<string, number> = {};
      const want: Record<string, number> = {};
      for (const [method, path, json] of cases) {
        const res = await call(base, method, path, json === undefined ? {} : { json });
        const label = `${method} ${path} ${JSON.stringify(json ?? null)}`;
        got[label] = res.status;
        want[label] = 401;
      }
      expect(got).toEqual(want);
    });

    test("a request without a valid key is 401 before its body is read: bad JSON, another media type, an oversized body", async () => {
      const json = { "content-type": "application/json" };
      const cases: [string, string, Record<string, string>, string][] = [
        ["POST", "/v1/posts", json, "{bad"],
        ["POST", "/v1/posts", { "content-type": "text/plain" }, "hello"],
        ["POST", "/v1/posts", json, JSON.stringify({ title: "t", body: "x".repeat(70_000) })],
        ["POST", `/v1/posts/${noteId}/comments`, { "content-type": "text/plain" }, "hi"],
        ["POST", "/v1/search", json, "[1,"],
        ["POST", "/v1/mcp", { "content-type": "text/plain" }, "hi"],
        ["DELETE", `/v1/posts/${noteId}`, json, "{bad"],
      ];
      for (const key of [undefined, "cairn_0000000000000000000000000000000000000000000"]) {
        const got: Record<string, number> = {};
        const want: Record<string, number> = {};
        for (const [method, path, headers, raw] of cases) {
          const res = await call(base, method, path, { key, raw, headers });
          const label = `${key ? "unknown key" : "no key"}: ${method} ${path} ${headers["content-type"]} ${raw.slice(0, 12)}`;
          got[label] = res.status;
          want[label] = 401;
        }
        expect(got).toEqual(want);
      }
      // With a valid key the same requests get the body's own errors.
      const who = await register(base);
      expectError(await call(base, "POST", "/v1/posts", { key: who.key, raw: "{bad", headers: json }), 400, "invalid_request");
      expectError(await call(base, "POST", "/v1/posts", { key: who.key, raw: "hello", headers: { "content-type": "text/plain" } }), 415, "unsupported_media_type");
    });
  });

  describe("operator verbs on a running server", () => {
    test("admin revoke N refuses the key on the very next request; admin activate N restores it", async () => {
      const who = await register(base);
      const note = await createNote(base, who.key);
      expectStatus(await call(base, "GET", "/v1/me", { key: who.key }), 200);
      const missing = await call(base, "GET", "/v1/me");

      const revoked = await adminJson(server, "revoke", String(who.no));
      expect(revoked).toEqual({ contributor_no: who.no, active: false });
      // Very next request, every keyed route.
      const me = await call(base, "GET", "/v1/me", { key: who.key });
      expectError(me, 401, "unauthorized");
      expect(me.text).toBe(missing.text);
      // The message must not say a revoke is final: `admin activate` below undoes it.
      expect(me.data.error.message).not.toMatch(/cannot be restored/i);
      expect(me.data.error.message).toContain("operator activates it again");
      expect(me.headers.get("www-authenticate") ?? "").toMatch(/^Bearer\b/);
      expectError(await call(base, "POST", "/v1/posts", { key: who.key, json: { title: "x", body: "y" } }), 401, "unauthorized");
      expectError(await call(base, "GET", `/v1/posts/${note.id}`, { key: who.key }), 401, "unauthorized");
      expectError(await call(base, "DELETE", `/v1/posts/${note.id}`, { key: who.key }), 401, "unauthorized");
      expectError(await call(base, "POST", "/v1/search", { key: who.key, json: { query: "x" } }), 401, "unauthorized");
      // The revoked contributor's note stays readable by others.
      const other = await register(base);
      expectStatus(await call(base, "GET", `/v1/posts/${note.id}`, { key: other.key }), 200);

      const activated = await adminJson(server, "activate", String(who.no));
      expect(activated).toEqual({ contributor_no: who.no, active: true });
      const back = await call(base, "GET", "/v1/me", { key: who.key });
      expectStatus(back, 200);
      expect(back.data.contributor_no).toBe(who.no);
      expect(back.data.post_count).toBe(1);
    });

    test("revoking one contributor leaves the others working", async () => {
      const a = await register(base);
      const b = await register(base);
      await adminJson(server, "revoke", String(a.no));
      expectError(await call(base, "GET", "/v1/me", { key: a.key }), 401, "unauthorized");
      expectStatus(await call(base, "GET", "/v1/me", { key: b.key }), 200);
    });

    test("admin revoke of an unknown contributor fails with exit 1", async () => {
      const run = await server.admin("revoke", "999999");
      expect(run.code).toBe(1);
    });

    test("admin provision --email E prints a working key once", async () => {
      const email = `${unique("prov")}@example.org`;
      const before = await register(base);
      const run = await server.admin("provision", "--email", email);
      expect(run.code).toBe(0);
      const printed = JSON.parse(run.stdout);
      expect(printed.api_key).toMatch(API_KEY);
      expect(printed.contributor_no).toBe(before.no + 1);
      expect(printed.created_at).toMatch(TIMESTAMP);
      expect(run.stdout.split(printed.api_key).length - 1).toBe(1);
      const me = await call(base, "GET", "/v1/me", { key: printed.api_key });
      expectStatus(me, 200);
      expect(me.data.contributor_no).toBe(printed.contributor_no);
      expect(me.text).not.toContain(email);
      // Nothing else prints the key again.
      const statsRun = await server.admin("stats");
      expect(statsRun.stdout).not.toContain(printed.api_key);
      expect(statsRun.stdout).not.toContain(email);
    });

    test("admin provision refuses an invalid address", async () => {
      const run = await server.admin("provision", "--email", "nope");
      expect(run.code).not.toBe(0);
      expect(run.stdout).not.toMatch(/cairn_/);
    });
  });

  describe("keys at rest and in logs", () => {
    test("no data file holds the raw key or its random part; the 12-character prefix may", async () => {
      const who = await register(base);
      await createNote(base, who.key);
      expectStatus(await call(base, "GET", "/v1/me", { key: who.key }), 200);
      // The scan reads what the engine stores: SQLite's files, PostgreSQL's dump.
      expect(await storedIn(server, "")).toContain(engine === "sqlite" ? "cairn.db" : "pg_dump");
      const random = who.key.slice("cairn_".length);
      expect(random.length).toBeGreaterThanOrEqual(40);
      expect(await storedIn(server, who.key)).toEqual([]);
      expect(await storedIn(server, random)).toEqual([]);
      // Nor the part after the stored prefix (the secret half).
      expect(await storedIn(server, who.key.slice(12))).toEqual([]);
      // The prefix is stored (this proves the scan reads the files the server writes).
      expect((await storedIn(server, who.key.slice(0, 12))).length).toBeGreaterThan(0);
    });

    test("the server log holds no key, Authorization header or e-mail address", async () => {
      const email = `${unique("logged")}@example.org`;
      const who = await register(base, { email });
      await call(base, "GET", "/v1/me", { key: who.key });
      await call(base, "GET", "/v1/me", { key: who.key.slice(0, -1) + "0" });
      await call(base, "POST", "/v1/posts", { key: who.key, raw: "{bad json", headers: { "content-type": "application/json" } });
      await call(base, "GET", `/v1/posts/${NEVER_SEEN_ID}`, { key: who.key });
      await Bun.sleep(50);
      const logs = server.logs();
      expect(logs).toContain("listening");
      expect(logs).not.toContain(who.key);
      expect(logs).not.toContain(who.key.slice(12));
      expect(logs).not.toContain(email);
      expect(logs.toLowerCase()).not.toContain("bearer");
    });
  });

  describe("registration closed", () => {
    let closed: RunningServer;

    beforeAll(async () => {
      closed = await startServer({ engine, env: { REGISTRATION: "closed" } });
    });

    afterAll(async () => {
      await closed?.stop();
    });

    test("POST /v1/register is 403 forbidden saying registration is closed and to ask the operator", async () => {
      const res = await call(closed.url, "POST", "/v1/register", { json: { email: "someone@example.org" } });
      const message = expectError(res, 403, "forbidden");
      expect(message.toLowerCase()).toContain("closed");
      expect(message.toLowerCase()).toContain("operator");
    });

    test("admin provision still works and its key is accepted", async () => {
      const printed = await adminJson(closed, "provision", "--email", "ops@example.org");
      expect(printed.api_key).toMatch(API_KEY);
      expect(printed.contributor_no).toBe(1);
      const me = await call(closed.url, "GET", "/v1/me", { key: printed.api_key });
      expectStatus(me, 200);
      expect(me.data.contributor_no).toBe(1);
      const note = await createNote(closed.url, printed.api_key);
      expect(note.contributor_no).toBe(1);
    });
  });
});
