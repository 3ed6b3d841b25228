// The search file: the tables that follow the search log (how many notes hold
// each term, search_terms; the FTS5 index, search_fts; how far each has
// followed, search_state) live in a database file of their own beside
// cairn.db, attached to every connection as schema `search`. The fold thread
// (fold-worker.ts) writes them in transactions that lock only this file, so
// the writer's batches, which write cairn.db, never wait for a fold or an
// FTS5 pass, and its commits no longer empty the writer's page cache
// (docs/benchmarks.md, "Writes of ~2 KB notes, seventh round").
//
// The file holds nothing that cannot be made again from cairn.db: a backup
// (VACUUM INTO) copies cairn.db alone, and a search file that is missing, or
// does not match cairn.db's search log (ahead of it, or behind rows the log no
// longer holds), is made again from the stored vectors when the store opens.
import type { Database } from "bun:sqlite";
import { closeSync, existsSync, openSync } from "node:fs";
import { dirname, join } from "node:path";

export const SEARCH_FILE_NAME = "cairn-search.db";
export const SEARCH_SCHEMA = "search";

/** The search file beside a database file. */
export const searchFileBeside = (databaseFile: string) => join(dirname(databaseFile), SEARCH_FILE_NAME);

/** FTS5 column of each impact tier (src/core/search/ranking.ts). */
export const tierColumn = (tier: number) => `t${tier}`;

/** The search file's tables (the FTS5 table's columns: one per impact tier, TIERS of them). */
export const searchTables = (tiers: number) => [
  `CREATE TABLE IF NOT EXISTS ${SEARCH_SCHEMA}.search_state (id integer PRIMARY KEY NOT NULL CHECK (id = 1), terms_seq integer NOT NULL, fts_seq integer NOT NULL)`,
  // Notes holding each term, per impact tier (a note holds a term in one tier): as drizzle/0003_exact_search.sql made it.
  `CREATE TABLE IF NOT EXISTS ${SEARCH_SCHEMA}.search_terms (term text NOT NULL, tier integer NOT NULL, notes integer NOT NULL, PRIMARY KEY (term, tier)) WITHOUT ROWID`,
  // One column per impact tier; detail=column: the search needs which notes hold a term in which tier, never positions.
  `CREATE VIRTUAL TABLE IF NOT EXISTS ${SEARCH_SCHEMA}.search_fts USING fts5(${Array.from({ length: tiers }, (_, tier) => tierColumn(tier)).join(", ")}, content='', contentless_delete=1, tokenize='ascii', detail='column')`,
];

/**
 * Attaches the search file beside the connection's database as schema
 * `search` (created, owner-only, in WAL mode, when missing and the
 * connection may write). Unqualified names find its tables: cairn.db no
 * longer holds tables of those names once the store has opened it
 * (moveSearchTables). Its commits are not synced (synchronous NORMAL, whatever
 * DURABILITY says of cairn.db): a commit lost to a power cut leaves the file
 * behind or ahead of cairn.db's log, which the next open finds and follows or
 * makes again (search-file-setup.ts).
 */
export function attachSearchFile(sqlite: Database, readonly = false): void {
  const file = searchFileBeside(sqlite.filename);
  if (!readonly && !existsSync(file)) closeSync(openSync(file, "a", 0o600));
  sqlite.query(`ATTACH DATABASE ? AS ${SEARCH_SCHEMA}`).run(file);
  if (readonly) return;
  sqlite.exec(`PRAGMA ${SEARCH_SCHEMA}.journal_mode = WAL`);
  sqlite.exec(`PRAGMA ${SEARCH_SCHEMA}.synchronous = NORMAL`);
}

/** A write transaction that locks the search file only (BEGIN IMMEDIATE would lock cairn.db as well: it takes every attached file). */
export function inSearchWrite<T>(sqlite: Database, write: () => T): T {
  return sqlite.transaction(() => {
    sqlite.exec(`DELETE FROM ${SEARCH_SCHEMA}.search_state WHERE 0`);
    return write();
  })();
}

