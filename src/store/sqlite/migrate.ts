// Applies the embedded drizzle-kit migrations (migrations.ts) in order, each
// once, recorded in drizzle's own table; `cairn admin` and servers starting
// together migrate once, because the steps are read inside the write lock.
// A database a newer release migrated is refused (DatabaseFromNewerRelease);
// steps whose file was changed after builds had applied it are repaired
// (repairEditedSteps).
import type { Database } from "bun:sqlite";
import { refuseNewerDatabase } from "../embedded-migrations.ts";
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
      refuseNewerDatabase(`the database ${sqlite.filename}`, last, migrations);
      for (const migration of migrations) {
        if (last !== null && last >= migration.createdAt) continue;
        for (const statement of migration.statements) sqlite.exec(statement);
        sqlite.query(`INSERT INTO ${MIGRATIONS_TABLE} (hash, created_at) VALUES (?, ?)`).run(migration.hash, migration.createdAt);
      }
      repairEditedSteps(sqlite);
      afterSteps();
    })
    .immediate();
}

/** True when the newest embedded migration has been applied; throws when the database cannot be read. */
export function migrationsCurrent(sqlite: Database): boolean {
  const last = lastApplied(sqlite);
  return last !== null && last >= migrations[migrations.length - 1].createdAt;
}

/**
 * Two migration files were changed after builds on main had applied them, and
 * a step is applied once (by date), so a database those builds made lacks the
 * change for good unless it is made here (each check is a catalogue read):
 * - 0005_agents gained idempotency_keys.note_id and its index (9f673b6). Without
 *   them every delete and every write with an Idempotency-Key failed after the
 *   upgrade ("no such column: note_id"). The stored answers get the note they
 *   are about (a created note's id, or a comment's or vote's post_id, as the
 *   service records them), and those about notes deleted since are emptied,
 *   as the delete would have done.
 * - 0008_note_tags_one_order made posts_supersedes_unique partial (49a440d):
 *   the same rule, without an entry for every note that supersedes none.
 */
function repairEditedSteps(sqlite: Database): void {
  const hasTable = (name: string) => sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== null;
  if (hasTable("idempotency_keys")) {
    const columns = sqlite.query<{ name: string }, []>("PRAGMA table_info(idempotency_keys)").all();
    if (!columns.some((column) => column.name === "note_id")) {
      sqlite.exec("ALTER TABLE idempotency_keys ADD COLUMN note_id text");
      sqlite.exec(`UPDATE idempotency_keys SET note_id = CASE
          WHEN json_valid(response) AND json_type(response, '$.id') = 'text' THEN json_extract(response, '$.id')
          WHEN json_valid(response) AND json_type(response, '$.post_id') = 'text' THEN json_extract(response, '$.post_id')
        END
        WHERE status BETWEEN 200 AND 299`);
      sqlite.exec("UPDATE idempotency_keys SET response = NULL WHERE note_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM posts WHERE posts.id = idempotency_keys.note_id)");
    }
    sqlite.exec("CREATE INDEX IF NOT EXISTS `idempotency_keys_note` ON `idempotency_keys` (`note_id`)");
  }
  const supersedesIndex = sqlite.query<{ sql: string }, []>("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'posts_supersedes_unique'").get();
  if (supersedesIndex !== null && !/\bWHERE\b/i.test(supersedesIndex.sql)) {
    sqlite.exec("DROP INDEX `posts_supersedes_unique`");
    sqlite.exec("CREATE UNIQUE INDEX `posts_supersedes_unique` ON `posts` (`supersedes`) WHERE `supersedes` IS NOT NULL");
  }
}
