// The PostgreSQL engine's migrations, embedded in the executable: the SQL files
// drizzle-kit wrote to drizzle/postgres/ (drizzle.postgres.config.ts), imported
// as text. Applied at start under an advisory lock (see store.ts `migrate`), so
// replicas that start together migrate once.
import journal from "../../../drizzle/postgres/meta/_journal.json";
import init from "../../../drizzle/postgres/0000_init.sql" with { type: "text" };

const files: Record<string, string> = {
  "0000_init": init,
};

export interface Migration {
  tag: string;
  statements: string[];
  createdAt: number;
  hash: string;
}

export const embeddedTags = Object.keys(files);

export const migrations: Migration[] = journal.entries.map((entry) => {
  const text = files[entry.tag];
  if (text === undefined) throw new Error(`migration ${entry.tag} is in the journal but not embedded`);
  return {
    tag: entry.tag,
    statements: text.split("--> statement-breakpoint").filter((s) => s.trim().length > 0),
    createdAt: entry.when,
    hash: new Bun.CryptoHasher("sha256").update(text).digest("hex"),
  };
});
