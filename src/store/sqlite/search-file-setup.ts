// Brings the search file (search-file.ts) in line with cairn.db when a store
// opens: the search tables moved out of cairn.db once, and a search file
// that does not follow cairn.db's search log made again from the stored
// vectors.
import { Database } from "bun:sqlite";
import { TIERS } from "../../core/search/ranking.ts";
import { ftsColumns } from "./fts-follow.ts";
import { attachSearchFile, SEARCH_SCHEMA, searchTables, tierColumn } from "./search-file.ts";
import { vectorCounter } from "./term-folds.ts";

const TIER_COLUMNS = Array.from({ length: TIERS }, (_, tier) => tierColumn(tier)).join(", ");

const tableIn = (sqlite: Database, schema: string, name: string) =>
  sqlite.query<{ n: number }, [string]>(`SELECT count(*) AS n FROM ${schema}.sqlite_master WHERE type = 'table' AND name = ?`).get(name)!.n > 0;

/**
 * Once, after the migrations: a database whose search tables are still in
 * cairn.db (every database before this file, and every new one, as the
 * migrations make them there) has them moved into the search file: the
 * counts copied, the FTS5 index made again from the stored vectors (its own
 * tables cannot be copied: SQLite refuses writes to them), then both dropped
 * from cairn.db. On a connection of its own, opened and closed here. Two
 * transactions (one per file: a transaction over two files in WAL mode is not
 * atomic across them): a crash between them moves again.
 */
export function moveSearchTables(databaseFile: string): void {
  const sqlite = new Database(databaseFile);
  try {
    sqlite.exec("PRAGMA busy_timeout = 5000");
    attachSearchFile(sqlite);
    for (const statement of searchTables(TIERS)) sqlite.exec(statement);
    if (!tableIn(sqlite, "main", "search_terms")) return;
    sqlite
      .transaction(() => {
        if (!tableIn(sqlite, "main", "search_terms")) return;
        sqlite.exec(`DELETE FROM ${SEARCH_SCHEMA}.search_terms`);
        sqlite.exec(`INSERT INTO ${SEARCH_SCHEMA}.search_terms SELECT term, tier, notes FROM main.search_terms`);
        const last = indexFts(sqlite);
        sqlite.query(`INSERT OR REPLACE INTO ${SEARCH_SCHEMA}.search_state (id, terms_seq, fts_seq) SELECT 1, terms_seq, ?1 FROM main.search_totals`).run(last);
      })
      .immediate();
    sqlite
      .transaction(() => {
        if (tableIn(sqlite, "main", "search_fts")) sqlite.exec("DROP TABLE main.search_fts");
        if (tableIn(sqlite, "main", "search_terms")) sqlite.exec("DROP TABLE main.search_terms");
      })
      .immediate();
  } finally {
    sqlite.close();
  }
}

/** The search log's last row ever (AUTOINCREMENT: a trimmed-out row's number is never given again). */
const lastLogRow = (sqlite: Database) =>
  sqlite.query<{ seq: number }, []>("SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'search_log'), 0) AS seq").get()!.seq;

/**
 * Makes the search file's FTS5 index again from every stored vector (or
 * from those it yields to `each` as well); inside a write transaction. The
 * log row it is level with.
 */
function indexFts(sqlite: Database, each?: (vector: string) => void): number {
  sqlite.exec(`INSERT INTO ${SEARCH_SCHEMA}.search_fts(search_fts) VALUES ('delete-all')`);
  const insert = sqlite.query<unknown, [number, ...string[]]>(`INSERT INTO ${SEARCH_SCHEMA}.search_fts(rowid, ${TIER_COLUMNS}) VALUES (?${", ?".repeat(TIERS)})`);
  for (const { pk, vector } of sqlite.query<{ pk: number; vector: string }, []>("SELECT pk, vector FROM search_vectors ORDER BY pk").iterate()) {
    insert.run(pk, ...ftsColumns(vector));
    each?.(vector);
  }
  return lastLogRow(sqlite);
}

/**
 * Whether the search file follows this database's search log: it has its
 * state, has followed no further than the log's last row, and the log still
 * holds every row after what it followed. A cairn.db restored from a backup
 * beside an older or newer search file, or without one, fails.
 */
function followsLog(sqlite: Database): boolean {
  const state = sqlite.query<{ terms: number; fts: number }, []>(`SELECT terms_seq AS terms, fts_seq AS fts FROM ${SEARCH_SCHEMA}.search_state`).get();
  if (!state) return false;
  const last = lastLogRow(sqlite);
  const oldest = sqlite.query<{ seq: number | null }, []>("SELECT min(seq) AS seq FROM search_log").get()!.seq ?? last + 1;
  const followed = Math.min(state.terms, state.fts);
  return Math.max(state.terms, state.fts) <= last && followed + 1 >= oldest;
}

/**
 * Makes the search file again from the stored vectors when it does not follow
 * this database's log (followsLog); inside the store's migration, before
 * anything reads it. Whether it was made again.
 */
export function rebuildSearchFileIfStale(sqlite: Database): boolean {
  if (followsLog(sqlite)) return false;
  sqlite.exec(`DELETE FROM ${SEARCH_SCHEMA}.search_terms`);
  const counter = vectorCounter();
  const last = indexFts(sqlite, (vector) => counter.add(vector));
  counter.write(sqlite);
  sqlite.query(`INSERT OR REPLACE INTO ${SEARCH_SCHEMA}.search_state (id, terms_seq, fts_seq) VALUES (1, ?1, ?1)`).run(last);
  return true;
}
