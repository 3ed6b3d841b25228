// Applies the embedded drizzle-kit migrations (migrations.ts) in order, each
// once, recorded in drizzle's own table; `cairn admin` and servers starting
// together migrate once, because the steps are read inside the write lock.
import type { Database } from "bun:sqlite";
import { migrations } from "./migrations.ts";

const MIGRATIONS_TABLE = "__drizzle_migrations";

function lastApplied(sqlite: Database): number | null {
  const last = sqlite
    .query<{ created_at: number }, []>(`SELECT created_at FROM ${MIGRATIONS_TABLE} ORDER BY created_at DESC LIMIT 1`)
    .get();
  return last ? Number(last.created_at) : null;
}

/** Runs the missing steps, then `afterSteps` (data catch-up), all in one write transaction. */
export function migrateDatabase(sqlite: Database, afterSteps: () => void): void {
  sqlite.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`);
  sqlite
    .transaction(() => {
      // Read inside the write lock so two processes never apply the same step.
      const last = lastApplied(sqlite);
      for (const migration of migrations) {
        if (last !== null && last >= migration.createdAt) continue;
        for (const statement of migration.statements) sqlite.exec(statement);
        sqlite.query(`INSERT INTO ${MIGRATIONS_TABLE} (hash, created_at) VALUES (?, ?)`).run(migration.hash, migration.createdAt);
      }
      afterSteps();
    })
    .immediate();
}

/** True when the newest embedded migration has been applied; throws when the database cannot be read. */
export function migrationsCurrent(sqlite: Database): boolean {
  const last = lastApplied(sqlite);
  return last !== null && last >= migrations[migrations.length - 1].createdAt;
}
