// Upgrades from databases that builds on main made before two migration files
// were changed (a step is applied once, by date, so the change never reached
// them), and the refusal of a database that a newer release migrated. Looped
// over engines; each database is made by today's migrations, then taken back
// to what the older build left, then opened again.
// - SQLite 0005_agents / PostgreSQL 0001_agents without idempotency_keys.note_id
//   (5ee25af..bf0e820): every delete and every keyed write failed after the upgrade.
// - PostgreSQL 0004_create_note's first cairn_create_note (e5f4988, 8b6809d):
//   every plain create failed after the upgrade.
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { DatabaseFromNewerRelease } from "../../src/store/index.ts";
import { migrations as postgresMigrations } from "../../src/store/postgres/migrations.ts";
import { migrations as sqliteMigrations } from "../../src/store/sqlite/migrations.ts";
import type { IdempotencyCompletion, Store } from "../../src/store/types.ts";
import { freshTestDatabase, testEngines, type TestDatabase } from "../helpers/engines.ts";

const databases: TestDatabase[] = [];
afterAll(() => databases.forEach((db) => db.cleanup()));

/** Runs statements on the database directly, as an older build had left it. */
async function tamper(db: TestDatabase, statements: { sqlite?: string[]; postgres?: string[] }): Promise<void> {
  if (db.engine === "sqlite") {
    const sqlite = new Database(join(db.env.DATA_DIR, "cairn.db"));
    for (const statement of statements.sqlite ?? []) sqlite.exec(statement);
    sqlite.close();
  } else {
    const pg = new SQL(db.env.DATABASE_URL);
    for (const statement of statements.postgres ?? []) await pg.unsafe(statement);
    await pg.close();
  }
}

const T0 = 1_800_000_000_000;
const noteId = (n: number) => `00000000-0000-7000-8000-${String(n).padStart(12, "0")}`;

/** A keyed create: reserves `key` and creates note `n` answering `{"id": …}`, as POST /v1/posts does. */
async function keyedCreate(store: Store, contributorNo: number, key: string, n: number): Promise<void> {
  const token = crypto.randomUUID();
  const reservation = await store.reserveIdempotencyKey({
    contributorNo, key, fingerprint: key, token, now: T0 + n, expiresAt: T0 + 86_400_000, leasedUntil: T0 + 60_000, keepPerContributor: 1_000, pruneBatch: 32,
  });
  expect(reservation).toEqual({ kind: "reserved" });
  const completion: IdempotencyCompletion<unknown> = {
    contributorNo, key, token,
    answer: () => ({ status: 201, body: JSON.stringify({ id: noteId(n), title: `Note ${n}` }), noteId: noteId(n) }),
  };
  await store.createNote({ id: noteId(n), contributorNo, title: `Note ${n}`, body: `body ${n}`, tags: [], createdAt: T0 + n }, () => false, completion);
}

const replayOf = (store: Store, contributorNo: number, key: string) =>
  store.reserveIdempotencyKey({
    contributorNo, key, fingerprint: key, token: crypto.randomUUID(), now: T0 + 100, expiresAt: T0 + 86_400_000, leasedUntil: T0 + 60_000, keepPerContributor: 1_000, pruneBatch: 32,
  });

/** PostgreSQL 0004_create_note as e5f4988 shipped it: no `write` argument. */
const FIRST_CREATE_NOTE = `CREATE OR REPLACE FUNCTION cairn_create_note(
	expected_pk bigint, note_id text, author integer, title text, body text, tags text[], created_at bigint, vector text
) RETURNS TABLE (pk bigint, score integer, comment_count integer, seq bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	PERFORM pg_advisory_xact_lock(1096111176, author);
	IF (SELECT p.pk FROM posts p WHERE p.contributor_no = author ORDER BY p.pk DESC LIMIT 1) IS DISTINCT FROM expected_pk THEN
		RETURN;
	END IF;
	INSERT INTO posts AS p (id, contributor_no, title, body, tags, created_at)
		VALUES (note_id, author, cairn_create_note.title, cairn_create_note.body, cairn_create_note.tags, cairn_create_note.created_at)
		RETURNING p.pk, p.score, p.comment_count INTO pk, score, comment_count;
	INSERT INTO search_vectors AS v (pk, vector) VALUES (cairn_create_note.pk, cairn_create_note.vector);
	INSERT INTO note_tags AS t (tag, post_pk, score, created_at)
		SELECT DISTINCT tag, cairn_create_note.pk, cairn_create_note.score, cairn_create_note.created_at FROM unnest(cairn_create_note.tags) tag;
	INSERT INTO search_log AS l (pk) VALUES (cairn_create_note.pk) RETURNING l.seq INTO seq;
	RETURN NEXT;
END
$$`;

for (const engine of testEngines()) describe(engine, () => {
  test("a database whose agents step had no idempotency_keys.note_id takes deletes and keyed writes after the upgrade", async () => {
    const db = await freshTestDatabase(engine);
    databases.push(db);
    let store = db.open();
    await store.migrate();
    const { contributorNo } = await store.createContributor({ email: "u@example.org", keyPrefix: "cairn_uuuuuu", keyDigest: new Uint8Array(32), createdAt: 0 });
    await keyedCreate(store, contributorNo, "k1", 1);
    await keyedCreate(store, contributorNo, "k2", 2);
    expect(await store.deleteNote(noteId(2), contributorNo)).toBe("deleted");
    await store.close();
    // The older build: no note_id column, and its delete of note 2 left the stored answer in place.
    await tamper(db, {
      sqlite: ["DROP INDEX idempotency_keys_note", "ALTER TABLE idempotency_keys DROP COLUMN note_id", `UPDATE idempotency_keys SET response = '{"id":"${noteId(2)}"}' WHERE key = 'k2'`],
      postgres: ["ALTER TABLE idempotency_keys DROP COLUMN note_id", `UPDATE idempotency_keys SET response = '{"id":"${noteId(2)}"}' WHERE key = 'k2'`],
    });

    store = db.open();
    await store.migrate();
    try {
      // The answer about a note deleted before the upgrade is emptied, as the delete would have done.
      expect(await replayOf(store, contributorNo, "k2")).toEqual({ kind: "gone" });
      expect(await replayOf(store, contributorNo, "k1")).toMatchObject({ kind: "replay", answer: { status: 201 } });
      // Deletes work, and empty the answers about the note.
      expect(await store.deleteNote(noteId(1), contributorNo)).toBe("deleted");
      expect(await replayOf(store, contributorNo, "k1")).toEqual({ kind: "gone" });
      // Keyed writes work.
      await keyedCreate(store, contributorNo, "k3", 3);
      expect(await replayOf(store, contributorNo, "k3")).toMatchObject({ kind: "replay", answer: { status: 201 } });
    } finally {
      await store.close();
    }
    // The repair is made once: opening again changes nothing.
    store = db.open();
    await store.migrate();
    await store.close();
  });

  test("a database a newer release migrated is refused, and left as it was", async () => {
    const db = await freshTestDatabase(engine);
    databases.push(db);
    let store = db.open();
    await store.migrate();
    await store.close();
    const newest = (engine === "sqlite" ? sqliteMigrations : postgresMigrations).at(-1)!.createdAt;
    const step = `INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('from a newer release', ${newest + 1})`;
    await tamper(db, { sqlite: [step], postgres: [step] });
    store = db.open();
    try {
      const refused = await store.migrate().then(() => null, (error: unknown) => error);
      expect(refused).toBeInstanceOf(DatabaseFromNewerRelease);
      expect((refused as Error).message).toContain("newer Cairn release");
    } finally {
      await store.close();
    }
  });

  if (engine === "postgres")
    test("a database with cairn_create_note's first signature creates notes after the upgrade", async () => {
      const db = await freshTestDatabase(engine);
      databases.push(db);
      let store = db.open();
      await store.migrate();
      const { contributorNo } = await store.createContributor({ email: "c@example.org", keyPrefix: "cairn_cccccc", keyDigest: new Uint8Array(32), createdAt: 0 });
      await store.close();
      await tamper(db, { postgres: ["DROP FUNCTION cairn_create_note(bigint, boolean, text, integer, text, text, text[], bigint, text)", FIRST_CREATE_NOTE] });

      store = db.open();
      await store.migrate();
      try {
        const made = await store.createNote({ id: noteId(7), contributorNo, title: "After the upgrade", body: "b", tags: ["t"], createdAt: T0 }, () => false);
        expect(made).toMatchObject({ id: noteId(7) });
        expect(await store.getNote(noteId(7))).toMatchObject({ title: "After the upgrade", tags: ["t"] });
      } finally {
        await store.close();
      }
      const pg = new SQL(db.env.DATABASE_URL);
      const signatures = await pg.unsafe("SELECT oid::regprocedure::text AS signature FROM pg_proc WHERE proname = 'cairn_create_note'");
      await pg.close();
      expect(signatures.map((row: { signature: string }) => row.signature)).toEqual(["cairn_create_note(bigint,boolean,text,integer,text,text,text[],bigint,text)"]);
    });
});
