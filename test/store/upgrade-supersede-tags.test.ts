// The upgrade to superseding and tag words (SQLite 0006_supersede_tags,
// PostgreSQL 0002_supersede_tags) on a database that already holds notes:
// every note gets supersedes/superseded_by null and its tags in note_tags, so
// tag words find the notes written before the upgrade. Looped over engines.
// On PostgreSQL the database is taken back to before 0002 and the later steps
// that change tables (migrations run in order once), so the upgrade runs them all.
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { searchRequest } from "../../src/core/search/query.ts";
import { migrations as postgresMigrations } from "../../src/store/postgres/migrations.ts";
import { freshTestDatabase, testEngines, type TestDatabase } from "../helpers/engines.ts";

const databases: TestDatabase[] = [];
afterAll(() => databases.forEach((db) => db.cleanup()));

/** drizzle-kit's `when` of the step under test (both engines' journals). */
const STEP = 1796200000000;

/** Takes the database back to before the step: its table, index and columns gone, its row in the migrations table too. */
async function undoStep(db: TestDatabase): Promise<void> {
  const statements = [
    "DROP TABLE note_tags",
    "DROP INDEX posts_supersedes_unique",
    "ALTER TABLE posts DROP COLUMN supersedes",
    "ALTER TABLE posts DROP COLUMN superseded_by",
    `DELETE FROM __drizzle_migrations WHERE created_at = ${STEP}`,
  ];
  if (db.engine === "sqlite") {
    // The later steps (0007_search_terms_seq, 0009_fts_follows_log) are undone too: migrations run in order once.
    const sqlite = new Database(join(db.env.DATA_DIR, "cairn.db"));
    for (const statement of [...statements, "ALTER TABLE search_totals DROP COLUMN terms_seq", "ALTER TABLE search_totals DROP COLUMN fts_seq", `DELETE FROM __drizzle_migrations WHERE created_at > ${STEP}`]) sqlite.exec(statement);
    sqlite.close();
  } else {
    // PostgreSQL's later steps (0003_search_log, 0005_note_log) are undone too: a database of the release before 0002 had the
    // per-term tables (0000_init's, empty here: 0003 drops them), no search log and no note log; its vectors stay.
    const [init] = postgresMigrations;
    const termTables = init.statements.filter((statement) => /"search_(postings|terms|totals)"/.test(statement));
    const noteLog = [
      ...["posts_updated_note_log", "posts_deleted_note_log", "posts_truncated"].map((trigger) => `DROP TRIGGER ${trigger} ON posts`),
      ...["contributors_key_log", "contributors_deleted_key_log"].map((trigger) => `DROP TRIGGER ${trigger} ON contributors`),
    ];
    const pg = new SQL(db.env.DATABASE_URL);
    for (const statement of [...noteLog, "DROP TABLE note_log", "DROP TABLE note_log_trim", ...statements, "DROP TABLE search_log", "DROP TABLE search_log_trim", ...termTables, `DELETE FROM __drizzle_migrations WHERE created_at > ${STEP}`]) {
      await pg.unsafe(statement);
    }
    await pg.close();
  }
}

for (const engine of testEngines()) describe(engine, () => {
  test("notes written before the upgrade carry null links and are found by tag words after it", async () => {
    const db = await freshTestDatabase(engine);
    databases.push(db);
    let store = db.open();
    await store.migrate();
    const { contributorNo } = await store.createContributor({ email: "u@example.org", keyPrefix: "cairn_uuuuuu", keyDigest: new Uint8Array(32), createdAt: 0 });
    const ids: string[] = [];
    for (const [i, tags] of [["ops", "db"], ["db"], [], ["ops", "ops"]].entries()) {
      const id = `00000000-0000-7000-8000-${String(i + 1).padStart(12, "0")}`;
      await store.createNote({ id, contributorNo, title: `Note ${i} upgrade`, body: "b", tags: [...new Set(tags)], createdAt: i }, () => false);
      ids.push(id);
    }
    await store.close();
    await undoStep(db);

    store = db.open();
    await store.migrate();
    try {
      expect(await store.getNote(ids[0])).toMatchObject({ supersedes: null, supersededBy: null, tags: ["ops", "db"] });
      expect((await store.search(searchRequest("tag:db", 10))).map((n) => n.id)).toEqual([ids[1], ids[0]]);
      expect((await store.search(searchRequest("tag:ops tag:db", 10))).map((n) => n.id)).toEqual([ids[0]]);
      expect((await store.search(searchRequest("upgrade tag:ops", 10))).map((n) => n.id).sort()).toEqual([ids[0], ids[3]].sort());
      // And superseding works on the upgraded database.
      const made = await store.createNote(
        { id: "00000000-0000-7000-8000-000000000009", contributorNo, title: "New upgrade", body: "b", tags: ["db"], createdAt: 9, supersedes: ids[1] },
        () => false,
      );
      expect(made).toMatchObject({ supersedes: ids[1] });
      expect((await store.search(searchRequest("tag:db", 10))).map((n) => n.id)).toEqual(["00000000-0000-7000-8000-000000000009", ids[0]]);
    } finally {
      await store.close();
    }
  });
});
