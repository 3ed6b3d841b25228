// The PostgreSQL engine's search log (drizzle/postgres/0003_search_log.sql), as
// the shared follower (src/store/search-follower.ts) reads it. Replicas commit
// concurrently, so a log row's sequence value is not its commit order: a row
// with a smaller seq may commit after one with a larger seq was read. Each row
// therefore carries its transaction's id (pg_current_xact_id()), and a
// replica's place in the log is the snapshot it last read in: the next read
// takes exactly the rows visible now whose transaction was not yet visible in
// that snapshot (pg_visible_in_snapshot), so every committed row is applied
// once, whatever order transactions committed in. Rows of one note are ordered
// (its delete locks the row its create committed), so seq orders them.
// docs/design.md, "Search".
import type { SQL as BunSQL } from "bun";
import type { MemoryIndex } from "../../core/search/memory-index.ts";
import type { IndexedVector } from "../../core/search/vector.ts";
import { netChanges, type BuildPlan, type LogChanges, type SearchLog } from "../search-follower.ts";

/** Corpora of at most this many notes are built before migrate() returns; larger ones in the background. */
const LOAD_NOW_NOTES = 5_000;
/** Vectors read per step of a build. */
const LOAD_STEP_NOTES = 1_000;
/** Log rows read per statement while catching up. */
const LOG_PAGE = 5_000;
/** Log rows kept: a replica that has not followed over this many index changes builds its postings again. */
export const SEARCH_LOG_KEEP = 100_000;
/** A writer trims the log once per this many rows. */
export const LOG_TRIM_EVERY = 1_024;

type Query = BunSQL;

interface ChangeRow {
  /** The read's snapshot: on one row of a page only (it lists every transaction in progress, so it is not repeated on every row). */
  snap: string | null;
  trimmed: boolean;
  seq: string | null;
  xid: string | null;
  pk: string | null;
  removed: string | null;
  vector: string | null;
}

/** Where a page of the log ends: rows are paged in (xid, seq) order. */
interface PageEnd {
  xid: string;
  seq: number;
}
const FIRST_PAGE: PageEnd = { xid: "0", seq: 0 };

/**
 * One page of the rows committed after snapshot `from` (and past `after`
 * within this read, in (xid, seq) order), with the snapshot of this read and
 * whether the log was trimmed past `from`. One row of each page (its first, or
 * the only row when nothing is new) carries the statement's snapshot, so in a
 * REPEATABLE READ transaction every page agrees; the snapshot's text lists
 * every transaction in progress, so it is not repeated on every row. The
 * vectors of the `own` rows (by seq: this process wrote them) are not sent back.
 *
 * The rows are found and paged by the xid index: the statement is prepared,
 * and PostgreSQL's generic plan for it cannot know how recent `from` is. In
 * seq order it took the primary key from the first row kept and filtered the
 * whole log on every read (all SEARCH_LOG_KEEP rows, ten times a second per
 * replica: docs/benchmarks.md, "Issue 20, third round"). Page order does not
 * matter to the caller, which orders a read's rows by seq. The own rows are a
 * subquery, which PostgreSQL hashes; `<> ALL($array)` compared every row
 * with every own key (a read after a burst of this replica's writes: ~6 ms).
 * Each vector is a subquery by primary key (an index probe per returned
 * row, whatever the statistics say): as a join, the generic plan could hash
 * the whole search_vectors table on every read. The snapshot text is parsed
 * once (OFFSET 0 keeps it from being inlined into every row's test).
 * docs/benchmarks.md, "Issue 20: two replicas against one".
 */
function changePage(sql: Query, from: string, after: PageEnd, own: string): Promise<ChangeRow[]> {
  return sql`
    SELECT CASE WHEN l.n IS NULL OR l.n = 1 THEN s.snap END AS snap, s.trimmed, l.seq, l.xid, l.pk, l.removed,
           CASE WHEN l.removed IS NULL AND l.seq NOT IN (SELECT unnest(${own}::bigint[]))
                THEN (SELECT v.vector FROM search_vectors v WHERE v.pk = l.pk) END AS vector
      FROM (SELECT ${from}::text::pg_snapshot AS snapshot OFFSET 0) f
     CROSS JOIN LATERAL (SELECT pg_current_snapshot()::text AS snap,
                   (SELECT upto FROM search_log_trim) >= pg_snapshot_xmin(f.snapshot) AS trimmed) s
      LEFT JOIN LATERAL (
        SELECT p.*, row_number() OVER () AS n FROM (
          SELECT l.seq, l.xid::text AS xid, l.pk, l.removed FROM search_log l
           WHERE l.xid >= pg_snapshot_xmin(f.snapshot)
             AND NOT pg_visible_in_snapshot(l.xid, f.snapshot)
             AND (l.xid, l.seq) > (${after.xid}::text::xid8, ${after.seq}::bigint)
           ORDER BY l.xid, l.seq LIMIT ${LOG_PAGE}) p) l ON true` as Promise<ChangeRow[]>;
}

/** Own rows remembered at most; past it they are forgotten (their vectors are then read back: slower, never wrong). */
const OWN_ROWS_LIMIT = 4_096;

export class PostgresSearchLog implements SearchLog<string> {
  /**
   * The seqs of the add rows this process's committed writes logged, until a
   * read returns them: such a row's vector is the one the write indexed
   * (`written` by key), so it is not sent back. Kept by row, not by key: when
   * a later row of the same key was written by someone else (a delete, and a
   * row id taken again), that row's vector is read, and the key's last add
   * decides what the postings hold.
   */
  private readonly ownRows = new Set<number>();

  constructor(private readonly client: BunSQL) {}

  /** An add row this process's write logged (call once the write committed, before its vector is handed to the follower). */
  ownRow(seq: number): void {
    if (this.ownRows.size >= OWN_ROWS_LIMIT) this.ownRows.clear();
    this.ownRows.add(seq);
  }

  async plan(): Promise<BuildPlan> {
    const [{ n }] = (await this.client`SELECT count(*)::int AS n FROM (SELECT 1 FROM search_vectors LIMIT ${LOAD_NOW_NOTES + 1}) few`) as { n: number }[];
    return { bytes: null, now: n <= LOAD_NOW_NOTES };
  }

  /** Every vector as of one REPEATABLE READ snapshot, on a connection of its own; answers that snapshot. */
  async *load(index: MemoryIndex, full: () => boolean): AsyncGenerator<void, string, void> {
    const connection = await this.client.reserve();
    try {
      await connection`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`;
      const [{ snap }] = (await connection`SELECT pg_current_snapshot()::text AS snap`) as { snap: string }[];
      for (let after = 0; ; ) {
        const rows = (await connection`SELECT pk, vector FROM search_vectors WHERE pk > ${after} ORDER BY pk LIMIT ${LOAD_STEP_NOTES}`) as { pk: string; vector: string }[];
        for (const row of rows) {
          index.add(Number(row.pk), row.vector);
          if (full()) return snap;
        }
        if (rows.length < LOAD_STEP_NOTES) return snap;
        after = Number(rows[rows.length - 1].pk);
        yield;
      }
    } finally {
      await connection`COMMIT`.catch(() => {});
      connection.release();
    }
  }

  /** One statement when the changes fit a page (the usual case); else the pages of one REPEATABLE READ transaction. */
  async changesSince(from: string, written: ReadonlyMap<number, IndexedVector>): Promise<LogChanges<string> | null> {
    const own = `{${[...this.ownRows].join(",")}}`;
    const first = await changePage(this.client, from, FIRST_PAGE, own);
    if (first.filter((row) => row.seq !== null).length < LOG_PAGE) return this.collect(first, written);
    return this.client.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
      const rows: ChangeRow[] = [];
      for (let after = FIRST_PAGE; ; ) {
        const page = await changePage(tx, from, after, own);
        rows.push(...page);
        const last = page[page.length - 1];
        if (page.length < LOG_PAGE || last.seq === null || last.xid === null) break;
        after = { xid: last.xid, seq: Number(last.seq) };
      }
      return this.collect(rows, written);
    });
  }

  /** The net change per key; a key's vector is that of its last add row (this process's own from `written`). */
  private collect(rows: ChangeRow[], written: ReadonlyMap<number, IndexedVector>): LogChanges<string> | null {
    if (rows[0].trimmed) return null;
    const logged = rows
      .filter((row) => row.seq !== null)
      .map((row) => ({ seq: Number(row.seq), key: Number(row.pk), removed: row.removed, vector: row.vector }))
      .sort((a, b) => a.seq - b.seq);
    const vectors = new Map<number, IndexedVector>();
    for (const row of logged) {
      this.ownRows.delete(row.seq);
      if (row.removed !== null) continue;
      // Every add row but this process's own comes with its vector.
      const vector = row.vector ?? written.get(row.key);
      if (vector === undefined) vectors.delete(row.key);
      else vectors.set(row.key, vector);
    }
    const changes = [...netChanges(logged)].map(([key, change]) => ({
      key,
      removed: change.firstRemoved,
      added: change.added ? (vectors.get(key) ?? null) : null,
    }));
    return { position: rows.find((row) => row.snap !== null)!.snap!, changes };
  }
}

/**
 * Deletes the log rows past the newest SEARCH_LOG_KEEP, at most up to `seq`,
 * and only those of transactions older than every running one (so a replica
 * that has followed recently never lost a row it had not read), recording the
 * newest id deleted. Another replica trimming at once: this one skips.
 */
export async function trimLog(client: BunSQL, seq: number, keep = SEARCH_LOG_KEEP): Promise<void> {
  await client.begin(async (tx) => {
    const [{ locked }] = (await tx`SELECT pg_try_advisory_xact_lock(${TRIM_LOCK}) AS locked`) as { locked: boolean }[];
    if (!locked) return;
    await tx`
      WITH gone AS (
        DELETE FROM search_log WHERE seq <= ${seq - keep} AND xid < pg_snapshot_xmin(pg_current_snapshot()) RETURNING xid
      ), newest AS (SELECT xid FROM gone ORDER BY xid DESC LIMIT 1)
      UPDATE search_log_trim SET upto = newest.xid FROM newest WHERE newest.xid > search_log_trim.upto`;
  });
}

/** pg_try_advisory_xact_lock key of a trim: "trim" as a number. */
const TRIM_LOCK = 0x7472696d;
