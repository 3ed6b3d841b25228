// The SQLite connection: one file in DATA_DIR, owner-only, WAL mode, foreign
// keys on, the search file attached (search-file.ts), and the error codes that
// mean "storage cannot answer now".
import { Database } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { attachSearchFile } from "./search-file.ts";

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
