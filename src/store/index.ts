// The one place that names an engine: `serve` and `admin` open their Store here.
import type { Config } from "../config.ts";
import { PostgresStore } from "./postgres/store.ts";
import { databasePath, SqliteStore } from "./sqlite/store.ts";
import type { Store } from "./types.ts";
import { existsSync } from "node:fs";

export class StoreNotFound extends Error {}

/** A database a newer release migrated: refused at start (embedded-migrations.ts). */
export { DatabaseFromNewerRelease, UnsuitableDatabase } from "./embedded-migrations.ts";

/** Moving up: a SQLite instance into an empty PostgreSQL database (`cairn admin copy`). */
export { copySqliteToPostgres, CopyRefused, type CopyProgress } from "./copy.ts";

/** How often a server calls Store.remapReplacedSignals. */
export { SIGNAL_CHECK_MS } from "./sqlite/change-signal.ts";
/** The SQLite file of a data directory (backup, restore and copy name it to the operator). */
export { databasePath as sqliteDatabasePath } from "./sqlite/connection.ts";
/** A SQLite data directory's paths other users may read (said at start). */
export { openToOthers as sqliteFilesOpenToOthers } from "./sqlite/connection.ts";

/**
 * The configured Store: PostgreSQL when DATABASE_URL is set, else the SQLite
 * file in DATA_DIR. With `mustExist`, a SQLite file that is not there yet is
 * an error (StoreNotFound) instead of a new, empty database.
 */
export function openStore(
  config: Pick<Config, "dataDir" | "databaseUrl" | "databasePoolSize" | "durability"> & Partial<Pick<Config, "noteCacheBytes" | "searchMemoryBytes" | "searchThread">>,
  options: { mustExist?: boolean } = {},
): Store {
  if (config.databaseUrl !== null)
    return new PostgresStore({
      url: config.databaseUrl,
      poolSize: config.databasePoolSize,
      noteCacheBytes: config.noteCacheBytes,
      searchMemoryBytes: config.searchMemoryBytes,
    });
  if (options.mustExist && !existsSync(databasePath(config.dataDir))) {
    throw new StoreNotFound(`no database at ${databasePath(config.dataDir)} (set DATA_DIR or --data-dir, or DATABASE_URL)`);
  }
  return new SqliteStore({
    dataDir: config.dataDir,
    durability: config.durability,
    noteCacheBytes: config.noteCacheBytes,
    searchMemoryBytes: config.searchMemoryBytes,
    searchThread: config.searchThread,
  });
}

/** Where the store lives, for the start-up log line: never the URL (it may hold a password). */
export function storeLocation(config: Pick<Config, "dataDir" | "databaseUrl">): Record<string, string> {
  if (config.databaseUrl === null) return { engine: "sqlite", dataDir: config.dataDir };
  const url = new URL(config.databaseUrl);
  return { engine: "postgres", database: `${url.hostname}${url.port ? `:${url.port}` : ""}${url.pathname}` };
}
