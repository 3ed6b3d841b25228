// Issue 10, point 5: `cairn admin copy --to postgres://…` moves a SQLite
// instance into an empty PostgreSQL database. After the move every key works,
// every note, comment, vote and counter is there, search finds the notes, new
// numbers continue after the copied ones, and a second copy into the same
// database (or any non-empty one) is refused. PostgreSQL only.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { adminJson, call, createNote, expectStatus, NO_BREAKERS, register, type Contributor } from "../helpers/api.ts";
import { freshDatabase, testEngines } from "../helpers/postgres.ts";
import { startServer, tempDir, type RunningServer } from "../helpers/server.ts";

const onPostgres = testEngines().includes("postgres");

describe.skipIf(!onPostgres)("cairn admin copy --to postgres://…", () => {
  const dataDir = tempDir();
  let target: string;
  let moved: RunningServer;
  let people: Contributor[];
  let notes: { id: string; title: string }[];
  /** A note superseding notes[2]. */
  let replacement: { id: string; title: string };
  let before: any;
  let copyRun: { code: number; stdout: string; stderr: string };
  let keyedVote: Awaited<ReturnType<typeof call>>;

  beforeAll(async () => {
    const source = await startServer({ dataDir, env: NO_BREAKERS });
    people = [await register(source.url), await register(source.url), await register(source.url)];
    notes = [];
    for (const [i, text] of ["Quokka migrations in the wild", "Wombat replicas \u0000 with a NUL", "Numbat backups"].entries()) {
      notes.push(await createNote(source.url, people[i % 2].key, { title: text, body: `Body ${i}: ${text}`, tags: [`t${i}`] }));
    }
    replacement = await createNote(source.url, people[0].key, { title: "Numbat backups, corrected", body: "Body 2b", tags: ["t2"], supersedes: notes[2].id });
    // Votes and event counters on composite keys: with --batch 1 below every keyset page boundary is crossed, also inside one note's votes and one day's counters.
    const votes: [number, number, string][] = [[0, 1, "up"], [0, 2, "up"], [1, 0, "down"], [2, 2, "up"]];
    for (const [note, who, vote] of votes) expectStatus(await call(source.url, "POST", `/v1/posts/${notes[note].id}/vote`, { key: people[who].key, json: { vote } }), 200);
    for (const json of [{ event: "copy_command" }, { event: "page_view", post_id: notes[1].id }]) expectStatus(await call(source.url, "POST", "/v1/web/events", { json }), 202);
    expectStatus(await call(source.url, "POST", `/v1/posts/${notes[0].id}/comments`, { key: people[2].key, json: { body: "kept?" } }), 201);
    // Issue 19: an idempotent write's stored answer moves with the data (a vote on one's own note: a stored 403 that changes nothing else).
    keyedVote = await call(source.url, "POST", `/v1/posts/${notes[0].id}/vote`, { key: people[0].key, json: { vote: "down" }, headers: { "idempotency-key": "moved-key" } });
    expectStatus(keyedVote, 403);
    expectStatus(await call(source.url, "GET", `/v1/public/posts/${notes[0].id}`, { headers: { accept: "text/html" } }), 200);
    await adminJson(source, "revoke", String(people[2].no));
    before = await adminJson(source, "stats");
    await source.stop();

    target = await freshDatabase("copy");
    copyRun = await source.admin("copy", "--to", target, "--batch", "1");
    moved = await startServer({ env: { ...NO_BREAKERS, DATABASE_URL: target } });
  });

  afterAll(async () => {
    await moved?.stop();
  });

  test("the copy reports every table with its rows and checksum, and never prints the URL", () => {
    expect(copyRun.code).toBe(0);
    const report = JSON.parse(copyRun.stdout);
    expect(report.tables.contributors.rows).toBe(3);
    expect(report.tables.posts.rows).toBe(4);
    expect(report.tables.comments.rows).toBe(1);
    expect(report.tables.votes.rows).toBe(4);
    expect(report.tables.web_event_counts.rows).toBe(2);
    for (const table of Object.values(report.tables) as { sha256: string }[]) expect(table.sha256).toMatch(/^[0-9a-f]{64}$/);
    // The superseded note is not indexed, as on the engine itself.
    expect(report.search_indexed).toBe(3);
    expect(copyRun.stdout + copyRun.stderr).not.toContain(target);
  });

  test("an Idempotency-Key used before the move replays its first answer after it, and writes nothing", async () => {
    expect(JSON.parse(copyRun.stdout).tables.idempotency_keys.rows).toBe(1);
    const again = await call(moved.url, "POST", `/v1/posts/${notes[0].id}/vote`, { key: people[0].key, json: { vote: "down" }, headers: { "idempotency-key": "moved-key" } });
    expect(again.status).toBe(403);
    expect(again.text).toBe(keyedVote.text);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });

  test("progress goes to stderr: a line per step when it ends, the whole copy at 100% after the verification", () => {
    const lines = copyRun.stderr.trim().split("\n");
    for (const line of lines) expect(line).toMatch(/^cairn admin copy: /);
    expect(lines).toContainEqual(expect.stringMatching(/^cairn admin copy: posts done: 4 of 4 rows \(100%\) in [\d.]+ s/));
    expect(lines).toContainEqual(expect.stringMatching(/^cairn admin copy: votes done: 4 of 4 rows \(100%\)/));
    // The tags' step is its own (its time was once reported as the last table's).
    expect(lines).toContainEqual(expect.stringMatching(/^cairn admin copy: note tags done in [\d.]+ s/));
    const verified = lines.at(-1)!.match(/^cairn admin copy: verify done: (\d+) of (\d+) rows \(100%\).*; whole copy 100%/);
    expect(verified?.[1]).toBe(verified?.[2]);
    const report = JSON.parse(copyRun.stdout);
    expect(Number(verified?.[1])).toBe(Object.values(report.tables as Record<string, { rows: number }>).reduce((sum, t) => sum + t.rows, 0));
  });

  test("after the move: keys work, revoked stays revoked, notes, votes, comments and counters are there", async () => {
    const after = await adminJson(moved, "stats");
    expect(after.engine).toBe("postgres");
    const { engine: _e, ...same } = after;
    const { engine: _s, ...was } = before;
    expect(same).toEqual(was);
    for (const who of people.slice(0, 2)) {
      const me = await call(moved.url, "GET", "/v1/me", { key: who.key });
      expectStatus(me, 200);
      expect(me.data.contributor_no).toBe(who.no);
    }
    expect((await call(moved.url, "GET", "/v1/me", { key: people[2].key })).status).toBe(401);
    for (const note of notes) {
      const read = await call(moved.url, "GET", `/v1/posts/${note.id}`, { key: people[0].key });
      const after = [{ score: 2, comment_count: 1 }, { score: -1 }, { score: 1, superseded_by: replacement.id }][notes.indexOf(note)];
      expect(read.data).toEqual({ ...note, ...after });
    }
    const comments = await call(moved.url, "GET", `/v1/posts/${notes[0].id}/comments`, { key: people[0].key });
    expect(comments.data.comments.map((c: { body: string }) => c.body)).toEqual(["kept?"]);
  });

  test("search finds the copied notes; new contributors and notes continue the numbering", async () => {
    const found = await call(moved.url, "POST", "/v1/search", { key: people[0].key, json: { query: "wombat replica" } });
    expect(found.data.results[0].id).toBe(notes[1].id);
    const newcomer = await register(moved.url);
    expect(newcomer.no).toBe(4);
    const fresh = await createNote(moved.url, newcomer.key, { title: "After the move" });
    expectStatus(await call(moved.url, "DELETE", `/v1/posts/${fresh.id}`, { key: newcomer.key }), 200);
    expectStatus(await call(moved.url, "POST", `/v1/posts/${notes[1].id}/vote`, { key: newcomer.key, json: { vote: "down" } }), 200);
  });

  test("superseding and tag words survive the move: the superseded note stays out of search, its links stay", async () => {
    const search = async (query: string) =>
      (await call(moved.url, "POST", "/v1/search", { key: people[0].key, json: { query } })).data.results.map((r: { id: string }) => r.id);
    expect(await search("numbat")).toEqual([replacement.id]);
    expect(await search("tag:t2")).toEqual([replacement.id]);
    expect(await search("tag:t0")).toEqual([notes[0].id]);
    expect((await call(moved.url, "GET", `/v1/posts/${replacement.id}`, { key: people[0].key })).data.supersedes).toBe(notes[2].id);
    // Deleting the newer note after the move puts the older one back.
    expectStatus(await call(moved.url, "DELETE", `/v1/posts/${replacement.id}`, { key: people[0].key }), 200);
    expect(await search("tag:t2")).toEqual([notes[2].id]);
  });

  test("the foreign keys dropped for the load are back, as the migrations make them", async () => {
    const fresh = await freshDatabase("migrated");
    expect((await moved.admin("stats", "--database-url", fresh)).code).toBe(0); // migrates it
    const keys = async (url: string) => {
      const sql = new Bun.SQL(url, { max: 1 });
      const rows = await sql`SELECT conrelid::regclass::text AS t, conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE contype = 'f' ORDER BY 1, 2`;
      await sql.close();
      return [...rows];
    };
    const expected = await keys(fresh);
    expect(expected.length).toBeGreaterThan(0);
    expect(await keys(target)).toEqual(expected);
  });

  test("a second copy into the same database, or into one holding other tables, is refused", async () => {
    const again = await moved.admin("copy", "--to", target, "--data-dir", dataDir);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already holds Cairn data");
    const other = await freshDatabase("other");
    const sql = new Bun.SQL(other, { max: 1 });
    await sql`CREATE TABLE invoices (id int)`;
    await sql.close();
    const refused = await moved.admin("copy", "--to", other, "--data-dir", dataDir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("not empty");
    expect((await moved.admin("copy")).code).toBe(2);
  });
});

describe.skipIf(!onPostgres)("cairn admin copy: a failure leaves nothing behind", () => {
  test("a row that breaks a foreign key fails the copy at the end of its one transaction: no row is left, and a retry after the fix is accepted", async () => {
    const dataDir = tempDir();
    const source = await startServer({ dataDir, env: NO_BREAKERS });
    const author = await register(source.url);
    await createNote(source.url, author.key, { title: "Kept only if the whole copy is" });
    await source.stop();
    // A vote on a note that does not exist (SQLite does not check it with foreign_keys off): the target's key refuses it.
    const sqlite = new Database(`${dataDir}/cairn.db`);
    sqlite.exec("PRAGMA foreign_keys = OFF");
    sqlite.exec(`INSERT INTO votes (post_pk, contributor_no, value, created_at) VALUES (999999, ${author.no}, 1, 0)`);
    sqlite.close();

    const target = await freshDatabase("broken");
    const failed = await source.admin("copy", "--to", target);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("the copy failed");
    expect(failed.stderr).toContain("foreign key");
    expect(failed.stderr).not.toContain(target);
    const sql = new Bun.SQL(target, { max: 1 });
    const [{ contributors, posts, votes, keys }] = await sql`
      SELECT (SELECT count(*)::int FROM contributors) AS contributors, (SELECT count(*)::int FROM posts) AS posts,
             (SELECT count(*)::int FROM votes) AS votes, (SELECT count(*)::int FROM pg_constraint WHERE contype = 'f') AS keys`;
    await sql.close();
    expect({ contributors, posts, votes }).toEqual({ contributors: 0, posts: 0, votes: 0 });
    expect(keys).toBeGreaterThan(0); // the keys dropped for the load came back with the rollback

    const fix = new Database(`${dataDir}/cairn.db`);
    fix.exec("DELETE FROM votes WHERE post_pk = 999999");
    fix.close();
    const retried = await source.admin("copy", "--to", target);
    expect(retried.code).toBe(0);
    expect(JSON.parse(retried.stdout).tables.posts.rows).toBe(1);
  });
});

describe.skipIf(!onPostgres)("cairn admin copy while the SQLite server still takes writes", () => {
  test("the copy says that the source took writes while it was copied (they are not in the target); a quiet source gets no such word", async () => {
    const source = await startServer({ env: NO_BREAKERS });
    try {
      const writer = await register(source.url);
      await createNote(source.url, writer.key, { title: "before the copy" });
      let writing = true;
      const load = (async () => {
        for (let i = 0; writing; i++) await call(source.url, "POST", "/v1/posts", { key: writer.key, json: { title: `during ${i}`, body: `written during the copy ${i}` } });
      })();
      const live = await source.admin("copy", "--to", await freshDatabase("copylive"));
      writing = false;
      await load;
      expect(live.code).toBe(0);
      expect(live.stderr).toContain("took writes while it was copied");

      const quiet = await source.admin("copy", "--to", await freshDatabase("copyquiet"));
      expect(quiet.code).toBe(0);
      expect(quiet.stderr).not.toContain("took writes");
    } finally {
      await source.stop();
    }
  }, 60_000);
});
