// Issue 10, point 4: any number of `cairn serve` processes on one PostgreSQL
// database behave as one service. Two replicas (two processes, one database):
// a note written through one is read, voted, commented and deleted through the
// other (there at once, at the other within the lease: also while it answers
// the note from memory, and when the change is made in the database by
// another program); a revoke is refused on the very next request at both; counts
// stay exact and the duplicate-post rule holds under races across replicas;
// each welcome e-mail is sent once. PostgreSQL only (SQLite's several
// processes on one DATA_DIR are multi-process.test.ts).
import { SQL } from "bun";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { adminJson, call, createNote, expectError, expectStatus, NO_BREAKERS, register, unique, type Contributor } from "../helpers/api.ts";
import { MailSink } from "../helpers/mail-sink.ts";
import { freshDatabase, testEngines } from "../helpers/postgres.ts";
import { startServer, type RunningServer } from "../helpers/server.ts";
import { freePort } from "../helpers/ports.ts";

const onPostgres = testEngines().includes("postgres");

describe.skipIf(!onPostgres)("two replicas on one PostgreSQL database", () => {
  let a: RunningServer;
  let b: RunningServer;
  let sink: MailSink;
  let author: Contributor;
  let reader: Contributor;

  beforeAll(async () => {
    sink = new MailSink(await freePort());
    await sink.up();
    const env = {
      ...NO_BREAKERS,
      DATABASE_URL: await freshDatabase("replicas"),
      EMAIL_ENABLED: "1",
      SMTP_URL: sink.url,
      EMAIL_FROM: "cairn@example.org",
      WELCOME_MAILS_PER_ADDRESS_PER_DAY: "0",
      SEARCH_RESULTS: "100",
    };
    // Started together on an empty database: both migrate, under the advisory lock, once.
    [a, b] = await Promise.all([startServer({ env }), startServer({ env })]);
    author = await register(a.url);
    reader = await register(b.url);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await sink?.down();
  });

  const get = (server: RunningServer, id: string, key = reader.key) => call(server.url, "GET", `/v1/posts/${id}`, { key });
  const searchIds = async (server: RunningServer, query: string): Promise<string[]> => {
    const res = await call(server.url, "POST", "/v1/search", { key: reader.key, json: { query } });
    expectStatus(res, 200);
    return res.data.results.map((r: { id: string }) => r.id);
  };
  /** The ids a search answers once `done` holds, trying for up to `ms` (another replica's writes: within a second). */
  const searchUntil = async (server: RunningServer, query: string, done: (ids: string[]) => boolean, ms = 1_000) => {
    const deadline = Date.now() + ms;
    let ids = await searchIds(server, query);
    while (!done(ids) && Date.now() < deadline) {
      await Bun.sleep(20);
      ids = await searchIds(server, query);
    }
    return ids;
  };

  /**
   * Another replica's change to a note is in its GETs within the lease (LOG_LEASE_MS,
   * src/store/postgres/note-views.ts: a quarter second): `check` is tried for up to a second, then
   * must hold. (The replica that made a change shows it at once: checked without this.)
   */
  const within = async (check: () => Promise<unknown>) => {
    const deadline = Date.now() + 1_000;
    for (;;) {
      try {
        await check();
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await Bun.sleep(10);
      }
    }
  };

  test("both started on one empty database and name the engine in their start-up line, never the URL", () => {
    for (const server of [a, b]) {
      expect(server.logs()).toContain('"engine":"postgres"');
      expect(server.logs()).not.toContain(server.databaseUrl!);
    }
  });

  test("written through one, read, voted, commented and deleted through the other: at once there, within the lease at the other", async () => {
    const note = await createNote(a.url, author.key, { title: `Replica ${unique()}`, body: "Seen everywhere at once." });
    expect((await get(b, note.id)).data).toEqual(note);
    expect((await call(b.url, "GET", `/v1/public/posts/${note.id}`)).data.id).toBe(note.id);

    const vote = await call(b.url, "POST", `/v1/posts/${note.id}/vote`, { key: reader.key, json: { vote: "up" } });
    expectStatus(vote, 200);
    expect((await get(b, note.id)).data.score).toBe(1);
    await within(async () => expect((await get(a, note.id)).data.score).toBe(1));
    expectStatus(await call(a.url, "POST", `/v1/posts/${note.id}/comments`, { key: reader.key, json: { body: "from a" } }), 201);
    expectStatus(await call(b.url, "POST", `/v1/posts/${note.id}/comments`, { key: author.key, json: { body: "from b" } }), 201);
    expect((await get(b, note.id)).data.comment_count).toBe(2);
    await within(async () => expect((await get(a, note.id)).data.comment_count).toBe(2));
    for (const server of [a, b]) {
      const list = await call(server.url, "GET", `/v1/posts/${note.id}/comments`, { key: reader.key });
      expect(list.data.comments.map((c: { body: string }) => c.body)).toEqual(["from a", "from b"]);
    }
    const me = await call(b.url, "GET", "/v1/me", { key: author.key });
    expect(me.data.recent_posts[0].id).toBe(note.id);

    // Search follows another replica's writes within a second (each replica's postings follow search_log).
    const found = await searchUntil(b, note.title, (ids) => ids[0] === note.id);
    expect(found[0]).toBe(note.id);

    expectStatus(await call(b.url, "DELETE", `/v1/posts/${note.id}`, { key: author.key }), 200);
    expectError(await get(b, note.id), 404, "not_found");
    expectError(await call(b.url, "GET", `/v1/public/posts/${note.id}`), 404, "not_found");
    await within(async () => {
      expectError(await get(a, note.id), 404, "not_found");
      expectError(await call(a.url, "GET", `/v1/public/posts/${note.id}`), 404, "not_found");
    });
    const gone = await searchUntil(a, note.title, (ids) => !ids.includes(note.id));
    expect(gone).not.toContain(note.id);
  });

  test("a note already read at both replicas: every change through either is in the next read there and within the lease at the other, and many reads at once agree", async () => {
    // Each replica answers notes it read from memory while the change log says they are current (src/store/postgres/note-views.ts).
    const older = await createNote(a.url, author.key, { title: `Read before ${unique()}`, body: "Kept by both replicas after a read." });
    for (const server of [a, b]) expect((await get(server, older.id)).data).toEqual(older);
    expectStatus(await call(b.url, "POST", `/v1/posts/${older.id}/vote`, { key: reader.key, json: { vote: "up" } }), 200);
    expect((await get(b, older.id)).data).toEqual({ ...older, score: 1 });
    await within(async () => expect((await get(a, older.id)).data).toEqual({ ...older, score: 1 }));
    expectStatus(await call(a.url, "POST", `/v1/posts/${older.id}/comments`, { key: reader.key, json: { body: "seen?" } }), 201);
    expect((await get(a, older.id)).data).toEqual({ ...older, score: 1, comment_count: 1 });
    await within(async () => expect((await get(b, older.id)).data).toEqual({ ...older, score: 1, comment_count: 1 }));
    const newer = await createNote(b.url, author.key, { title: `Read after ${unique()}`, body: "Supersedes the other.", supersedes: older.id });
    expect((await get(b, older.id)).data).toEqual({ ...older, score: 1, comment_count: 1, superseded_by: newer.id });
    await within(async () => expect((await get(a, older.id)).data).toEqual({ ...older, score: 1, comment_count: 1, superseded_by: newer.id }));
    // Concurrent reads of the same and other notes (one statement for many requests): each gets its own note.
    const reads = await Promise.all(Array.from({ length: 40 }, (_, i) => get(i % 2 ? a : b, i % 3 ? older.id : newer.id)));
    for (const [i, res] of reads.entries()) expect(res.data.id).toBe(i % 3 ? older.id : newer.id);
    expectStatus(await call(a.url, "DELETE", `/v1/posts/${newer.id}`, { key: author.key }), 200);
    expectError(await get(a, newer.id), 404, "not_found");
    expect((await get(a, older.id)).data.superseded_by).toBeNull();
    await within(async () => {
      expectError(await get(b, newer.id), 404, "not_found");
      expect((await get(b, older.id)).data.superseded_by).toBeNull();
    });
    expectStatus(await call(b.url, "DELETE", `/v1/posts/${older.id}`, { key: author.key }), 200);
    expectError(await get(b, older.id), 404, "not_found");
    await within(async () => expectError(await get(a, older.id), 404, "not_found"));
  });

  test("GETs racing writes: while one replica serves a stream of GETs from memory, each vote, comment and delete through the other is in its GETs within the lease, and stays", async () => {
    // Each replica answers notes it read from memory while its note log says they are current
    // (src/store/postgres/note-views.ts): reads in flight across a change must never leave an old view behind.
    const notes = await Promise.all(Array.from({ length: 6 }, (_, i) => createNote(a.url, author.key, { title: `Raced ${i} ${unique()}`, body: `A note read while it changes, ${i}.` })));
    const voters = await Promise.all(Array.from({ length: 12 }, (_, i) => register(i % 2 ? a.url : b.url)));
    let streaming = true;
    const stream = Promise.all(
      Array.from({ length: 6 }, async (_, lane) => {
        let reads = 0;
        while (streaming) {
          const res = await get(b, notes[(lane + reads) % notes.length].id);
          if (res.status !== 200 && res.status !== 404) throw new Error(`GET answered ${res.status}`);
          reads++;
        }
        return reads;
      }),
    );
    const [target, ...others] = notes;
    for (const [i, voter] of voters.entries()) {
      expectStatus(await call(a.url, "POST", `/v1/posts/${target.id}/vote`, { key: voter.key, json: { vote: "up" } }), 200);
      await within(async () => expect((await get(b, target.id)).data.score).toBe(i + 1));
      expectStatus(await call(a.url, "POST", `/v1/posts/${target.id}/comments`, { key: voter.key, json: { body: `raced ${i}` } }), 201);
      await within(async () => expect((await get(b, target.id)).data.comment_count).toBe(i + 1));
    }
    for (const note of others) {
      expectStatus(await call(a.url, "DELETE", `/v1/posts/${note.id}`, { key: author.key }), 200);
      await within(async () => expectError(await get(b, note.id), 404, "not_found"));
    }
    // A view read back while a change raced it would stay old: past another lease, every answer is the last state.
    await Bun.sleep(500);
    for (const note of others) expectError(await get(b, note.id), 404, "not_found");
    streaming = false;
    expect(Math.min(...(await stream))).toBeGreaterThan(0);
    const final = await get(b, target.id);
    expect(final.data).toEqual({ ...target, score: voters.length, comment_count: voters.length });
  });

  test("a change made in the database by another program is in every replica's GETs within the lease", async () => {
    // The note log is written by a trigger on the notes table, not by Cairn's statements.
    const note = await createNote(a.url, author.key, { title: `Changed outside ${unique()}`, body: "Edited by hand in the database." });
    for (const server of [a, b]) for (let i = 0; i < 2; i++) expect((await get(server, note.id)).data).toEqual(note);
    for (const server of [a, b]) expect((await call(server.url, "GET", `/v1/public/posts/${note.id}`)).data).toEqual(note);
    const db = new SQL(a.databaseUrl!, { max: 1 });
    try {
      await db`UPDATE posts SET score = 42 WHERE id = ${note.id}`;
      for (const server of [a, b]) await within(async () => expect((await get(server, note.id)).data.score).toBe(42));
      await db`UPDATE posts SET comment_count = 7 WHERE id = ${note.id}`;
      const changed = Date.now();
      for (const server of [a, b]) {
        let page = await call(server.url, "GET", `/v1/public/posts/${note.id}`);
        while (page.data.comment_count !== 7 && Date.now() - changed < 1_000) {
          await Bun.sleep(10);
          page = await call(server.url, "GET", `/v1/public/posts/${note.id}`);
        }
        expect(page.data.comment_count).toBe(7);
      }
      expect(Date.now() - changed).toBeLessThan(1_000);
      await db`DELETE FROM posts WHERE id = ${note.id}`;
      for (const server of [a, b]) await within(async () => expectError(await get(server, note.id), 404, "not_found"));
    } finally {
      await db.close();
    }
  });

  test("a burst of writes through one replica: the other finds every note within a second, and every delete is gone within a second", async () => {
    const word = `burst${unique().replace(/[^a-z0-9]/gi, "").toLowerCase()}`;
    const writers = await Promise.all(Array.from({ length: 10 }, () => register(a.url)));
    const burst = await Promise.all(
      Array.from({ length: 60 }, (_, i) => createNote(a.url, writers[i % writers.length].key, { title: `Burst ${i} ${word}`, body: `burst note ${i} about ${word}` })),
    );
    const written = Date.now();
    // Its own writes: on the writer's very next search.
    expect((await searchIds(a, word)).length).toBe(60);
    const seen = await searchUntil(b, word, (ids) => ids.length === 60, 1_000);
    expect(Date.now() - written).toBeLessThan(1_500); // one second, plus the last request's own time on a busy test machine
    expect(new Set(seen)).toEqual(new Set(burst.map((note) => note.id)));

    const doomed = burst.slice(0, 30);
    await Promise.all(doomed.map((note, i) => call(a.url, "DELETE", `/v1/posts/${note.id}`, { key: writers[i % writers.length].key })));
    const deleted = Date.now();
    expect((await searchIds(a, word)).length).toBe(30);
    const left = await searchUntil(b, word, (ids) => ids.length === 30, 1_000);
    expect(Date.now() - deleted).toBeLessThan(1_500);
    expect(new Set(left)).toEqual(new Set(burst.slice(30).map((note) => note.id)));
  });

  test("a revoke is refused on the very next request at both replicas; activate restores it at both", async () => {
    const who = await register(a.url);
    for (const server of [a, b]) expectStatus(await call(server.url, "GET", "/v1/me", { key: who.key }), 200);
    expect(await adminJson(a, "revoke", String(who.no))).toEqual({ contributor_no: who.no, active: false });
    for (const server of [a, b]) expectError(await call(server.url, "GET", "/v1/me", { key: who.key }), 401, "unauthorized");
    await adminJson(b, "activate", String(who.no));
    for (const server of [a, b]) expectStatus(await call(server.url, "GET", "/v1/me", { key: who.key }), 200);
    // The listing verb reads the same database.
    const listed = await adminJson(a, "contributors", "--email", who.email.toUpperCase());
    expect(listed).toEqual([{ contributor_no: who.no, email: who.email, active: true, created_at: who.createdAt, post_count: 0 }]);
    const backup = await a.admin("backup", "/tmp/never.db");
    expect(backup.code).toBe(2);
    expect(backup.stderr).toContain("pg_dump");
  });

  test("votes and comments through both replicas at once: exact score and count", async () => {
    const note = await createNote(a.url, author.key);
    const crowd = await Promise.all(Array.from({ length: 30 }, (_, i) => register(i % 2 ? a.url : b.url)));
    const votes = await Promise.all(
      crowd.flatMap((who, i) => [
        call((i % 2 ? a : b).url, "POST", `/v1/posts/${note.id}/vote`, { key: who.key, json: { vote: i < 20 ? "up" : "down" } }),
        call((i % 2 ? b : a).url, "POST", `/v1/posts/${note.id}/vote`, { key: who.key, json: { vote: i < 20 ? "up" : "down" } }),
      ]),
    );
    for (const res of votes) expectStatus(res, 200);
    const comments = await Promise.all(crowd.map((who, i) => call((i % 2 ? a : b).url, "POST", `/v1/posts/${note.id}/comments`, { key: who.key, json: { body: `c${i}` } })));
    for (const res of comments) expectStatus(res, 201);
    expect(comments.map((res) => res.data.comment_count).sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    for (const server of [a, b]) {
      const read = await get(server, note.id);
      expect(read.data.score).toBe(20 - 10);
      expect(read.data.comment_count).toBe(30);
    }
  });

  test("identical posts of one contributor racing on both replicas make one note; the rest are 409", async () => {
    const who = await register(a.url);
    const same = { title: `Twin ${unique()}`, body: "Posted twice at once.", tags: ["race"] };
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => call((i % 2 ? a : b).url, "POST", "/v1/posts", { key: who.key, json: same })));
    expect(answers.filter((res) => res.status === 201)).toHaveLength(1);
    const created = answers.find((res) => res.status === 201)!.data.id;
    for (const res of answers.filter((r) => r.status !== 201)) {
      expectError(res, 409, "duplicate_post");
      expect(res.data.error.post_id).toBe(created);
    }
    expect((await call(b.url, "GET", "/v1/me", { key: who.key })).data.post_count).toBe(1);
  });

  test("each welcome e-mail is sent exactly once, though both replicas send", async () => {
    const addresses = Array.from({ length: 8 }, () => `${unique("welcome")}@example.org`);
    await Promise.all(addresses.map((email, i) => register(i % 2 ? a.url : b.url, { email })));
    const deadline = Date.now() + 20_000;
    while (addresses.some((address) => sink.to(address).length === 0) && Date.now() < deadline) await Bun.sleep(50);
    await Bun.sleep(1_500); // room for a second send, if a lease were shared
    for (const address of addresses) expect(sink.to(address)).toHaveLength(1);
    const stats = await adminJson(a, "stats");
    expect(stats.engine).toBe("postgres");
    expect(stats.email_outbox.pending).toBe(0);
  }, 30_000);
});
