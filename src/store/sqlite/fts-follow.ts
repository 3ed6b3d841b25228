// The FTS5 index follows the search log (docs/benchmarks.md, "Writes of ~2 KB
// notes, fourth round"). It used to change in each note's own write, one
// FTS5 segment per write batch. Now a note's write only logs the change
// (search_log, as before), and the FTS5 rows of the log rows after
// search_totals.fts_seq are made in one pass every FTS_FOLLOW_ROWS rows
// (search.ts), in the write batch that reaches it, with fts_seq moved in the
// same transaction: one segment per pass, fewer to merge.
//
// What a search sees: the FTS5 index is read only by the database path of
// search (while the in-memory postings build, when they are off or over
// budget, and by the similar-notes lookup on that path). Before it reads,
// that path brings the index level with the log (SqliteSearch.ftsCurrent),
// so it reads every change committed before it, as when the index changed in
// the notes' own transactions. Crash-safe for the same reason: fts_seq moves
// in the transaction that writes its rows, and the log is never trimmed past
// it (search.ts).
//
// Once the fold thread runs (term-counts.ts, fold-worker.ts), it makes the
// passes instead, on its own connection, with each fold: in the transaction
// that writes the fold (more passes after it when the rows are many, as
// after a start), their vectors read in a short snapshot and parsed before it
// takes the write turn. The writer then makes none. The passes come with the
// folds, a few per thousand notes (docs/benchmarks.md, "Writes of ~2 KB
// notes, fifth round"); since the search file (search-file.ts) they write
// only that file, so the writer neither waits for them nor loses its page
// cache to their commits ("seventh round").
import type { Database } from "bun:sqlite";
import { tierOf, TIERS } from "../../core/search/ranking.ts";
import { forEachTerm, readLengths, termCount } from "../../core/search/vector.ts";
import { netChanges } from "../search-follower.ts";
import { tierColumn } from "./search-file.ts";

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
      "SELECT fts_seq AS seq, (SELECT coalesce(max(seq), 0) FROM search_log) AS head FROM search_state",
    ),
    pendingAfter: sqlite.query<{ seq: number; pk: number; removed: string | null }, [number]>("SELECT seq, pk, removed FROM search_log WHERE seq > ?1 ORDER BY seq"),
    pendingBetween: sqlite.query<{ seq: number; pk: number; removed: string | null }, [number, number]>(
      "SELECT seq, pk, removed FROM search_log WHERE seq > ?1 AND seq <= ?2 ORDER BY seq",
    ),
    vectorOf: sqlite.query<{ vector: string }, [number]>("SELECT vector FROM search_vectors WHERE pk = ?"),
    insert: sqlite.query<unknown, [number, ...string[]]>(`INSERT INTO search_fts(rowid, ${TIER_NAMES.join(", ")}) VALUES (?${", ?".repeat(TIERS)})`),
    delete: sqlite.query<unknown, [number]>("DELETE FROM search_fts WHERE rowid = ?"),
    setSeq: sqlite.query<unknown, [number]>("UPDATE search_state SET fts_seq = ?"),
  };
}

/** Per key, the FTS5 columns of a note this process indexed, with the log row that added it. */
export type RememberedRows = Map<number, { seq: number; columns: string[] }>;

/** A pass read in a snapshot (FtsFollower.nextPass): the log rows up to `upTo` (0: none), the notes they add with their stored vectors, and whether rows follow. */
export interface FtsPass {
  upTo: number;
  added: { pk: number; seq: number; vector: string }[];
  more: boolean;
}

/** The FTS5 columns of a pass's notes, parsed outside the snapshot it was read in (a long read holds back the WAL's checkpoint and restart). */
export function passColumns(pass: FtsPass): RememberedRows {
  return new Map(pass.added.map(({ pk, seq, vector }) => [pk, { seq, columns: ftsColumns(vector) }]));
}

/** Keeps one connection's FTS5 index level with the search log. */
export class FtsFollower {
  private prepared?: ReturnType<typeof prepare>;

  constructor(private readonly sqlite: Database) {}

  private get s() {
    return (this.prepared ??= prepare(this.sqlite));
  }

  /** The last log row the FTS5 index has followed (fts_seq, in the current snapshot). */
  followed(): number {
    return this.s.lag.get()!.seq;
  }

  /** Log rows not in the FTS5 index yet (in the current snapshot). */
  lag(): number {
    const { seq, head } = this.s.lag.get()!;
    return head - seq;
  }

  /**
   * For the fold thread (foldWriter in term-folds.ts), in a read snapshot
   * before its write transaction: the next pass, the log rows after fts_seq
   * until `mostRows` rows or `mostTerms` terms of notes added, with the
   * stored vectors of those notes (passColumns parses them), so that the pass
   * under the write lock (apply) need not read them. A pass's size bounds the
   * pages one transaction writes, and so how far the WAL grows before it
   * restarts.
   */
  nextPass(mostRows: number, mostTerms: number): FtsPass {
    const s = this.s;
    const pending = s.pendingAfter.all(s.lag.get()!.seq);
    const vectors = new Map<number, string>();
    let rows = 0;
    let terms = 0;
    while (rows < pending.length && rows < mostRows && terms < mostTerms) {
      const { pk, removed } = pending[rows++];
      if (removed !== null) continue;
      const vector = s.vectorOf.get(pk)?.vector;
      if (vector === undefined) continue;
      vectors.set(pk, vector);
      terms += termCount(vector);
    }
    if (rows === 0) return { upTo: 0, added: [], more: false };
    const added: FtsPass["added"] = [];
    const lastRow = new Map(pending.slice(0, rows).map((row) => [row.pk, row.seq]));
    for (const [pk, change] of netChanges(pending.slice(0, rows).map((row) => ({ key: row.pk, removed: row.removed })))) {
      const vector = vectors.get(pk);
      if (change.added && vector !== undefined) added.push({ pk, seq: lastRow.get(pk)!, vector });
    }
    return { upTo: pending[rows - 1].seq, added, more: rows < pending.length };
  }

  /**
   * Makes the FTS5 rows of every log row after fts_seq (up to row `upTo`) and
   * moves fts_seq past them; inside a write transaction. How many rows it
   * made. A pass that stops short of the log's head may leave a key's row of
   * a note added after `upTo` (its key taken again): the next pass removes
   * it first, and a search brings the index level before it reads.
   */
  apply(remembered: RememberedRows = new Map(), upTo = Number.MAX_SAFE_INTEGER): number {
    const s = this.s;
    const rows = s.pendingBetween.all(s.lag.get()!.seq, upTo);
    if (rows.length === 0) return 0;
    const lastRow = new Map(rows.map((row) => [row.pk, row.seq]));
    // A key's first removal takes out what the index holds for it; a key
    // added last gets the vector stored now (read in this snapshot), or the
    // columns remembered for it when its last row is the one that added
    // them; a note added and removed within the rows never reaches FTS5.
    for (const [pk, change] of netChanges(rows.map((row) => ({ key: row.pk, removed: row.removed })))) {
      if (change.firstRemoved !== null) s.delete.run(pk);
      if (!change.added) continue;
      const known = remembered.get(pk);
      if (known !== undefined && known.seq === lastRow.get(pk)) {
        s.insert.run(pk, ...known.columns);
        continue;
      }
      const vector = s.vectorOf.get(pk)?.vector;
      if (vector !== undefined) s.insert.run(pk, ...ftsColumns(vector));
    }
    s.setSeq.run(rows[rows.length - 1].seq);
    return rows.length;
  }
}
