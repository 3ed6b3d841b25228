// Applies the embedded drizzle-kit migrations (migrations.ts) in order, each
// once, under a transaction-scoped advisory lock: replicas that start together
// migrate once (the second waits, then finds the steps applied). A database
// a newer release migrated is refused (DatabaseFromNewerRelease); steps whose
// file was changed after builds had applied it are repaired (repairEditedSteps).
import { sql } from "drizzle-orm";
import { refuseNewerDatabase, UnsuitableDatabase } from "../embedded-migrations.ts";
import type { Db, Tx } from "./connection.ts";
import { migrations } from "./migrations.ts";

const MIGRATIONS_TABLE = "__drizzle_migrations";
/** pg_advisory_xact_lock key of the migration step: "cairn" as a number. */
const MIGRATION_LOCK = 0x636169726e;

export async function migrateDatabase(db: Db): Promise<void> {
  await db.transaction(async (tx) => {
    // Held until COMMIT: a second process waits here, then finds the steps applied.
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await tx.execute(
      sql.raw(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (id serial PRIMARY KEY, hash text NOT NULL, created_at bigint)`),
    );
    const last = await tx.execute<{ created_at: string }>(
      sql.raw(`SELECT created_at FROM ${MIGRATIONS_TABLE} ORDER BY created_at DESC LIMIT 1`),
    );
    const applied = last.length > 0 ? Number(last[0].created_at) : -Infinity;
    refuseNewerDatabase("the PostgreSQL database", last.length > 0 ? applied : null, migrations);
    if (last.length === 0) await refuseNarrowEncoding(tx);
    for (const migration of migrations) {
      if (applied >= migration.createdAt) continue;
      for (const statement of migration.statements) await tx.execute(sql.raw(statement));
      await tx.execute(sql`INSERT INTO ${sql.raw(MIGRATIONS_TABLE)} (hash, created_at) VALUES (${migration.hash}, ${migration.createdAt})`);
    }
    await repairEditedSteps(tx);
  });
}

/** Server encodings that hold every character a note may carry (SQL_ASCII stores the client's UTF-8 bytes as they come). */
const WIDE_ENCODINGS = new Set(["UTF8", "SQL_ASCII"]);

/**
 * Before the first step: a database whose encoding is not UTF-8 is refused.
 * `createdb` takes its template's encoding, which initdb chose from the
 * cluster's locale (LATIN1 under de_DE or en_US.ISO-8859-1, for instance),
 * and such a database took every write holding a character outside it (an
 * emoji, a Polish or CJK title, an e-mail address) as a 500. A database
 * migrated already is left to run as it did (docs/deploy.md says how to move it).
 */
async function refuseNarrowEncoding(tx: Tx): Promise<void> {
  const [{ encoding, name }] = await tx.execute<{ encoding: string; name: string }>(
    sql.raw(`SELECT pg_encoding_to_char(encoding) AS encoding, datname AS name FROM pg_database WHERE datname = current_database()`),
  );
  if (WIDE_ENCODINGS.has(encoding)) return;
  throw new UnsuitableDatabase(
    `the PostgreSQL database ${name} has encoding ${encoding}, which cannot hold every character a note may carry; ` +
      `make it again as UTF-8 (createdb --encoding UTF8 --template template0 --locale C.UTF-8 --owner cairn ${name}; docs/deploy.md, "PostgreSQL and replicas").`,
  );
}

/** The signature cairn_create_note has had since 529b884 (drizzle/postgres/0004_create_note.sql). */
const CREATE_NOTE = "cairn_create_note(bigint, boolean, text, integer, text, text, text[], bigint, text)";
/** Its first signature (e5f4988), without `write`. */
const FIRST_CREATE_NOTE = "cairn_create_note(bigint, text, integer, text, text, text[], bigint, text)";

/**
 * Two migration files were changed after builds on main had applied them, and
 * a step is applied once (by date), so a database those builds made lacks the
 * change for good unless it is made here (each check is a catalogue read; the
 * tables are altered only when the change is missing):
 * - 0001_agents gained idempotency_keys.note_id and its index (9f673b6). Without
 *   them every delete and every write with an Idempotency-Key failed after the
 *   upgrade. The stored answers get the note they are about (a created note's
 *   id, or a comment's or vote's post_id, as the service records them), and
 *   those about notes deleted since are emptied, as the delete would have done.
 * - 0004_create_note's function gained a `write` argument (529b884). With only
 *   the first signature every plain note create failed after the upgrade
 *   ("function cairn_create_note(...) does not exist"): the step's function is
 *   made again and the first signature dropped.
 */
async function repairEditedSteps(tx: Tx): Promise<void> {
  const [{ note_id_missing: noteIdMissing, create_note_missing: createNoteMissing, first_create_note: firstCreateNote }] = await tx.execute<{
    note_id_missing: boolean;
    create_note_missing: boolean;
    first_create_note: boolean;
  }>(
    sql.raw(`SELECT
      to_regclass('idempotency_keys') IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = 'idempotency_keys' AND column_name = 'note_id') AS note_id_missing,
      to_regprocedure('${CREATE_NOTE}') IS NULL AND to_regclass('search_log') IS NOT NULL AS create_note_missing,
      to_regprocedure('${FIRST_CREATE_NOTE}') IS NOT NULL AS first_create_note`),
  );
  if (noteIdMissing) {
    await tx.execute(sql.raw(`ALTER TABLE idempotency_keys ADD COLUMN note_id text`));
    await tx.execute(sql.raw(`CREATE INDEX IF NOT EXISTS idempotency_keys_note ON idempotency_keys USING btree (note_id)`));
    await tx.execute(
      sql.raw(`UPDATE idempotency_keys SET note_id = COALESCE(response::jsonb ->> 'id', response::jsonb ->> 'post_id')
                WHERE status BETWEEN 200 AND 299 AND response IS NOT NULL AND jsonb_typeof(response::jsonb) = 'object'`),
    );
    await tx.execute(
      sql.raw(`UPDATE idempotency_keys k SET response = NULL
                WHERE k.note_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM posts p WHERE p.id = k.note_id)`),
    );
  }
  if (createNoteMissing) {
    const step = migrations.find((migration) => migration.tag === "0004_create_note");
    if (step) for (const statement of step.statements) await tx.execute(sql.raw(statement));
  }
  if (firstCreateNote) await tx.execute(sql.raw(`DROP FUNCTION ${FIRST_CREATE_NOTE}`));
}

/** True when the newest embedded migration has been applied; throws when the database cannot be read. */
export async function migrationsCurrent(db: Db): Promise<boolean> {
  const last = await db.execute<{ created_at: string }>(sql.raw(`SELECT created_at FROM ${MIGRATIONS_TABLE} ORDER BY created_at DESC LIMIT 1`));
  return last.length > 0 && Number(last[0].created_at) >= migrations[migrations.length - 1].createdAt;
}
