// A seeded data directory's files, for benches: cairn.db and, beside it, the
// search file (src/store/sqlite/search-file.ts) once a store has opened the
// directory. A directory seeded before the search file holds its search
// tables in cairn.db: a store opening a copy moves them (and a server's first
// start on it takes that long longer).
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { attachSearchFile, SEARCH_FILE_NAME } from "../src/store/sqlite/search-file.ts";

/** Copies a data directory's database files into `to` (an existing directory). */
export function copyDatabase(from: string, to: string): void {
  copyFileSync(join(from, "cairn.db"), join(to, "cairn.db"));
  if (existsSync(join(from, SEARCH_FILE_NAME))) copyFileSync(join(from, SEARCH_FILE_NAME), join(to, SEARCH_FILE_NAME));
}

/** A read-only connection to a data directory's database, with its search file attached when it has one. */
export function openCorpus(dir: string): Database {
  const db = new Database(join(dir, "cairn.db"), { readonly: true });
  if (existsSync(join(dir, SEARCH_FILE_NAME))) attachSearchFile(db, true);
  return db;
}
