// Issue 12: what a hostile or careless client did to a running Cairn, each
// attack answered the way the contract promises (no 500, the error shape).
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, startServer, type RunningServer } from "../helpers/server.ts";
import { createNote, expectError, NO_BREAKERS, rawHttp, register, type Contributor } from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";

forEachEngine((engine) => {

  let server: RunningServer;
  let author: Contributor;

  beforeAll(async () => {
    server = await startServer({ engine, env: NO_BREAKERS });
    author = await register(server.url);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const BAD_HOSTS = ["a b", "a b:80", "[::1", "x:99999999", "exa mple.org:8080", "%", "a\tb", "\\evil", "[zz]", "a..b "];

  function rawGet(path: string, host: string, extra: string[] = [], method = "GET", body = "") {
    const lines = [`${method} ${path} HTTP/1.1`, `Host: ${host}`, "Connection: close", ...extra];
    if (body) lines.push("Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`);
    return rawHttp(server.url, lines.join("\r\n") + "\r\n\r\n" + body);
  }

  describe("a malformed Host header", () => {
    test.each(BAD_HOSTS)("Host %p: no 500 on pages and routes", async (host) => {
      for (const path of ["/", "/v1/healthz", "/v1/openapi.json", "/nope"]) {
        const answer = await rawGet(path, host);
        expect(answer.status).toBeLessThan(500);
      }
      const note = JSON.stringify({ title: `Host ${JSON.stringify(host)}`, body: "b" });
      const post = await rawGet("/v1/posts", host, [`Authorization: Bearer ${author.key}`], "POST", note);
      // A good body is not turned into "not valid JSON" by a bad Host.
      expect(post.status).toBe(201);
    });

    test("the landing page prints no Host, plausible or not (issue 19: the browser fills in its own address)", async () => {
      for (const host of ["cairn.example.net:8080", "a b", "evil.example/x y", "<b>evil</b>"]) {
        const answer = await rawGet("/", host);
        expect(answer.status).toBe(200);
        expect(answer.body).not.toContain(host);
        expect(answer.body).toContain("cairn --url <span data-origin>https://cairn.example.org</span> register");
      }
    });
  });

  describe("small ones", () => {
    test("Accept is parsed: case-insensitive, q=0 means no", async () => {
      const note = await createNote(server.url, author.key);
      const type = async (accept: string) =>
        (await call(server.url, "GET", `/v1/public/posts/${note.id}`, { headers: { accept } })).headers.get("content-type") ?? "";
      expect(await type("TEXT/HTML")).toContain("text/html");
      expect(await type("text/html;q=0")).toContain("application/json");
      expect(await type("text/html;q=0, application/json")).toContain("application/json");
      expect(await type("application/json;q=0.5, text/html")).toContain("text/html");
      expect(await type("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")).toContain("text/html");
      expect(await type("*/*")).toContain("application/json");
      expect(await type("text/*")).toContain("text/html");
      expect(await type("garbage;;;q=x,,")).toContain("application/json");
    });

    test("JSON answers carry X-Content-Type-Options: nosniff", async () => {
      const note = await createNote(server.url, author.key);
      for (const res of [
        await call(server.url, "GET", "/v1/healthz"),
        await call(server.url, "GET", `/v1/posts/${note.id}`, { key: author.key }),
        await call(server.url, "GET", "/v1/me", { key: author.key }),
        await call(server.url, "GET", "/v1/me"),
        await call(server.url, "GET", "/nope"),
        await call(server.url, "POST", "/v1/posts", { key: author.key, raw: "{", headers: { "content-type": "application/json" } }),
      ]) {
        expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      }
    });

    test("NUL characters stay data in JSON but never reach a page raw", async () => {
      const note = await createNote(server.url, author.key, { title: "nul\u0000title", body: "nul\u0000body", tags: ["a"] });
      expect(note.body).toBe("nul\u0000body");
      const page = await call(server.url, "GET", `/v1/public/posts/${note.id}`, { headers: { accept: "text/html" } });
      expect(page.text).not.toContain("\u0000");
      expect(page.text).toContain("nul\ufffdbody");
      expect(page.text).toContain("nul\ufffdtitle");
      // Nothing but NUL is not a title.
      expectError(await call(server.url, "POST", "/v1/posts", { key: author.key, json: { title: "\u0000\u0000", body: "x" } }), 400, "invalid_request");
    });

    test("a title of only zero-width or direction characters is refused", async () => {
      for (const title of ["\u200b", "\u200b\u200c\u200d\ufeff", "\u202e\u2066", "\u3164"]) {
        const message = expectError(await call(server.url, "POST", "/v1/posts", { key: author.key, json: { title, body: "x" } }), 400, "invalid_request");
        expect(message).toContain("`title`");
      }
      expectError(await call(server.url, "POST", "/v1/posts", { key: author.key, json: { title: "ok", body: "\u200b" } }), 400, "invalid_request");
    });

    test("bidi overrides in a note are isolated on its page", async () => {
      const note = await createNote(server.url, author.key, { title: "\u202eevil title", body: "\u202ebody", tags: ["a"] });
      const page = await call(server.url, "GET", `/v1/public/posts/${note.id}`, { headers: { accept: "text/html" } });
      expect(page.text).toContain('<h1 dir="auto">\u202eevil title</h1>');
      expect(page.text).toContain('dir="auto">\u202ebody</div>');
      expect(page.text).toContain('<li dir="auto">a</li>');
      // The tab's title too: the override cannot turn " · Cairn" around.
      expect(page.text).toContain("<title>\u2068\u202eevil title\u2069 · Cairn</title>");
    });

    test("a bad post_id in a web event is named as the field, not the path", async () => {
      const message = expectError(await call(server.url, "POST", "/v1/web/events", { json: { event: "page_view", post_id: "nope" } }), 400, "invalid_request");
      expect(message).toContain("`post_id`");
      expect(message).not.toContain("path");
    });

    test("a client that closes before its body is whole is no server error: a 400 in the log, no error line", async () => {
      const { port } = new URL(server.url);
      const before = server.logs().split("\n").length;
      for (const path of ["/v1/register", "/v1/web/events", "/v1/posts"]) {
        const socket = await Bun.connect({ hostname: "127.0.0.1", port: Number(port), socket: { data() {} } });
        socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${author.key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"ti`);
        await Bun.sleep(50);
        socket.end();
      }
      await Bun.sleep(400);
      const lines = server.logs().split("\n").slice(before - 1).filter((line) => line.startsWith("{"));
      expect(lines.filter((line) => line.includes('"request failed"'))).toEqual([]);
      // The last three request lines are these requests' (earlier lines may still have been in the log's 100 ms buffer).
      const statuses = lines.filter((line) => line.includes('"msg":"request"')).map((line) => JSON.parse(line).status);
      expect(statuses.slice(-3)).toEqual([400, 400, 400]);
    });

    test("headers over 16 KB get 431 (Bun answers before the app; see docs/reliability.md)", async () => {
      const { port } = new URL(server.url);
      const head = await new Promise<string>((resolve, reject) => {
        let data = "";
        const socket = connect(Number(port), "127.0.0.1", () =>
          socket.write(`GET /v1/healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${"a".repeat(17 * 1024)}\r\n\r\n`),
        );
        socket.on("data", (chunk) => (data += chunk.toString("latin1")));
        socket.on("close", () => resolve(data));
        socket.on("error", reject);
      });
      expect(head).toStartWith("HTTP/1.1 431 ");
      // The app is still up and answers normally afterwards.
      expect((await call(server.url, "GET", "/v1/healthz")).status).toBe(200);
    });
  });

  describe("per-address breakers behind a proxy (TRUST_PROXY=1)", () => {
    let proxied: RunningServer;
    beforeAll(async () => {
      proxied = await startServer({ engine, env: { ...NO_BREAKERS, TRUST_PROXY: "1", REGISTRATIONS_PER_HOUR: "3", WEB_EVENTS_PER_HOUR: "3" } });
    });
    afterAll(async () => {
      await proxied?.stop();
    });

    const event = (xff: string) => call(proxied.url, "POST", "/v1/web/events", { json: { event: "page_view" }, headers: { "x-forwarded-for": xff } });

    test("IPv6 clients are counted per /64: fresh addresses from one /64 share one limit", async () => {
      for (let i = 1; i <= 3; i++) {
        const res = await call(proxied.url, "POST", "/v1/register", { json: { email: `v6-${i}@example.org` }, headers: { "x-forwarded-for": `2001:db8:aa:bb::${i.toString(16)}` } });
        expect(res.status).toBe(201);
      }
      const fourth = await call(proxied.url, "POST", "/v1/register", { json: { email: "v6-4@example.org" }, headers: { "x-forwarded-for": "2001:db8:aa:bb:ffff:1:2:3" } });
      expectError(fourth, 429, "rate_limited");
      // Another /64 is another subject.
      expect((await call(proxied.url, "POST", "/v1/register", { json: { email: "v6-5@example.org" }, headers: { "x-forwarded-for": "2001:db8:aa:bc::1" } })).status).toBe(201);
    });

    test("a forwarded value that is not an IP address is no subject: it counts as the proxy", async () => {
      const answers = [];
      for (let i = 0; i < 6; i++) answers.push((await event(`not-an-ip-${i}-${"x".repeat(12_000)}`)).status);
      expect(answers.slice(0, 3)).toEqual([202, 202, 202]);
      expect(answers.slice(3)).toEqual([429, 429, 429]);
      // A valid forwarded address is its own subject still.
      expect((await event("192.0.2.77")).status).toBe(202);
      expect((await event("10.9.8.7, ::ffff:192.0.2.78")).status).toBe(202);
    });
  });

  describe("bounded answers", () => {
    test("GET …/comments lists the newest 100, oldest first, with the true count", async () => {
      const note = await createNote(server.url, author.key);
      for (let i = 1; i <= 105; i++) {
        expect((await call(server.url, "POST", `/v1/posts/${note.id}/comments`, { key: author.key, json: { body: `comment ${i}` } })).status).toBe(201);
      }
      const res = await call(server.url, "GET", `/v1/posts/${note.id}/comments`, { key: author.key });
      expect(res.status).toBe(200);
      expect(res.data.count).toBe(105);
      expect(res.data.comments.length).toBe(100);
      expect(res.data.comments[0].body).toBe("comment 6");
      expect(res.data.comments[99].body).toBe("comment 105");
      const doc = (await call(server.url, "GET", "/v1/openapi.json")).text;
      expect(doc).toContain("The newest 100 comments at most, oldest first");
    });
  });

  describe("found by the property suite", () => {
    test("messages name a list item as `tags[0]` and say what a field with two shapes takes", async () => {
      const tagItem = expectError(await call(server.url, "POST", "/v1/posts", { key: author.key, json: { title: "t", body: "b", tags: [""] } }), 400, "invalid_request");
      expect(tagItem).toContain("`tags[0]`");
      const tagShape = expectError(await call(server.url, "POST", "/v1/posts", { key: author.key, json: { title: "t", body: "b", tags: [null] } }), 400, "invalid_request");
      expect(tagShape).toBe("`tags` must be an array of strings or null.");
      for (const supersedes of [{}, true, 5]) {
        const message = expectError(await call(server.url, "POST", "/v1/posts", { key: author.key, json: { title: "t", body: "b", supersedes } }), 400, "invalid_request");
        expect(message).toBe("`supersedes` must be a string or null.");
      }
    });

    test("a lone UTF-16 surrogate is stored as U+FFFD, and the 201 answer says so too", async () => {
      const created = await call(server.url, "POST", "/v1/posts", { key: author.key, raw: '{"title":"lone \\ud800 surrogate","body":"b \\udc00"}', headers: { "content-type": "application/json" } });
      expect(created.status).toBe(201);
      expect(created.data.title).toBe("lone \ufffd surrogate");
      expect(created.data.body).toBe("b \ufffd");
      const fetched = await call(server.url, "GET", `/v1/posts/${created.data.id}`, { key: author.key });
      expect([fetched.data.title, fetched.data.body]).toEqual([created.data.title, created.data.body]);
    });

    test("an object with a `toString` or `valueOf` field where a string belongs is a 400, not a 500", async () => {
      for (const value of [{ toString: "" }, { valueOf: 1 }, { toString: { toString: 1 } }, [{ toString: "" }]]) {
        expectError(await call(server.url, "POST", "/v1/web/events", { json: { event: "page_view", post_id: value } }), 400, "invalid_request");
        expectError(await call(server.url, "POST", "/v1/posts", { key: author.key, json: { title: value, body: "x" } }), 400, "invalid_request");
        expectError(await call(server.url, "POST", "/v1/register", { json: { email: value } }), 400, "invalid_request");
      }
    });
  });
});
