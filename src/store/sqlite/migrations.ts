// Migrations embedded in the executable: the SQL files drizzle-kit wrote to
// drizzle/, imported as text so the binary needs no folder at run time.
// A unit test checks that this list matches drizzle/meta/_journal.json.
import journal from "../../../drizzle/meta/_journal.json";
import init from "../../../drizzle/0000_init.sql" with { type: "text" };
import searchIndex from "../../../drizzle/0001_search_index.sql" with { type: "text" };
import emailOutbox from "../../../drizzle/0002_email_outbox.sql" with { type: "text" };
import exactSearch from "../../../drizzle/0003_exact_search.sql" with { type: "text" };

const files: Record<string, string> = {
  "0000_init": init,
  "0001_search_index": searchIndex,
  "0002_email_outbox": emailOutbox,
  "0003_exact_search": exactSearch,
};

export interface Migration {
  tag: string;
  statements: string[];
  /** drizzle-kit's `when`; stored as created_at in __drizzle_migrations. */
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
