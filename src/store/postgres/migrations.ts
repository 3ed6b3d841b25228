// The PostgreSQL engine's migrations, embedded in the executable: the SQL files
// drizzle-kit wrote to drizzle/postgres/ (drizzle.postgres.config.ts), imported
// as text. Applied at start under an advisory lock (see store.ts `migrate`), so
// replicas that start together migrate once.
import journal from "../../../drizzle/postgres/meta/_journal.json";
import init from "../../../drizzle/postgres/0000_init.sql" with { type: "text" };
import agents from "../../../drizzle/postgres/0001_agents.sql" with { type: "text" };
import supersedeTags from "../../../drizzle/postgres/0002_supersede_tags.sql" with { type: "text" };
import searchLog from "../../../drizzle/postgres/0003_search_log.sql" with { type: "text" };
import createNote from "../../../drizzle/postgres/0004_create_note.sql" with { type: "text" };
import noteLog from "../../../drizzle/postgres/0005_note_log.sql" with { type: "text" };
import { embeddedMigrations } from "../embedded-migrations.ts";

const files: Record<string, string> = {
  "0000_init": init,
  "0001_agents": agents,
  "0002_supersede_tags": supersedeTags,
  "0003_search_log": searchLog,
  "0004_create_note": createNote,
  "0005_note_log": noteLog,
};

export const embeddedTags = Object.keys(files);

export const migrations = embeddedMigrations(journal, files);
