// The PostgreSQL connection: Bun's built-in SQL client (a pool of `poolSize`
// connections) under Drizzle's PostgreSQL dialect, and which failures mean
// "the database cannot answer now".
import { SQL as BunSQL, type ReservedSQL } from "bun";
import { drizzle, type BunSQLDatabase } from "drizzle-orm/bun-sql";
import * as schema from "./schema.ts";

export interface PostgresOptions {
  url: string;
  poolSize: number;
  /**
   * Byte budget of the note views (NOTE_CACHE_MB; note-views.ts): the notes
   * read, answered from while the note log says they are current. Unset: the default.
   */
  noteCacheBytes?: number;
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

/**
 * Runs `work` in one transaction on a connection of the pool. BEGIN is not
 * awaited: the connection runs statements in the order sent, so it travels
 * with the first statement, and `work` may send COMMIT with its last one
 * (`commitWith`; a failed transaction's COMMIT only rolls back). Bun's
 * sql.begin() measured about half a millisecond dearer per transaction
 * (docs/benchmarks.md, "Issue 20").
 */
export async function transaction<T>(
  client: BunSQL,
  work: (tx: ReservedSQL, commitWith: <R>(last: Promise<R>) => Promise<R>) => Promise<T>,
  begin = "BEGIN",
): Promise<T> {
  const tx = await client.reserve();
  let open = true;
  const commitWith = async <R>(last: Promise<R>): Promise<R> => {
    open = false;
    const [result, commit] = await Promise.allSettled([last, tx`COMMIT`]);
    if (result.status === "rejected") throw result.reason;
    if (commit.status === "rejected") throw commit.reason;
    return result.value;
  };
  try {
    const begun = tx.unsafe(begin);
    begun.catch(() => {}); // its failure fails the statements after it, which `work` sees
    const result = await work(tx, commitWith);
    await begun;
    if (open) {
      open = false;
      await tx`COMMIT`;
    }
    return result;
  } catch (error) {
    if (open) await tx`ROLLBACK`.catch(() => {});
    throw error;
  } finally {
    tx.release();
  }
}

// SQLSTATE classes that mean "the database cannot answer now": connection
// exceptions (08), insufficient resources (53), operator intervention (57),
// serialization and deadlock (40).
const UNAVAILABLE_SQLSTATES = /^(08|53|57|40)/;
const UNAVAILABLE_CODES = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ConnectionRefused",
  "ConnectionClosed",
]);

/** True for an error (or one it wraps, as Drizzle's query errors do) that says the database cannot answer now. */
export function isUnavailableError(error: unknown): boolean {
  for (let e = error as { code?: unknown; errno?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.errno === "string" && UNAVAILABLE_SQLSTATES.test(e.errno)) return true;
    if (typeof e.code === "string" && UNAVAILABLE_CODES.has(e.code)) return true;
  }
  return false;
}
