// Hourly runaway breakers: each one trips with 429 rate_limited and a numeric
// Retry-After, per contributor (per client IP for register and web events);
// 0 switches a breaker off; /v1/me reports a tripped search breaker.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../helpers/server.ts";
import {
  NO_BREAKERS,
  call,
  createNote,
  expectError,
  expectStatus,
  inBatches,
  register,
  unique,
  type Contributor,
} from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";

forEachEngine((engine) => {

  const LIMIT = 3;
  let low: RunningServer;
  let ip = 0;
  /** A fresh client address (the low-limit server trusts X-Forwarded-For). */
  const nextIp = () => ({ "x-forwarded-for": `198.51.100.${++ip}` });

  beforeAll(async () => {
    low = await startServer({ engine,
      env: {
        TRUST_PROXY: "1",
        POSTS_PER_HOUR: String(LIMIT),
        COMMENTS_PER_HOUR: String(LIMIT),
        VOTES_PER_HOUR: String(LIMIT),
        SEARCHES_PER_HOUR: String(LIMIT),
        REGISTRATIONS_PER_HOUR: String(LIMIT),
        WEB_EVENTS_PER_HOUR: String(LIMIT),
      },
    });
  });

  afterAll(async () => {
    await low?.stop();
  });

  type Answer = Awaited<ReturnType<typeof call>>;

  /** The contract's 429: code, Retry-After in whole seconds within the hour, a back-off message. */
  function expectTripped(res: Answer, what: RegExp) {
    const message = expectError(res, 429, "rate_limited");
    const retryAfter = res.headers.get("retry-after");
    expect(retryAfter).not.toBeNull();
    expect(retryAfter!).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(3600);
    expect(message.toLowerCase()).toMatch(/too many/);
    expect(message.toLowerCase()).toMatch(what);
    expect(message.toLowerCase()).toContain("this hour");
    expect(message.toLowerCase()).toContain("try again later");
    // It says when: a number of seconds or a time.
    expect(message).toMatch(/\d/);
  }

  const fresh = (): Promise<Contributor> => register(low.url, { headers: nextIp() });

  describe("breakers trip at their limit", () => {
    test("posts: the 4th note in the hour is 429 and is not stored; others are unaffected", async () => {
      const who = await fresh();
      for (let i = 0; i < LIMIT; i++) await createNote(low.url, who.key);
      const res = await call(low.url, "POST", "/v1/posts", { key: who.key, json: { title: unique(), body: "one too many" } });
      expectTripped(res, /note|post/);
      expectTripped(await call(low.url, "POST", "/v1/posts", { key: who.key, json: { title: unique(), body: "again" } }), /note|post/);
      const me = await call(low.url, "GET", "/v1/me", { key: who.key });
      expect(me.data.post_count).toBe(LIMIT);
      // Breakers are per contributor.
      const other = await fresh();
      await createNote(low.url, other.key);
      // Reading still works for the tripped contributor.
      expectStatus(me, 200);
    });

    test("comments: the 4th comment in the hour is 429 and is not stored", async () => {
      const writer = await fresh();
      const who = await fresh();
      const note = await createNote(low.url, writer.key);
      for (let i = 0; i < LIMIT; i++) {
        expectStatus(await call(low.url, "POST", `/v1/posts/${note.id}/comments`, { key: who.key, json: { body: `c${i}` } }), 201);
      }
      expectTripped(await call(low.url, "POST", `/v1/posts/${note.id}/comments`, { key: who.key, json: { body: "c4" } }), /comment/);
      const got = await call(low.url, "GET", `/v1/posts/${note.id}`, { key: who.key });
      expect(got.data.comment_count).toBe(LIMIT);
      const other = await fresh();
      expectStatus(await call(low.url, "POST", `/v1/posts/${note.id}/comments`, { key: other.key, json: { body: "ok" } }), 201);
    });

    test("votes: the 4th vote in the hour is 429 and does not count", async () => {
      const writer = await fresh();
      const who = await fresh();
      const notes = [];
      // LIMIT + 1 notes need two writers (each writer's post breaker is LIMIT too).
      const writer2 = await fresh();
      for (let i = 0; i < LIMIT + 1; i++) notes.push(await createNote(low.url, (i < LIMIT ? writer : writer2).key));
      for (let i = 0; i < LIMIT; i++) {
        expectStatus(await call(low.url, "POST", `/v1/posts/${notes[i].id}/vote`, { key: who.key, json: { vote: "up" } }), 200);
      }
      expectTripped(await call(low.url, "POST", `/v1/posts/${notes[LIMIT].id}/vote`, { key: who.key, json: { vote: "up" } }), /vote/);
      expect((await call(low.url, "GET", `/v1/posts/${notes[LIMIT].id}`, { key: who.key })).data.score).toBe(0);
      const other = await fresh();
      expectStatus(await call(low.url, "POST", `/v1/posts/${notes[LIMIT].id}/vote`, { key: other.key, json: { vote: "up" } }), 200);
    });

    test("searches: the 4th search is 429; /v1/me search.available turns false for that contributor only", async () => {
      const who = await fresh();
      let me = await call(low.url, "GET", "/v1/me", { key: who.key });
      expect(me.data.search.available).toBe(true);
      for (let i = 0; i < LIMIT; i++) {
        expectStatus(await call(low.url, "POST", "/v1/search", { key: who.key, json: { query: `anything ${i}` } }), 200);
      }
      expectTripped(await call(low.url, "POST", "/v1/search", { key: who.key, json: { query: "one more" } }), /search/);
      me = await call(low.url, "GET", "/v1/me", { key: who.key });
      expectStatus(me, 200);
      expect(me.data.search.available).toBe(false);
      expect(typeof me.data.search.note).toBe("string");
      expect(me.data.search.note.length).toBeGreaterThan(5);
      // The note says when search comes back (a time or a number).
      expect(me.data.search.note).toMatch(/\d/);
      const other = await fresh();
      expect((await call(low.url, "GET", "/v1/me", { key: other.key })).data.search.available).toBe(true);
    });

    test("registrations: per client IP; the 4th from one address is 429, another address still registers", async () => {
      const from = nextIp();
      for (let i = 0; i < LIMIT; i++) {
        expectStatus(await call(low.url, "POST", "/v1/register", { json: { email: `${unique()}@example.org` }, headers: from }), 201);
      }
      const res = await call(low.url, "POST", "/v1/register", { json: { email: `${unique()}@example.org` }, headers: from });
      expectTripped(res, /registration/);
      expectStatus(await call(low.url, "POST", "/v1/register", { json: { email: `${unique()}@example.org` }, headers: nextIp() }), 201);
    });

    test("web events: per client IP; the 4th from one address is 429, another address is still accepted", async () => {
      const from = nextIp();
      for (let i = 0; i < LIMIT; i++) {
        expectStatus(await call(low.url, "POST", "/v1/web/events", { json: { event: "copy_link" }, headers: from }), 202);
      }
      expectTripped(await call(low.url, "POST", "/v1/web/events", { json: { event: "copy_link" }, headers: from }), /event/);
      expectStatus(await call(low.url, "POST", "/v1/web/events", { json: { event: "copy_link" }, headers: nextIp() }), 202);
    });
  });

  describe("without TRUST_PROXY, X-Forwarded-For is ignored", () => {
    let plain: RunningServer;

    beforeAll(async () => {
      plain = await startServer({ engine, env: { REGISTRATIONS_PER_HOUR: "2", WEB_EVENTS_PER_HOUR: "2" } });
    });

    afterAll(async () => {
      await plain?.stop();
    });

    test("a spoofed X-Forwarded-For does not escape the per-IP breakers", async () => {
      for (let i = 0; i < 2; i++) {
        const res = await call(plain.url, "POST", "/v1/register", {
          json: { email: `${unique()}@example.org` },
          headers: { "x-forwarded-for": `203.0.113.${i + 1}` },
        });
        expectStatus(res, 201);
      }
      expectTripped(
        await call(plain.url, "POST", "/v1/register", { json: { email: `${unique()}@example.org` }, headers: { "x-forwarded-for": "203.0.113.99" } }),
        /registration/,
      );
      for (let i = 0; i < 2; i++) {
        expectStatus(await call(plain.url, "POST", "/v1/web/events", { json: { event: "page_view" }, headers: { "x-forwarded-for": `203.0.113.${i + 1}` } }), 202);
      }
      expectTripped(
        await call(plain.url, "POST", "/v1/web/events", { json: { event: "page_view" }, headers: { "x-forwarded-for": "203.0.113.99" } }),
        /event/,
      );
    });
  });

  describe("0 switches a breaker off", () => {
    let open: RunningServer;
    let writer: Contributor;
    let who: Contributor;

    beforeAll(async () => {
      open = await startServer({ engine, env: NO_BREAKERS });
      writer = await register(open.url);
      who = await register(open.url);
    });

    afterAll(async () => {
      await open?.stop();
    });

    // Each count is past the breaker's default, so "0 means the default" would fail too.
    test("posts: 35 in a row (default 30)", async () => {
      const answers = await inBatches(35, 5, (i) =>
        call(open.url, "POST", "/v1/posts", { key: who.key, json: { title: `Post ${i}`, body: `Body ${i}` } }),
      );
      expect(answers.filter((r) => r.status !== 201).map((r) => r.status)).toEqual([]);
    });

    test("registrations: 25 from one address (default 20)", async () => {
      const answers = await inBatches(25, 5, () => call(open.url, "POST", "/v1/register", { json: { email: `${unique()}@example.org` } }));
      expect(answers.filter((r) => r.status !== 201).map((r) => r.status)).toEqual([]);
    });

    test("comments: 125 by one contributor (default 120)", async () => {
      const note = await createNote(open.url, writer.key);
      const answers = await inBatches(125, 10, (i) =>
        call(open.url, "POST", `/v1/posts/${note.id}/comments`, { key: who.key, json: { body: `c${i}` } }),
      );
      expect(answers.filter((r) => r.status !== 201).map((r) => r.status)).toEqual([]);
    });

    test("votes: 605 by one contributor (default 600)", async () => {
      const note = await createNote(open.url, writer.key);
      // Sequential per note (so the final vote is known), alternating up and none.
      const answers = await inBatches(605, 1, (i) =>
        call(open.url, "POST", `/v1/posts/${note.id}/vote`, { key: who.key, json: { vote: i % 2 === 0 ? "up" : "none" } }),
      );
      expect(answers.filter((r) => r.status !== 200).map((r) => r.status)).toEqual([]);
      expect(answers[604].data.score).toBe(1);
    });

    test("searches: 605 by one contributor (default 600); search stays available", async () => {
      const answers = await inBatches(605, 10, (i) => call(open.url, "POST", "/v1/search", { key: who.key, json: { query: `post ${i}` } }));
      expect(answers.filter((r) => r.status !== 200).map((r) => r.status)).toEqual([]);
      expect((await call(open.url, "GET", "/v1/me", { key: who.key })).data.search.available).toBe(true);
    });

    test("web events: 605 from one address (default 600)", async () => {
      const answers = await inBatches(605, 10, () => call(open.url, "POST", "/v1/web/events", { json: { event: "copy_command" } }));
      expect(answers.filter((r) => r.status !== 202).map((r) => r.status)).toEqual([]);
    });
  });
});
