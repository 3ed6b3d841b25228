// The engines the looped suites run on, and a fresh, empty database of each:
// a temporary data directory for SQLite, a new database in the test process's
// throwaway cluster for PostgreSQL (test/helpers/postgres.ts).
import { describe } from "bun:test";
import { rmSync } from "node:fs";
import { loadConfig } from "../../src/config.ts";
import { openStore } from "../../src/store/index.ts";
import type { Store } from "../../src/store/types.ts";
import { freshDatabase, testEngines } from "./postgres.ts";
import { tempDir } from "./server.ts";

import type { Engine } from "./server.ts";
export type { Engine };
export { testEngines };

export interface TestDatabase {
  engine: Engine;
  /** Environment that points `cairn serve` / `cairn admin` at this database. */
  env: Record<string, string>;
  /** A new handle (connection pool, or SQLite connection) on this database. */
  open: () => Store;
  /** Removes what the database left on disk (SQLite); PostgreSQL's cluster goes at exit. */
  cleanup: () => void;
}

export async function freshTestDatabase(engine: Engine, settings: Record<string, string> = {}): Promise<TestDatabase> {
  const dataDir = tempDir();
  const env: Record<string, string> = { ...settings, DATA_DIR: dataDir };
  if (engine === "postgres") env.DATABASE_URL = await freshDatabase();
  const config = loadConfig(env);
  return {
    engine,
    env,
    open: () => openStore(config),
    cleanup: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

/**
 * Runs a suite once per engine, inside `describe(engine)`: the black-box HTTP
 * suites are written once and looped, like the store contract.
 */
export function forEachEngine(suite: (engine: Engine) => void): void {
  for (const engine of testEngines()) describe(engine, () => suite(engine));
}
