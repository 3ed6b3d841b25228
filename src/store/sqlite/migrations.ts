// Migrations embedded in the executable: the SQL files drizzle-kit wrote to
// drizzle/, imported as text so the binary needs no folder at run time.
// A unit test checks that this list matches drizzle/meta/_journal.json.
import journal from "../../../drizzle/meta/_journal.json";
import init from "../../../drizzle/0000_init.sql" with { type: "text" };
import searchIndex from "../../../drizzle/0001_search_index.sql" with { type: "text" };
import emailOutbox from "../../../drizzle/0002_email_outbox.sql" with { type: "text" };
import exactSearch from "../../../drizzle/0003_exact_search.sql" with { type: "text" };
import searchLog from "../../../drizzle/0004_search_log.sql" with { type: "text" };
import agents from "../../../drizzle/0005_agents.sql" with { type: "text" };
import supersedeTags from "../../../drizzle/0006_supersede_tags.sql" with { type: "text" };
import searchTermsSeq from "../../../drizzle/0007_search_terms_seq.sql" with { type: "text" };
import noteTagsOneOrder from "../../../drizzle/0008_note_tags_one_order.sql" with { type: "text" };
import ftsFollowsLog from "../../../drizzle/0009_fts_follows_log.sql" with { type: "text" };
import { embeddedMigrations } from "../embedded-migrations.ts";

const files: Record<string, string> = {
  "0000_init": init,
  "0001_search_index": searchIndex,
  "0002_email_outbox": emailOutbox,
  "0003_exact_search": exactSearch,
  "0004_search_log": searchLog,
  "0005_agents": agents,
  "0006_supersede_tags": supersedeTags,
  "0007_search_terms_seq": searchTermsSeq,
  "0008_note_tags_one_order": noteTagsOneOrder,
  "0009_fts_follows_log": ftsFollowsLog,
};

export const embeddedTags = Object.keys(files);

export const migrations = embeddedMigrations(journal, files);
