// The PostgreSQL connection: Bun's built-in SQL client (a pool of `poolSize`
// connections) under Drizzle's PostgreSQL dialect, and which failures mean
// "the database cannot answer now".
import { SQL as BunSQL } from "bun";
import { drizzle, type BunSQLDatabase } from "drizzle-orm/bun-sql";
import * as schema from "./schema.ts";

export interface PostgresOptions {
  url: string;
  poolSize: number;
  /**
   * Budget of the in-memory search postings (SEARCH_MEMORY_MB; see
   * src/store/search-follower.ts). Unset or 0: none (admin verbs, copy).
   */
  searchMemoryBytes?: number;
}

export type Db = BunSQLDatabase<typeof schema>;
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

export function openDatabase(options: PostgresOptions): { client: BunSQL; db: Db } {
  const client = new BunSQL(options.url, { max: options.poolSize, idleTimeout: 60, connectionTimeout: 10 });
  return { client, db: drizzle({ client, schema }) };
}

// SQLSTATE classes that mean "the database cannot answer now": connection
// exceptions (08), insufficient resources (53), operator intervention (57),
// serialization and deadlock (40).
const UNAVAILABLE_SQLSTATES = /^(08|53|57|40)/;
const UNAVAILABLE_CODES = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ConnectionRefused",
  "ConnectionClosed",
]);

export function isUnavailableError(error: unknown): boolean {
  const e = error as { code?: unknown; errno?: unknown };
  if (typeof e?.errno === "string" && UNAVAILABLE_SQLSTATES.test(e.errno)) return true;
  return typeof e?.code === "string" && UNAVAILABLE_CODES.has(e.code);
}
