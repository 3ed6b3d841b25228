// Applies the embedded drizzle-kit migrations (migrations.ts) in order, each
// once, under a transaction-scoped advisory lock: replicas that start together
// migrate once (the second waits, then finds the steps applied).
import { sql } from "drizzle-orm";
import type { Db } from "./connection.ts";
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
    for (const migration of migrations) {
      if (applied >= migration.createdAt) continue;
      for (const statement of migration.statements) await tx.execute(sql.raw(statement));
      await tx.execute(sql`INSERT INTO ${sql.raw(MIGRATIONS_TABLE)} (hash, created_at) VALUES (${migration.hash}, ${migration.createdAt})`);
    }
  });
}

/** True when the newest embedded migration has been applied; throws when the database cannot be read. */
export async function migrationsCurrent(db: Db): Promise<boolean> {
  const last = await db.execute<{ created_at: string }>(sql.raw(`SELECT created_at FROM ${MIGRATIONS_TABLE} ORDER BY created_at DESC LIMIT 1`));
  return last.length > 0 && Number(last[0].created_at) >= migrations[migrations.length - 1].createdAt;
}
