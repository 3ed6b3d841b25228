// Folding the search log into search_terms (docs/search-index.md, "Term
// counts"): a batch of log rows turned into one change per (term, tier) and
// written with one upsert, by the writer (SqliteTermCounts, term-counts.ts) or
// by the fold thread (foldWriter, fold-worker.ts), which then brings the FTS5
// index level too; and the counts of a search file made again (vectorCounter).
import type { Database } from "bun:sqlite";
import { tierOf, TIERS } from "../../core/search/ranking.ts";
import { TermTable } from "../../core/search/term-table.ts";
import { grownInt32 } from "../../core/search/typed-arrays.ts";
import { forEachTermAt, readLengths } from "../../core/search/vector.ts";
import { netChanges } from "../search-follower.ts";
import { passColumns, type FtsFollower, type RememberedRows } from "./fts-follow.ts";
import { inSearchWrite } from "./search-file.ts";
import { WORKER, type WriteTurn } from "./write-turn.ts";

/**
 * The writer folds the log into search_terms once it has grown by this many
 * rows since the last fold it knows of. 1,024 was measured against 512 on ~2 KB
 * notes: no difference in CPU a note beyond the noise (the fold's own count
 * says ~18 µs a note less: 32 distinct pairs a note instead of 45), for a stall
 * twice as long, so 512 stays (docs/benchmarks.md, "Writes of ~2 KB notes,
 * second round").
 */
export const FOLD_EVERY = 512;
/**
 * ... or once the changes it logged since hold this many terms: what a
 * reader's pending change and the writer's remembered terms hold at most, so
 * notes of tens of thousands of distinct terms (20,000 CJK characters) fold
 * every few notes instead of keeping millions of terms in memory.
 */
export const FOLD_TERMS = 200_000;
/**
 * The fold thread folds every this many times `foldEvery` rows (or at
 * THREAD_FOLD_TERMS terms), and brings the FTS5 index level right after: a
 * fold with its FTS5 rows costs less a note the larger it is (the distinct
 * terms grow slower than the notes; an FTS5 pass writes fewer segments),
 * measured by bench/write-fold.ts (docs/benchmarks.md, "Writes of ~2 KB
 * notes, fifth round"). Since the search file (search-file.ts) the writer's
 * batches no longer wait for them ("seventh round").
 */
export const THREAD_FOLD_FACTOR = 4;
/**
 * ... or at this many terms (FOLD_TERMS is the bound for the writer's own
 * folds; an FTS5 pass of the fold's rows follows it). It was 100,000 (~600
 * notes of ~2 KB) while the thread wrote cairn.db: a larger fold held the
 * writer's lock longer and grew cairn.db's WAL past the bound of
 * test/store/checkpointer.test.ts ("fifth round"). The thread now writes the
 * search file only, so folds are larger: ~1,200 notes of ~2 KB, and the
 * thread's CPU a note is lower (docs/benchmarks.md, "Writes of ~2 KB notes,
 * seventh round").
 */
export const THREAD_FOLD_TERMS = 200_000;

interface LogRow {
  seq: number;
  pk: number;
  removed: string | null;
}

/** Per term, the change of its count per tier. */
export type Deltas = Map<string, number[]>;

/**
 * The change of the counts per (term, tier) while a fold or a read parses
 * log rows: terms found by their characters in the stored vector (a
 * TermTable), so a term seen before costs no string of its own and no Map
 * lookup by a new string; the counts in one typed array by term id. A Map
 * looked up by a new string per term occurrence was most of the time a fold
 * took to prepare (docs/benchmarks.md, "Writes of ~2 KB notes, sixth round").
 */
class TermDeltas {
  private readonly table = new TermTable();
  /** Each term by id, as one string made when first seen. */
  readonly terms: string[] = [];
  private counts = new Int32Array(TIERS * 1024);

  /** The term `text.slice(start, end)`'s count in `tier` moves by `sign`; its id. */
  bumpIn(text: string, start: number, end: number, tier: number, sign: number): number {
    let id = this.table.getIn(text, start, end);
    if (id < 0) {
      id = this.terms.length;
      const term = text.slice(start, end);
      this.table.add(term, id);
      this.terms.push(term);
      if ((id + 1) * TIERS > this.counts.length) this.counts = grownInt32(this.counts, 2 * this.counts.length);
    }
    this.counts[id * TIERS + tier] += sign;
    return id;
  }

  bump(term: string, tier: number, sign: number): void {
    this.bumpIn(term, 0, term.length, tier, sign);
  }

  /** Per term, its change per tier (terms whose changes net to 0 included). */
  toMap(): Deltas {
    const map: Deltas = new Map();
    this.terms.forEach((term, id) => map.set(term, Array.from(this.counts.subarray(id * TIERS, (id + 1) * TIERS))));
    return map;
  }

  /** The non-zero changes as [term, tier, change] in (term, tier) order, and whether one is negative. */
  changes(): { changes: (string | number)[][]; removes: boolean } {
    const terms = this.terms;
    const order = terms.map((_, id) => id).sort((a, b) => (terms[a] < terms[b] ? -1 : terms[a] > terms[b] ? 1 : 0));
    const changes: (string | number)[][] = [];
    let removes = false;
    for (const id of order) {
      for (let tier = 0; tier < TIERS; tier++) {
        const change = this.counts[id * TIERS + tier];
        if (change !== 0) changes.push([terms[id], tier, change]);
        if (change < 0) removes = true;
      }
    }
    return { changes, removes };
  }
}

/** A term's counts per field, reused for every tierOf call of a parse (one array, not one per term). */
const fieldCounts: [number, number, number] = [0, 0, 0];
const tierOfCounts = (title: number, tags: number, body: number, lengths: [number, number, number]): number => {
  fieldCounts[0] = title;
  fieldCounts[1] = tags;
  fieldCounts[2] = body;
  return tierOf(fieldCounts, lengths);
};

export function prepare(sqlite: Database) {
  return {
    folded: sqlite.query<{ seq: number }, []>("SELECT terms_seq AS seq FROM search_state"),
    pendingAfter: sqlite.query<LogRow, [number]>("SELECT seq, pk, removed FROM search_log WHERE seq > ?1 ORDER BY seq"),
    vectorOf: sqlite.query<{ vector: string }, [number]>("SELECT vector FROM search_vectors WHERE pk = ?"),
    // ?1: a JSON array of [term, tier, change] in (term, tier) order, so the B-tree is walked once.
    apply: sqlite.query<unknown, [string]>(
      `INSERT INTO search_terms(term, tier, notes) SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?1) WHERE true
         ON CONFLICT(term, tier) DO UPDATE SET notes = notes + excluded.notes`,
    ),
    dropEmpty: sqlite.query<unknown, [string]>(
      "DELETE FROM search_terms WHERE notes <= 0 AND (term, tier) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?1))",
    ),
    setFolded: sqlite.query<unknown, [number]>("UPDATE search_state SET terms_seq = ?"),
    tierCounts: sqlite.query<{ term: string; tier: number; notes: number }, [string]>(
      "SELECT term, tier, notes FROM search_terms WHERE term IN (SELECT value FROM json_each(?1))",
    ),
    vocabulary: sqlite.query<{ term: string; doc: number }, [string, string]>(
      "SELECT term, sum(notes) AS doc FROM search_terms WHERE term >= ?1 AND term < ?2 GROUP BY term",
    ),
  };
}

type Statements = ReturnType<typeof prepare>;

/** Per key, the terms by tier of a note indexed by this process, with the log row that added it (SqliteTermCounts.indexed). */
type Remembered = Map<number, { seq: number; termsByTier: string[][] }>;

/**
 * Per key, the stored vector of a note this process wrote, with the log row
 * that added it: committed writes only, handed to the fold thread with its
 * request (SqliteTermCounts.committed), so that it need not read them back.
 */
export type WrittenVectors = Map<number, { seq: number; vector: string }>;

/** A fold made ready in one read snapshot: the change of the counts by the log rows (from, upTo], as the upsert's argument. */
export interface PreparedFold {
  from: number;
  upTo: number;
  /** [term, tier, change] in (term, tier) order (the statement `apply`). */
  json: string;
  /** Some count went down: rows that reach 0 are dropped. */
  removes: boolean;
}

/**
 * The net change of the counts by these log rows, per key: a first row
 * that removes takes out the vector that was counted (the one it carries);
 * a last row that adds puts in the vector stored now (read in the same
 * snapshot), or the terms remembered for it when that row added them.
 * Changes of consecutive ranges of rows add up.
 */
export function deltasOf(s: Statements, rows: LogRow[], remembered: Remembered, columns?: RememberedRows, written?: WrittenVectors): TermDeltas {
  const deltas = new TermDeltas();
  const count = (vector: string, sign: number) => {
    const lengths = readLengths(vector);
    forEachTermAt(vector, (start, end, title, tags, body) => deltas.bumpIn(vector, start, end, tierOfCounts(title, tags, body, lengths), sign));
  };
  const lastRow = new Map(rows.map((row) => [row.pk, row.seq]));
  const tiers = Array.from({ length: TIERS }, () => [] as string[]);
  for (const [pk, change] of netChanges(rows.map((row) => ({ key: row.pk, removed: row.removed })))) {
    if (change.firstRemoved !== null) count(change.firstRemoved, -1);
    if (!change.added) continue;
    const known = remembered.get(pk);
    if (known?.seq === lastRow.get(pk)) {
      known!.termsByTier.forEach((inTier, tier) => {
        for (const term of inTier) deltas.bump(term, tier, 1);
      });
      continue;
    }
    // Trusted only when that row is the key's last in the read: a committed log row's seq is never taken again.
    const own = written?.get(pk);
    const vector = own !== undefined && own.seq === lastRow.get(pk) ? own.vector : s.vectorOf.get(pk)?.vector;
    if (vector === undefined) continue;
    if (columns === undefined) {
      count(vector, 1);
      continue;
    }
    // The same pass over the vector gives the note's FTS5 columns (fts-follow.ts, ftsColumns), of the terms' strings made once.
    const lengths = readLengths(vector);
    for (const inTier of tiers) inTier.length = 0;
    forEachTermAt(vector, (start, end, title, tags, body) => {
      const tier = tierOfCounts(title, tags, body, lengths);
      tiers[tier].push(deltas.terms[deltas.bumpIn(vector, start, end, tier, 1)]);
    });
    columns.set(pk, { seq: lastRow.get(pk)!, columns: tiers.map((terms) => terms.join(" ")) });
  }
  return deltas;
}

/** The fold of every log row after terms_seq, made ready; inside a transaction (its snapshot), or null when none is pending. */
export function prepareFold(s: Statements, remembered: Remembered, columns?: RememberedRows, written?: WrittenVectors): PreparedFold | null {
  const from = s.folded.get()!.seq;
  const rows = s.pendingAfter.all(from);
  if (rows.length === 0) return null;
  const { changes, removes } = deltasOf(s, rows, remembered, columns, written).changes();
  return { from, upTo: rows[rows.length - 1].seq, json: JSON.stringify(changes), removes };
}

/** Writes a prepared fold, inside a write transaction; false (nothing written) when the counts moved since it was prepared (another process folded). */
export function applyFold(s: Statements, fold: PreparedFold): boolean {
  if (s.folded.get()!.seq !== fold.from) return false;
  s.apply.run(fold.json);
  if (fold.removes) s.dropEmpty.run(fold.json);
  s.setFolded.run(fold.upTo);
  return true;
}

/** Changes of the counts applied in one statement at most (a search file made again holds every term). */
const COUNT_CHANGES_AT_ONCE = 100_000;

/**
 * Counts stored vectors (`add`), then adds the counts to search_terms
 * (`write`), which holds none of those notes yet: the search file made again
 * (search-file-setup.ts).
 */
export function vectorCounter(): { add(vector: string): void; write(sqlite: Database): void } {
  const deltas = new TermDeltas();
  return {
    add(vector) {
      const lengths = readLengths(vector);
      forEachTermAt(vector, (start, end, title, tags, body) => deltas.bumpIn(vector, start, end, tierOfCounts(title, tags, body, lengths), 1));
    },
    write(sqlite) {
      const { changes } = deltas.changes();
      const { apply } = prepare(sqlite);
      for (let at = 0; at < changes.length; at += COUNT_CHANGES_AT_ONCE) apply.run(JSON.stringify(changes.slice(at, at + COUNT_CHANGES_AT_ONCE)));
    },
  };
}

/** What the fold thread did on a request: the fold it prepared (null: none pending), whether it was written, and the FTS5 rows it made. */
export interface FoldOutcome {
  prepared: PreparedFold | null;
  applied: boolean;
  ftsRows: number;
}

/**
 * The fold thread's FTS5 passes (fts-follow.ts) hold at most the rows or
 * terms of one of its folds, so that one pass brings the FTS5 index level
 * after a fold (rows left over, as after a start, go in more passes of that
 * size). The pages of one transaction grow the search file's WAL past its
 * checkpoints (the thread's own autocheckpoint, fold-worker.ts).
 */
const FTS_PASS_ROWS = THREAD_FOLD_FACTOR * FOLD_EVERY;
const FTS_PASS_TERMS = THREAD_FOLD_TERMS;

/**
 * For the fold thread (fold-worker.ts): prepares folds on its own connection,
 * in a read snapshot each, and writes each in a transaction of its own, in its
 * write turn (write-turn.ts). With `fts`, the same transaction brings the
 * FTS5 index level with the log (fts-follow.ts; in more passes, each a
 * transaction, when the rows are many), its notes' columns also read in the
 * snapshot. It writes only the search file (search-file.ts), in transactions
 * that lock only that file (docs/benchmarks.md, "Writes of ~2 KB notes,
 * fifth round" and "seventh round").
 */
export function foldWriter(sqlite: Database, turn: WriteTurn, fts?: FtsFollower): (written?: WrittenVectors) => FoldOutcome {
  const s = prepare(sqlite);
  const none: Remembered = new Map();
  // Each in a short snapshot of its own: a long read holds back the WAL's checkpoint and restart.
  const readPass = () => (fts ? sqlite.transaction(() => fts.nextPass(FTS_PASS_ROWS, FTS_PASS_TERMS))() : null);
  const inTurn = <T>(write: () => T): T => {
    turn.take(WORKER);
    try {
      return inSearchWrite(sqlite, write);
    } finally {
      turn.give(WORKER);
    }
  };
  return (written) => {
    // When the FTS5 index has followed the log as far as the counts (the thread moves both, one after the other), the
    // fold's parse of the notes' vectors also gives their FTS5 columns, and its rows are the pass's.
    const foldColumns: RememberedRows = new Map();
    const [fold, ftsFrom] = sqlite.transaction(() => [prepareFold(s, none, fts ? foldColumns : undefined, written), fts?.followed() ?? -1] as const)();
    const outcome: FoldOutcome = { prepared: fold, applied: false, ftsRows: 0 };
    if (fold !== null) outcome.applied = inTurn(() => applyFold(s, fold));
    const withFold = fold !== null && ftsFrom === fold.from ? { upTo: fold.upTo, added: [], more: false } : null;
    for (let pass = withFold ?? readPass(); pass !== null && pass.upTo > 0; pass = readPass()) {
      const columns = pass === withFold ? foldColumns : passColumns(pass);
      // The fold and each FTS5 pass in a transaction of its own, the writer's waiting batch let in between: the writer's
      // batches wait for one at a time, and the slowest writes wait about as long as the longest of them.
      letWriterIn();
      outcome.ftsRows += inTurn(() => fts!.apply(columns, pass!.upTo));
      if (!pass.more) break;
    }
    return outcome;
  };
}

const pause = new Int32Array(new SharedArrayBuffer(4));
/** A millisecond's sleep of the fold thread after giving the write turn back, so the writer's deferred batch takes it first. */
function letWriterIn(): void {
  Atomics.wait(pause, 0, 0, 1);
}
