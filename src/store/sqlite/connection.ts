// The SQLite connection: one file in DATA_DIR, owner-only, WAL mode, foreign
// keys on, the search file attached (search-file.ts), and the error codes that
// mean "storage cannot answer now".
import { Database } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { attachSearchFile, SEARCH_FILE_NAME } from "./search-file.ts";

// Engine failures that mean "storage cannot answer now", not a bug.
const UNAVAILABLE_CODES = ["SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_IOERR", "SQLITE_FULL", "SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PROTOCOL"];

export type Durability = "normal" | "full";

export function databasePath(dataDir: string): string {
  return join(dataDir, "cairn.db");
}

export function openDatabase(dataDir: string, durability: Durability = "normal"): Database {
  // The file holds e-mail addresses and key digests: owner-only from the start
  // (SQLite gives the -wal and -shm files the database file's mode).
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = databasePath(dataDir);
  const isNew = !existsSync(file);
  const sqlite = new Database(file, { create: true, strict: true });
  if (isNew) chmodSync(file, 0o600);
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec(`PRAGMA synchronous = ${durability === "full" ? "FULL" : "NORMAL"}`);
  sqlite.exec("PRAGMA foreign_keys = ON");
  sqlite.exec("PRAGMA temp_store = MEMORY");
  sqlite.exec("PRAGMA cache_size = -32000");
  attachSearchFile(sqlite);
  return sqlite;
}

export function isUnavailableError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && UNAVAILABLE_CODES.some((prefix) => code.startsWith(prefix));
}

/**
 * The database files of a data directory that users other than the owner may
 * read (group or other read or write bits set), each with its mode. Builds
 * before the owner-only rule (docs/operations.md, "Upgrades") left them to the
 * umask; they are reported, not changed: an operator may share them on purpose
 * (a backup user's group). The directory's own mode is not judged: listing
 * names reveals nothing, and systemd's StateDirectory makes it 0755 or 0750.
 */
export function openToOthers(dataDir: string): { path: string; mode: string }[] {
  const found: { path: string; mode: string }[] = [];
  const check = (path: string) => {
    let mode: number;
    try {
      mode = statSync(path).mode & 0o777;
    } catch {
      return; // not there (a -wal file between checkpoints): nothing to say
    }
    if ((mode & 0o066) !== 0) found.push({ path, mode: mode.toString(8).padStart(4, "0") });
  };
  const file = databasePath(dataDir);
  for (const path of [file, `${file}-wal`, `${file}-shm`, join(dataDir, SEARCH_FILE_NAME)]) check(path);
  return found;
}
