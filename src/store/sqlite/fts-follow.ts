// The FTS5 index follows the search log (docs/benchmarks.md, "Writes of ~2 KB
// notes, fourth round"). It used to change in each note's own write
// transaction, which with its segment written at COMMIT was ~15% of the
// serving thread's time under a write load of ~2 KB notes. Now a note's write
// only logs the change (search_log, as before), and the FTS5 rows of the log
// rows after search_totals.fts_seq are made later, in a write transaction of
// their own that moves fts_seq with them: by a worker thread with its own
// connection (fts-thread.ts), or by the writer's thread when none runs.
//
// What a search sees: the FTS5 index is read only by the database path of
// search (while the in-memory postings build, when they are off or over
// budget, and by the similar-notes lookup on that path). Before it reads,
// that path brings the index level with the log on its own thread
// (SqliteSearch.ftsCurrent), so it reads every change committed before it,
// as when the index changed in the notes' own transactions. Crash-safe for
// the same reason: fts_seq moves in the transaction that writes its rows, and
// the log is never trimmed past it (search.ts).
import type { Database } from "bun:sqlite";
import { tierOf, TIERS } from "../../core/search/ranking.ts";
import { forEachTerm, readLengths, termCount } from "../../core/search/vector.ts";
import { netChanges } from "../search-follower.ts";

/** Log rows a pass makes at most: the worker holds the write lock for one pass, so the writer waits at most this long. */
export const FTS_PASS_ROWS = 48;
/** ... or the terms of this many: a pass over notes of tens of thousands of terms stays short too. */
export const FTS_PASS_TERMS = 50_000;

/** FTS5 column of each impact tier (drizzle/0003_exact_search.sql). */
export const tierColumn = (tier: number) => `t${tier}`;
const TIER_NAMES = Array.from({ length: TIERS }, (_, tier) => tierColumn(tier));

/** A note's FTS5 columns: its distinct terms, each in the column of its impact tier, from its stored vector. */
export function ftsColumns(vector: string): string[] {
  const lengths = readLengths(vector);
  const tiers = Array.from({ length: TIERS }, () => [] as string[]);
  forEachTerm(vector, (term, title, tags, body) => tiers[tierOf([title, tags, body], lengths)].push(term));
  return tiers.map((terms) => terms.join(" "));
}

function prepare(sqlite: Database) {
  return {
    lag: sqlite.query<{ seq: number; head: number }, []>(
      "SELECT fts_seq AS seq, (SELECT coalesce(max(seq), 0) FROM search_log) AS head FROM search_totals",
    ),
    pendingAfter: sqlite.query<{ seq: number; pk: number; removed: string | null }, [number, number]>(
      "SELECT seq, pk, removed FROM search_log WHERE seq > ?1 ORDER BY seq LIMIT ?2",
    ),
    vectorOf: sqlite.query<{ vector: string }, [number]>("SELECT vector FROM search_vectors WHERE pk = ?"),
    insert: sqlite.query<unknown, [number, ...string[]]>(`INSERT INTO search_fts(rowid, ${TIER_NAMES.join(", ")}) VALUES (?${", ?".repeat(TIERS)})`),
    delete: sqlite.query<unknown, [number]>("DELETE FROM search_fts WHERE rowid = ?"),
    setSeq: sqlite.query<unknown, [number]>("UPDATE search_totals SET fts_seq = ?"),
  };
}

/** Keeps one connection's FTS5 index level with the search log. */
export class FtsFollower {
  private prepared?: ReturnType<typeof prepare>;

  constructor(private readonly sqlite: Database) {}

  private get s() {
    return (this.prepared ??= prepare(this.sqlite));
  }

  /** Log rows not in the FTS5 index yet (in the current snapshot). */
  lag(): number {
    const { seq, head } = this.s.lag.get()!;
    return head - seq;
  }

  /**
   * Makes the FTS5 rows of up to `maxRows` log rows after fts_seq (fewer when
   * their notes hold more than FTS_PASS_TERMS terms), and moves fts_seq past
   * them; inside a write transaction. How many rows it made.
   */
  apply(maxRows = Number.MAX_SAFE_INTEGER): number {
    const s = this.s;
    let rows = s.pendingAfter.all(s.lag.get()!.seq, maxRows);
    if (rows.length === 0) return 0;
    // The vectors stored now (read in this snapshot), of the rows that add; a
    // pass stops after the row that takes its terms past FTS_PASS_TERMS.
    const vectors = new Map<number, string | undefined>();
    let terms = 0;
    for (let i = 0; i < rows.length; i++) {
      const { pk, removed } = rows[i];
      if (removed !== null || vectors.has(pk)) continue;
      const vector = s.vectorOf.get(pk)?.vector;
      vectors.set(pk, vector);
      terms += vector === undefined ? 0 : termCount(vector);
      if (terms > FTS_PASS_TERMS) {
        rows = rows.slice(0, i + 1);
        break;
      }
    }
    // A key's first removal takes out what the index holds for it; a key added
    // last gets its vector stored now. A later row of the key (another pass)
    // makes it right again if that vector has changed since.
    for (const [pk, change] of netChanges(rows.map((row) => ({ key: row.pk, removed: row.removed })))) {
      if (change.firstRemoved !== null) s.delete.run(pk);
      const vector = change.added ? vectors.get(pk) : undefined;
      if (vector !== undefined) s.insert.run(pk, ...ftsColumns(vector));
    }
    s.setSeq.run(rows[rows.length - 1].seq);
    return rows.length;
  }
}
