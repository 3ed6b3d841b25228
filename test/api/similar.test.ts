// Similar notes on write (shared/API.md, "Extensions, round 3"): the 201
// answer of POST /v1/posts carries `similar`, up to 3 existing notes of any
// contributor, best first, each {id, title, contributor_no, score,
// created_at}; [] when none passes the threshold; the note is always stored;
// never the new note itself; no similarity value. SIMILAR_NOTES=0: always [].
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, CREATED_NOTE_KEYS, expectStatus, keysOf, register, SIMILAR_KEYS, unique, type Contributor } from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";
import { startServer, type RunningServer } from "../helpers/server.ts";

/** Unrelated filler notes, so that a word's rarity means something. */
const FILLER = [
  ["Nginx returns 502 behind the load balancer", "The upstream keepalive timeout was shorter than the balancer's idle timeout; raise keepalive_timeout."],
  ["Python wheel build fails on Alpine", "musl has no manylinux wheels; install build-base or use a slim Debian image."],
  ["Git rebase stops at every commit", "A pre-commit hook rewrote files; run with --no-verify once or fix the hook."],
  ["Kubernetes pod stuck in Pending", "No node had enough memory for the request; lower requests or add a node."],
  ["TLS handshake fails with old Java client", "The client only speaks TLS 1.0; enable 1.2 in the JVM security settings."],
  ["Cron job runs twice after DST change", "Use UTC in the crontab; local time repeats an hour in autumn."],
];

forEachEngine((engine) => {
  let server: RunningServer;
  let alice: Contributor;
  let bob: Contributor;

  beforeAll(async () => {
    server = await startServer({ engine, env: { POSTS_PER_HOUR: "0" } });
    alice = await register(server.url);
    bob = await register(server.url);
    for (const [title, body] of FILLER) expectStatus(await post(alice, title, body), 201);
  });
  afterAll(async () => {
    await server?.stop();
  });

  function post(who: Contributor, title: string, body: string, tags?: string[]) {
    return call(server.url, "POST", "/v1/posts", { key: who.key, json: tags ? { title, body, tags } : { title, body } });
  }

  describe("POST /v1/posts: similar", () => {
    test("a near-duplicate by another contributor is listed with exactly the contract's fields; the new note is stored and never listed", async () => {
      const word = unique("zq");
      const first = await post(alice, `SQLite database is locked ${word} during backup`, `The backup holds a read lock ${word}; use the online backup API instead of copying the file.`);
      expectStatus(first, 201);
      const second = await post(bob, `SQLite database locked ${word} while backing up`, `Copying the file during a write gives database is locked ${word}; the online backup API avoids it.`);
      expectStatus(second, 201);
      expect(keysOf(second.data)).toEqual(CREATED_NOTE_KEYS);
      const similar = second.data.similar as any[];
      expect(similar.length).toBeGreaterThanOrEqual(1);
      expect(similar.length).toBeLessThanOrEqual(3);
      expect(similar[0].id).toBe(first.data.id);
      for (const entry of similar) {
        expect(keysOf(entry)).toEqual(SIMILAR_KEYS);
        expect(entry.id).not.toBe(second.data.id);
      }
      expect(similar[0]).toEqual({
        id: first.data.id,
        title: first.data.title,
        contributor_no: alice.no,
        score: 0,
        created_at: first.data.created_at,
      });
      const stored = await call(server.url, "GET", `/v1/posts/${second.data.id}`, { key: alice.key });
      expectStatus(stored, 200);
    });

    test("an unrelated note gets []", async () => {
      const res = await post(bob, `Watercolour ${unique("pig")} pigments fade`, "Cadmium reds hold; alizarin crimson fades in sunlight within months.");
      expectStatus(res, 201);
      expect(res.data.similar).toEqual([]);
    });

    test("the first note of an empty commons gets []", async () => {
      const empty = await startServer({ engine });
      try {
        const who = await register(empty.url);
        const res = await call(empty.url, "POST", "/v1/posts", { key: who.key, json: { title: "First note", body: "Nothing else here yet." } });
        expectStatus(res, 201);
        expect(res.data.similar).toEqual([]);
      } finally {
        await empty.stop();
      }
    });

    test("at most 3, best first; the caller's own notes count too", async () => {
      const word = unique("rr");
      const ids: string[] = [];
      // Every note holds all of the final note's words; more words of their own make them less close, in order.
      const core = `Redis eviction ${word} allkeys-lru.`;
      const noise = ["latency spikes", "cluster failover takes seconds", "replica lag grows during backups nightly", "persistence snapshots block writes while forking large datasets"];
      for (let i = 0; i < 4; i++) {
        const res = await post(alice, `Redis allkeys-lru eviction ${word}`, `${core} ${noise.slice(0, i + 1).join(". ")}.`);
        expectStatus(res, 201);
        ids.push(res.data.id);
      }
      const res = await post(alice, `Redis allkeys-lru eviction ${word}`, core);
      expectStatus(res, 201);
      const similar = res.data.similar as any[];
      expect(similar.length).toBe(3);
      expect(similar.map((s) => s.id)).toEqual(ids.slice(0, 3));
    });

    test("notes equally close are listed by net score, then newest, however many tie", async () => {
      const word = unique("tv");
      // The same words in another order: the same score for the final note's words, five ways tied.
      const titles = [`Varnish purge ${word} banlist`, `purge Varnish banlist ${word}`, `banlist ${word} Varnish purge`, `${word} banlist purge Varnish`, `Varnish banlist purge ${word}`];
      const body = `A ban on ${word} objects lingers in the banlist until every cached object was tested.`;
      const ids: string[] = [];
      for (const title of titles) {
        const res = await post(alice, title, body);
        expectStatus(res, 201);
        ids.push(res.data.id);
      }
      const carol = await register(server.url);
      const vote = async (who: Contributor, id: string) => expectStatus(await call(server.url, "POST", `/v1/posts/${id}/vote`, { key: who.key, json: { vote: "up" } }), 200);
      await vote(bob, ids[1]);
      await vote(carol, ids[1]);
      await vote(bob, ids[3]);
      const res = await post(bob, `Varnish purge banlist ${word}`, body);
      expectStatus(res, 201);
      // Net score 2, then 1, then the newest of those at 0.
      expect((res.data.similar as any[]).map((s) => s.id)).toEqual([ids[1], ids[3], ids[4]]);
    });

    test("a deleted note is never listed", async () => {
      const word = unique("dd");
      const gone = await post(alice, `Docker build cache ${word} invalidated`, `COPY . before npm install ${word} invalidates the cache on every change.`);
      expectStatus(await call(server.url, "DELETE", `/v1/posts/${gone.data.id}`, { key: alice.key }), 200);
      const res = await post(bob, `Docker build cache ${word} invalidated every time`, `Copying the source before npm install ${word} invalidates the build cache.`);
      expectStatus(res, 201);
      expect((res.data.similar as any[]).map((s) => s.id)).not.toContain(gone.data.id);
    });

    test("with an Idempotency-Key, the stored answer holds the list: a replay answers the same similar, not a fresh lookup", async () => {
      const word = unique("ik");
      const first = await post(alice, `Nginx proxy_pass ${word} drops the path`, `A trailing slash in proxy_pass ${word} replaces the matched location prefix.`);
      expectStatus(first, 201);
      const key = `similar-${unique()}`;
      const json = { title: `Nginx proxy_pass ${word} strips the location path`, body: `With a trailing slash proxy_pass ${word} replaces the location prefix.` };
      const keyed = () => call(server.url, "POST", "/v1/posts", { key: bob.key, json, headers: { "idempotency-key": key } });
      const answer = await keyed();
      expectStatus(answer, 201);
      expect(keysOf(answer.data)).toEqual(CREATED_NOTE_KEYS);
      expect((answer.data.similar as any[]).map((s) => s.id)).toEqual([first.data.id]);
      // A closer note written since would be listed by a fresh lookup; the replay is the first answer, byte for byte.
      const closer = await post(alice, json.title, json.body);
      expectStatus(closer, 201);
      expect((closer.data.similar as any[]).map((s) => s.id)).toContain(answer.data.id);
      const replay = await keyed();
      expect(replay.status).toBe(201);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.text).toBe(answer.text);
      expect(replay.data.similar).toEqual(answer.data.similar);
    });

    test("a note that supersedes another never lists the note it replaces", async () => {
      const word = unique("sp");
      const old = await post(alice, `Certbot renewal ${word} fails behind redirect`, `The HTTP challenge ${word} is redirected to HTTPS before the certificate exists.`);
      expectStatus(old, 201);
      const other = await post(bob, `Certbot renewal ${word} fails on redirect`, `Renewal ${word} fails when the HTTP challenge is redirected to HTTPS.`);
      expectStatus(other, 201);
      const res = await call(server.url, "POST", "/v1/posts", {
        key: alice.key,
        json: { title: `Certbot renewal ${word} fails behind a redirect`, body: `The HTTP challenge ${word} gets redirected to HTTPS; exempt /.well-known.`, supersedes: old.data.id },
      });
      expectStatus(res, 201);
      const ids = (res.data.similar as any[]).map((s) => s.id);
      expect(ids).not.toContain(old.data.id);
      expect(ids).toContain(other.data.id);
    });

    test("a 409 duplicate answer carries no similar list", async () => {
      const title = `Repeat ${unique()}`;
      expectStatus(await post(bob, title, "same body"), 201);
      const again = await post(bob, title, "same body");
      expect(again.status).toBe(409);
      expect(again.data.similar).toBeUndefined();
    });
  });

  describe("SEARCH_MEMORY_MB=0 (the database index's path)", () => {
    test("lists the near-duplicate and leaves unrelated notes out, as the postings do", async () => {
      const fts = await startServer({ engine, env: { SEARCH_MEMORY_MB: "0", POSTS_PER_HOUR: "0" } });
      try {
        const who = await register(fts.url);
        const other = await register(fts.url);
        for (const [title, body] of FILLER) expectStatus(await call(fts.url, "POST", "/v1/posts", { key: who.key, json: { title, body } }), 201);
        const first = await call(fts.url, "POST", "/v1/posts", { key: who.key, json: { title: "Postfix relay denied for outbound mail", body: "Add the network to mynetworks or authenticate with SASL; relay access denied otherwise." } });
        expectStatus(first, 201);
        const second = await call(fts.url, "POST", "/v1/posts", { key: other.key, json: { title: "Postfix says relay access denied", body: "Outbound mail is denied until mynetworks holds the sender's network or SASL is on." } });
        expectStatus(second, 201);
        expect((second.data.similar as any[]).map((s) => s.id)).toEqual([first.data.id]);
        const unrelated = await call(fts.url, "POST", "/v1/posts", { key: other.key, json: { title: "Sourdough starter smells of acetone", body: "Feed it twice a day; the smell means it is hungry." } });
        expect(unrelated.data.similar).toEqual([]);
      } finally {
        await fts.stop();
      }
    });
  });

  describe("SIMILAR_NOTES=0", () => {
    test("always []", async () => {
      const off = await startServer({ engine, env: { SIMILAR_NOTES: "0" } });
      try {
        const who = await register(off.url);
        const body = "Set vm.overcommit_memory=1 or background saves fail with fork errors.";
        expectStatus(await call(off.url, "POST", "/v1/posts", { key: who.key, json: { title: "Redis fork fails", body } }), 201);
        const res = await call(off.url, "POST", "/v1/posts", { key: who.key, json: { title: "Redis fork fails on save", body } });
        expectStatus(res, 201);
        expect(res.data.similar).toEqual([]);
      } finally {
        await off.stop();
      }
    });
  });
});
