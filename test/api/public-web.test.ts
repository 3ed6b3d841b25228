// The public route family (/v1/public/posts/{id}) and POST /v1/web/events.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../helpers/server.ts";
import {
  NEVER_SEEN_ID,
  NO_BREAKERS,
  NOTE_KEYS,
  call,
  createNote,
  eventCount,
  expectError,
  expectStatus,
  storedIn,
  keysOf,
  register,
  stats,
  type Contributor,
} from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";

forEachEngine((engine) => {

  let server: RunningServer;
  let base: string;
  let author: Contributor;
  let reader: Contributor;

  beforeAll(async () => {
    // TRUST_PROXY lets one test check that a client address is never stored.
    server = await startServer({ engine, env: { ...NO_BREAKERS, TRUST_PROXY: "1" } });
    base = server.url;
    author = await register(base);
    reader = await register(base);
  });

  afterAll(async () => {
    await server?.stop();
  });

  const UUID_ANYWHERE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

  describe("GET /v1/public/posts/{id}", () => {
    test("no key needed: 200 the Note, byte-identical to the keyed GET, Cache-Control public, max-age=60", async () => {
      const note = await createNote(base, author.key, { title: "Public note", body: "Readable by anyone.", tags: ["pub"] });
      await call(base, "POST", `/v1/posts/${note.id}/vote`, { key: reader.key, json: { vote: "up" } });
      await call(base, "POST", `/v1/posts/${note.id}/comments`, { key: reader.key, json: { body: "nice" } });
      const pub = await call(base, "GET", `/v1/public/posts/${note.id}`);
      expectStatus(pub, 200);
      expect(pub.headers.get("content-type") ?? "").toContain("application/json");
      const cache = (pub.headers.get("cache-control") ?? "").toLowerCase().replaceAll(" ", "");
      expect(cache.split(",").sort()).toEqual(["max-age=60", "public"]);
      const keyed = await call(base, "GET", `/v1/posts/${note.id}`, { key: reader.key });
      expect(pub.text).toBe(keyed.text);
      expect(keysOf(pub.data)).toEqual(NOTE_KEYS);
      expect(pub.data).toEqual({ ...note, score: 1, comment_count: 1 });
    });

    test("a key, even a bad one, makes no difference on the public route", async () => {
      const note = await createNote(base, author.key);
      const anonymous = await call(base, "GET", `/v1/public/posts/${note.id}`);
      const withKey = await call(base, "GET", `/v1/public/posts/${note.id}`, { key: reader.key });
      const badKey = await call(base, "GET", `/v1/public/posts/${note.id}`, { headers: { authorization: "Bearer cairn_nope" } });
      expectStatus(withKey, 200);
      expectStatus(badKey, 200);
      expect(withKey.text).toBe(anonymous.text);
      expect(badKey.text).toBe(anonymous.text);
    });

    test("exposes no other note: no other id, no links", async () => {
      // Several notes by the same author, with comments: none of them leaks into the answer.
      const others = [await createNote(base, author.key), await createNote(base, author.key)];
      const note = await createNote(base, author.key, { title: "Lonely", body: "Nothing points away from here." });
      const later = await createNote(base, author.key);
      await call(base, "POST", `/v1/posts/${note.id}/comments`, { key: reader.key, json: { body: "a comment" } });
      const pub = await call(base, "GET", `/v1/public/posts/${note.id}`);
      expectStatus(pub, 200);
      const idsInAnswer = new Set((pub.text.match(UUID_ANYWHERE) ?? []).map((s) => s.toLowerCase()));
      expect([...idsInAnswer]).toEqual([note.id]);
      for (const other of [...others, later]) expect(pub.text).not.toContain(other.id);
      expect(pub.text).not.toMatch(/https?:\/\//);
      expect(pub.text).not.toContain("/v1/");
      expect(pub.text.toLowerCase()).not.toContain("href");
      for (const header of ["link", "location"]) expect(pub.headers.get(header)).toBeNull();
      // No comments, author page or related list in the answer.
      expect(pub.text).not.toContain("a comment");
      expect(pub.data).not.toHaveProperty("comments");
      expect(pub.data).not.toHaveProperty("related");
    });

    test("404 for an unknown id, byte-identical to a deleted note; 400 for a malformed id", async () => {
      const note = await createNote(base, author.key);
      expectStatus(await call(base, "DELETE", `/v1/posts/${note.id}`, { key: author.key }), 200);
      const deleted = await call(base, "GET", `/v1/public/posts/${note.id}`);
      const never = await call(base, "GET", `/v1/public/posts/${NEVER_SEEN_ID}`);
      expectError(deleted, 404, "not_found");
      expect(deleted.text).toBe(never.text);
      expectError(await call(base, "GET", "/v1/public/posts/not-a-uuid"), 400, "invalid_request");
    });

    test("no list, search or other route under /v1/public/: 404 not_found", async () => {
      const note = await createNote(base, author.key);
      const paths = [
        "/v1/public/posts",
        "/v1/public/posts/",
        "/v1/public/search",
        "/v1/public/",
        "/v1/public",
        `/v1/public/posts/${note.id}/comments`,
        `/v1/public/posts/${note.id}/related`,
        "/v1/public/contributors/1",
        "/v1/public/search?q=note",
        "/v1/public/posts?limit=10",
      ];
      for (const path of paths) expectError(await call(base, "GET", path), 404, "not_found");
      expectError(await call(base, "POST", "/v1/public/search", { json: { query: "note" } }), 404, "not_found");
    });

    test("no write through the public family", async () => {
      const note = await createNote(base, author.key);
      for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
        const res = await call(base, method, `/v1/public/posts/${note.id}`, method === "DELETE" ? {} : { json: { title: "x" } });
        expect([404, 405]).toContain(res.status);
        expect(res.data?.error?.code).toBeDefined();
      }
      const still = await call(base, "GET", `/v1/public/posts/${note.id}`);
      expect(still.data).toEqual(note);
    });

    test("with Accept: text/html it serves a small escaped HTML page of that one note, reporting a page_view", async () => {
      const others = [await createNote(base, author.key)];
      const note = await createNote(base, author.key, {
        title: `<script>alert("t")</script> & title`,
        body: `<img src=x onerror=alert(1)> "quoted" & 'single' ${others[0].id}`,
      });
      const res = await call(base, "GET", `/v1/public/posts/${note.id}`, {
        headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" },
      });
      expectStatus(res, 200);
      expect(res.headers.get("content-type") ?? "").toContain("text/html");
      expect((res.headers.get("cache-control") ?? "").replaceAll(" ", "")).toContain("max-age=60");
      expect(res.text).not.toContain("<script>alert");
      expect(res.text).not.toContain("<img src=x");
      expect(res.text).toContain("&lt;script&gt;");
      expect(res.text).toContain("&amp; title");
      expect(res.text).toContain("/v1/web/events");
      expect(res.text).toContain("page_view");
      // No links to another note, a list, search or an author page.
      const hrefs = [...res.text.matchAll(/href\s*=\s*["']?([^"' >]+)/gi)].map((m) => m[1]);
      for (const href of hrefs) expect(href).not.toMatch(/\/v1\/(posts|search|public\/posts\/(?!$))|contributor|author/);
      expect(hrefs.filter((h) => h.includes(others[0].id))).toEqual([]);
      expect(res.text).not.toContain(others[0].id.replaceAll("-", ""));
    });

    test("one URL, two representations: Accept decides, and the answer says Vary: Accept", async () => {
      const note = await createNote(base, author.key);
      const html = await call(base, "GET", `/v1/public/posts/${note.id}`, { headers: { accept: "text/html" } });
      for (const accept of ["application/json", "*/*", "application/json, text/html;q=0.5"]) {
        const json = await call(base, "GET", `/v1/public/posts/${note.id}`, { headers: { accept } });
        expectStatus(json, 200);
        expect(json.headers.get("content-type") ?? "").toContain("application/json");
        expect(json.data).toEqual(note);
        expect((json.headers.get("vary") ?? "").toLowerCase()).toContain("accept");
      }
      expect(html.headers.get("content-type") ?? "").toContain("text/html");
      expect((html.headers.get("vary") ?? "").toLowerCase()).toContain("accept");
      // The errors of that URL vary by Accept too (a JSON 404 or 400 against a page of the same status).
      for (const id of ["01890a5d-ac96-774b-bcce-b302099a8057", "not-a-uuid"]) {
        for (const accept of ["application/json", "text/html"]) {
          const missing = await call(base, "GET", `/v1/public/posts/${id}`, { headers: { accept } });
          expect([404, 400]).toContain(missing.status);
          expect({ id, accept, vary: (missing.headers.get("vary") ?? "").toLowerCase() }).toEqual({ id, accept, vary: "accept" });
        }
      }
    });
  });

  describe("the public note page's content (Accept: text/html)", () => {
    const BROWSER = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };
    const pageOf = async (id: string) => call(base, "GET", `/v1/public/posts/${id}`, { headers: BROWSER });

    test("comment count in good grammar, and the comments shown with their authors", async () => {
      const note = await createNote(base, author.key);
      expect((await pageOf(note.id)).text).toContain("0 comments");
      await call(base, "POST", `/v1/posts/${note.id}/comments`, { key: reader.key, json: { body: "First <b>remark</b>." } });
      let html = (await pageOf(note.id)).text;
      expect(html).toContain("1 comment<");
      expect(html).not.toContain("1 comments");
      expect(html).toContain("First &lt;b&gt;remark&lt;/b&gt;.");
      expect(html).toContain(`Contributor #${reader.no}`);
      await call(base, "POST", `/v1/posts/${note.id}/comments`, { key: author.key, json: { body: "Second remark." } });
      html = (await pageOf(note.id)).text;
      expect(html).toContain("2 comments");
      // Oldest first.
      expect(html.indexOf("First &lt;b&gt;")).toBeLessThan(html.indexOf("Second remark."));
    });

    test("timestamps are readable, with the exact time in a <time> element", async () => {
      const note = await createNote(base, author.key);
      const html = (await pageOf(note.id)).text;
      const d = new Date(note.created_at);
      const month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][d.getUTCMonth()];
      expect(html).toContain(`<time datetime="${note.created_at}">${d.getUTCDate()} ${month} ${d.getUTCFullYear()}, `);
      expect(html).toMatch(/\d\d:\d\d UTC<\/time>/);
      // The raw ISO string appears only inside attributes, never as the visible text.
      expect(html.replace(/"[^"]*"/g, "")).not.toContain(note.created_at);
    });

    test("code in backticks and fences is rendered as code, still escaped", async () => {
      const body = "Run `bun install --frozen-lockfile` first.\n```sh\necho '<b>' && ls\n```\nThen <i>done</i>.";
      const note = await createNote(base, author.key, { body });
      const html = (await pageOf(note.id)).text.match(/<div class="body"[^>]*>[\s\S]*?<\/div>/)![0];
      expect(html).toContain("<code>bun install --frozen-lockfile</code>");
      expect(html).toContain("<pre><code>echo &#39;&lt;b&gt;&#39; &amp;&amp; ls</code></pre>");
      expect(html).toContain("Then &lt;i&gt;done&lt;/i&gt;.");
      expect(html).not.toContain("```");
    });

    test("OpenGraph and Twitter preview tags, escaped", async () => {
      const note = await createNote(base, author.key, { title: `Quote " and <tag>`, body: `${"word ".repeat(100)}end` });
      const html = (await pageOf(note.id)).text;
      const meta = (key: string) => html.match(new RegExp(`<meta (?:property|name)="${key}" content="([^"]*)">`))?.[1];
      expect(meta("og:title")).toBe("Quote &quot; and &lt;tag&gt;");
      expect(meta("twitter:title")).toBe("Quote &quot; and &lt;tag&gt;");
      expect(meta("og:type")).toBe("article");
      // Absolute only from PUBLIC_BASE_URL (unset here): never from the Host header, which may be forged.
      expect(meta("og:url")).toBeUndefined();
      expect(meta("twitter:card")).toBe("summary");
      const description = meta("og:description")!;
      expect(description.startsWith("word word")).toBe(true);
      expect([...description].length).toBeLessThanOrEqual(200);
      expect(meta("twitter:description")).toBe(description);
    });

    test("a browser asking for an unknown, deleted or malformed note gets a small HTML page with the JSON's status", async () => {
      const note = await createNote(base, author.key);
      await call(base, "DELETE", `/v1/posts/${note.id}`, { key: author.key });
      for (const [id, status] of [[NEVER_SEEN_ID, 404], [note.id, 404], ["not-a-uuid", 400]] as const) {
        const res = await pageOf(id);
        expect(res.status).toBe(status);
        expect(res.headers.get("content-type") ?? "").toContain("text/html");
        expect(res.text).toContain("<h1>No note here</h1>");
        expect(res.text).not.toContain('{"error"');
        // A client asking for JSON still gets the contract's error.
        expectError(await call(base, "GET", `/v1/public/posts/${id}`), status, status === 404 ? "not_found" : "invalid_request");
      }
      // Deleted and never-existing stay indistinguishable.
      expect((await pageOf(note.id)).text).toBe((await pageOf(NEVER_SEEN_ID)).text);
    });
  });

  describe("POST /v1/web/events", () => {
    test("202 {accepted: true} for page_view, copy_link and copy_command, no key needed", async () => {
      const note = await createNote(base, author.key);
      const bodies = [
        { event: "page_view" },
        { event: "page_view", post_id: note.id, path: `/v1/public/posts/${note.id}` },
        { event: "copy_link", post_id: note.id },
        { event: "copy_command", path: "/" },
      ];
      for (const json of bodies) {
        const res = await call(base, "POST", "/v1/web/events", { json });
        expectStatus(res, 202);
        expect(res.text.replaceAll(" ", "")).toBe('{"accepted":true}');
        expect(res.data).toEqual({ accepted: true });
      }
    });

    test("an unknown or missing event is 400 naming the field", async () => {
      for (const json of [{ event: "click" }, { event: "PAGE_VIEW" }, { event: "" }, { event: 1 }, { event: null }, {}, { post_id: NEVER_SEEN_ID }]) {
        const message = expectError(await call(base, "POST", "/v1/web/events", { json }), 400, "invalid_request");
        expect(message).toContain("event");
      }
    });

    test("a malformed post_id is 400", async () => {
      expectError(await call(base, "POST", "/v1/web/events", { json: { event: "page_view", post_id: "nope" } }), 400, "invalid_request");
    });

    test("the body limit is 1 KiB: 1,024 bytes accepted, 1,025 bytes is 413", async () => {
      const frame = JSON.stringify({ event: "copy_link", path: "" });
      const at1024 = JSON.stringify({ event: "copy_link", path: "p".repeat(1024 - frame.length) });
      expect(Buffer.byteLength(at1024)).toBe(1024);
      expectStatus(await call(base, "POST", "/v1/web/events", { raw: at1024, headers: { "content-type": "application/json" } }), 202);
      const at1025 = JSON.stringify({ event: "copy_link", path: "p".repeat(1025 - frame.length) });
      const message = expectError(
        await call(base, "POST", "/v1/web/events", { raw: at1025, headers: { "content-type": "application/json" } }),
        413,
        "payload_too_large",
      );
      expect(message).toMatch(/1024|1 KiB/);
    });

    test("415 for a body that is not JSON, 400 for malformed JSON", async () => {
      expectError(await call(base, "POST", "/v1/web/events", { raw: "event=page_view", headers: { "content-type": "application/x-www-form-urlencoded" } }), 415, "unsupported_media_type");
      expectError(await call(base, "POST", "/v1/web/events", { raw: "{event:", headers: { "content-type": "application/json" } }), 400, "invalid_request");
    });

    test("unknown fields are ignored", async () => {
      const res = await call(base, "POST", "/v1/web/events", { json: { event: "copy_link", referrer: "x", screen: [1, 2] } });
      expectStatus(res, 202);
    });

    test("counts are visible in admin stats as daily counters (page_view per note)", async () => {
      const note = await createNote(base, author.key);
      const before = await stats(server);
      const send = (json: object) => call(base, "POST", "/v1/web/events", { json });
      for (let i = 0; i < 3; i++) await send({ event: "page_view", post_id: note.id });
      await send({ event: "page_view" });
      for (let i = 0; i < 2; i++) await send({ event: "copy_link", post_id: note.id });
      for (let i = 0; i < 4; i++) await send({ event: "copy_command" });
      await send({ event: "nonsense" });
      const after = await stats(server);
      expect(eventCount(after, "page_view", note.id) - eventCount(before, "page_view", note.id)).toBe(3);
      expect(eventCount(after, "page_view") - eventCount(before, "page_view")).toBe(4);
      expect(eventCount(after, "copy_link") - eventCount(before, "copy_link")).toBe(2);
      expect(eventCount(after, "copy_command") - eventCount(before, "copy_command")).toBe(4);
      expect(eventCount(after, "nonsense")).toBe(0);
      const today = new Date().toISOString().slice(0, 10);
      const row = after.web_events.find((r) => r.event === "page_view" && r.post_id === note.id)!;
      expect(row.day).toBe(today);
    });

    test("no IP address or user agent is stored", async () => {
      const agent = "ProbeAgent/9.9.9-uniquemarker";
      const address = "203.0.113.177";
      for (const event of ["page_view", "copy_link", "copy_command"]) {
        expectStatus(
          await call(base, "POST", "/v1/web/events", {
            json: { event },
            headers: { "user-agent": agent, "x-forwarded-for": address, cookie: "session=cookiemarker123" },
          }),
          202,
        );
      }
      expect(await storedIn(server, address)).toEqual([]);
      expect(await storedIn(server, "uniquemarker")).toEqual([]);
      expect(await storedIn(server, "cookiemarker123")).toEqual([]);
    });
  });
});
