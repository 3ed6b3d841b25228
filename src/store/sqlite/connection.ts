// The SQLite connection: one file in DATA_DIR, owner-only, WAL mode, foreign
// keys on, and the error codes that mean "storage cannot answer now".
import { Database } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";

// Engine failures that mean "storage cannot answer now", not a bug.
const UNAVAILABLE_CODES = ["SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_IOERR", "SQLITE_FULL", "SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PROTOCOL"];

export type Durability = "normal" | "full";

/** WAL pages (4 KiB) after which a commit checkpoints them into the database file. */
export const WAL_CHECKPOINT_PAGES = 8000;

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
  // Checkpoint the WAL into the file every ~32 MB of it instead of SQLite's
  // 4 MB: a note's write dirties the same hot pages (FTS5 structure, b-tree
  // interiors) as its neighbours', so rarer checkpoints copy each of them
  // once for many notes; the WAL file is cut back to 64 MB after a larger one.
  // Measured: docs/benchmarks.md, "Writes of ~2 KB notes" (WAL checkpoints).
  sqlite.exec(`PRAGMA wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  sqlite.exec(`PRAGMA journal_size_limit = ${64 * 1024 * 1024}`);
  return sqlite;
}

export function isUnavailableError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && UNAVAILABLE_CODES.some((prefix) => code.startsWith(prefix));
}
