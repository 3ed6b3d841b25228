// How many notes hold each index term, per impact tier, on SQLite
// (docs/search-index.md, "Term counts"). search_terms holds the counts as of
// search_totals.terms_seq; the search_log rows after it (every index change,
// in commit order) are folded in by the writer in batches, not per note: one
// upsert per distinct (term, tier) of a batch instead of one per term of every
// note, which was most of a ~2 KB note's write (docs/benchmarks.md). A reader
// adds the log rows not folded yet to what the table says, in one read
// snapshot, so the counts it sees are exact. The folding itself: term-folds.ts.
import type { Database } from "bun:sqlite";
import { TIERS } from "../../core/search/ranking.ts";
import { FoldThread } from "./fold-thread.ts";
import { inSearchWrite } from "./search-file.ts";
import { applyFold, deltasOf, FOLD_EVERY, FOLD_TERMS, prepare, prepareFold, THREAD_FOLD_FACTOR, THREAD_FOLD_TERMS, type Deltas, type WrittenVectors } from "./term-folds.ts";
import { WriteTurn } from "./write-turn.ts";

/** Characters of written vectors kept for the fold thread at most (writtenForThread): ~8 MB, a few folds' worth of ~2 KB notes. */
const WRITTEN_CHARS_MAX = 4_000_000;

export class SqliteTermCounts {
  private prepared?: ReturnType<typeof prepare>;
  /** The log position of this process's last fold (or of the first change it logged): when to fold next. */
  private foldHint: number | null = null;
  /** Terms of the changes this process logged since its last fold (FOLD_TERMS). */
  private termsSinceFold = 0;
  /**
   * The terms by tier of the notes this process indexed since its last fold,
   * by key with the log row that added them, so that a fold need not parse
   * their vectors again. Trusted only when that row is the key's last in the
   * pending log (a deleted note's key can be taken by a new note; a committed
   * row's seq is never taken again), and all dropped whenever a write rolls back.
   */
  private indexed = new Map<number, { seq: number; termsByTier: string[][] }>();
  /** What readers found pending, as of log row `upTo`, while search_terms counts up to `folded` (pendingNow). */
  private pending: { folded: number; upTo: number; deltas: Deltas } | null = null;

  constructor(
    private readonly sqlite: Database,
    private readonly foldEvery = FOLD_EVERY,
    /** Shared with the store's group commit: the fold thread writes its folds in its turn (write-turn.ts). */
    private readonly turn = new WriteTurn(),
  ) {}

  private get s() {
    return (this.prepared ??= prepare(this.sqlite));
  }

  /** Folds prepared off this thread (fold-thread.ts), once started: a store's first fold starts it. */
  private thread: FoldThread | null = null;
  /** Folds applied from the thread (for tests and benches). */
  threadFolds = 0;
  /** While the thread runs: the stored vectors this process wrote in the batch being written, then committed ones not handed over yet. */
  private batchVectors: WrittenVectors = new Map();
  private committedVectors: WrittenVectors = new Map();
  private committedChars = 0;
  /** The thread is due a fold request: posted after the batch that logged the row commits, with the vectors written. */
  private requestDue = false;

  /** Whether `added` keeps the terms it is given (not while the fold thread runs): the caller need not make them otherwise. */
  get remembersTerms(): boolean {
    return !this.thread?.running;
  }

  /** The fold thread runs: it also brings the FTS5 index level with the log with each fold it writes (foldWriter), so the writer need not. */
  get threadFollowsFts(): boolean {
    return this.thread?.running === true;
  }

  /** A note was indexed with these terms by tier and logged at `seq`, inside its write (remembered for a fold on this thread only). */
  added(pk: number, seq: number, termsByTier: string[][]): void {
    if (!this.thread?.running) this.indexed.set(pk, { seq, termsByTier });
  }

  /** A write that indexed notes was rolled back: their keys may be taken by other notes, so none of the remembered terms is trusted. */
  forget(): void {
    this.batchVectors.clear();
    this.indexed.clear();
    this.pending = null;
  }

  /** After a change of `terms` terms was logged at `seq`, inside its write: folds the log once it has grown by `foldEvery` rows or FOLD_TERMS terms. */
  logged(seq: number, terms: number): void {
    this.foldHint ??= seq;
    this.termsSinceFold += terms;
    const every = this.thread?.running ? this.foldEvery * THREAD_FOLD_FACTOR : this.foldEvery;
    const everyTerms = this.thread?.running ? THREAD_FOLD_TERMS : FOLD_TERMS;
    if (seq - this.foldHint < every && this.termsSinceFold < everyTerms) return;
    if (this.thread?.running) {
      if (this.sqlite.inTransaction) this.requestDue = true;
      else this.requestFold();
      return;
    }
    this.thread ??= this.startThread();
    this.fold();
  }

  /**
   * A note's stored vector was logged at `seq` inside the batch being
   * written: handed to the fold thread once the batch commits, so that its
   * fold need not read the vector back from the file, whose page cache every
   * commit of the writer empties (docs/benchmarks.md, "Writes of ~2 KB
   * notes, sixth round"). Up to WRITTEN_CHARS_MAX characters wait; the
   * thread reads any others.
   */
  writtenForThread(pk: number, seq: number, vector: string): void {
    if (!this.thread?.running || this.committedChars + vector.length > WRITTEN_CHARS_MAX) return;
    this.batchVectors.set(pk, { seq, vector });
    this.committedChars += vector.length;
  }

  /** After a batch's COMMIT: its vectors can be trusted; a fold due is requested now, with them. */
  committed(): void {
    for (const [pk, written] of this.batchVectors) this.committedVectors.set(pk, written);
    this.batchVectors.clear();
    if (this.requestDue) this.requestFold();
    // A thread that stopped (it failed) needs none: the writer folds again.
    if (this.committedChars > 0 && !this.thread?.running) this.handedOver();
  }

  private requestFold(): void {
    this.requestDue = false;
    // Not asked while a fold is in flight: the vectors wait for the next request.
    if (this.thread?.request(this.committedVectors)) this.handedOver();
  }

  private handedOver(): void {
    this.committedVectors = new Map();
    this.committedChars = 0;
  }

  /** The fold thread on this store's file (none for a database in memory, or when a worker cannot start). */
  private startThread(): FoldThread | null {
    const file = this.sqlite.filename;
    if (!file || file === ":memory:") return null;
    const thread = new FoldThread((applied) => this.foldedByThread(applied));
    return thread.start(file, this.turn) ? thread : null;
  }

  /** The thread made a fold and wrote it (or found the counts moved since it read: another process folded). */
  private foldedByThread(applied: boolean): void {
    if (applied) this.threadFolds++;
    this.foldHint = null;
    this.termsSinceFold = 0;
    // Terms remembered while the thread was starting: a fold on this thread would parse those vectors instead.
    this.indexed.clear();
  }

  /** Stops the fold thread (before the store's connection closes). */
  async close(): Promise<void> {
    await this.thread?.close();
    this.thread = null;
  }

  /**
   * Folds every log row after terms_seq into search_terms, on this thread;
   * inside a write transaction (or makes one). One it makes is IMMEDIATE: a
   * deferred one reads first, and its write then fails with
   * SQLITE_BUSY_SNAPSHOT if the fold thread committed in between.
   */
  fold(): void {
    inSearchWrite(this.sqlite, () => {
      const prepared = prepareFold(this.s, this.indexed);
      if (prepared) applyFold(this.s, prepared);
    });
    this.folded();
  }

  /** After a fold: the next is counted from the next change logged. */
  private folded(): void {
    this.foldHint = null;
    this.termsSinceFold = 0;
    this.indexed.clear();
  }

  /**
   * The change of every count by the log rows not folded yet, in the current
   * read snapshot. Kept between reads while no fold happened, so a read parses
   * only the rows logged since the last one (not the up to FOLD_EVERY rows
   * pending); outside a snapshot of committed rows only (inside a write
   * transaction a read sees rows that may still roll back) it is not kept.
   */
  private pendingNow(keep: boolean): Deltas {
    const folded = this.s.folded.get()!.seq;
    let cache = this.pending;
    if (!keep || !cache || cache.folded !== folded) cache = { folded, upTo: folded, deltas: new Map() };
    const rows = this.s.pendingAfter.all(cache.upTo);
    if (rows.length > 0) {
      for (const [term, change] of deltasOf(this.s, rows, this.indexed).toMap()) {
        const perTier = cache.deltas.get(term);
        if (!perTier) cache.deltas.set(term, change);
        else for (let tier = 0; tier < TIERS; tier++) perTier[tier] += change[tier];
      }
      cache.upTo = rows[rows.length - 1].seq;
    }
    this.pending = keep ? cache : null;
    return cache.deltas;
  }

  /** `read` in one read snapshot, given the change of the rows not folded yet. */
  private snapshot<T>(read: (pending: Deltas) => T): T {
    const own = !this.sqlite.inTransaction;
    if (own) this.sqlite.exec("BEGIN");
    try {
      return read(this.pendingNow(own));
    } finally {
      if (own) this.sqlite.exec("COMMIT");
    }
  }

  /** Notes holding each term, per tier: exact (the table plus the changes not folded yet). */
  tierCounts(terms: string[]): number[][] {
    return this.snapshot((pending) => {
      const found = new Map(terms.map((term) => [term, new Array<number>(TIERS).fill(0)]));
      for (const row of this.s.tierCounts.all(JSON.stringify(terms))) found.get(row.term)![row.tier] = row.notes;
      for (const [term, perTier] of found) {
        const change = pending.get(term);
        if (change) for (let tier = 0; tier < TIERS; tier++) perTier[tier] += change[tier];
      }
      return terms.map((term) => found.get(term)!);
    });
  }

  /** Terms in [from, to) with the notes holding each (typo vocabulary): exact, as tierCounts. */
  vocabulary(from: string, to: string): { term: string; doc: number }[] {
    return this.snapshot((pending) => {
      const rows = this.s.vocabulary.all(from, to);
      if (pending.size === 0) return rows;
      const docs = new Map(rows.map((row) => [row.term, row.doc]));
      for (const [term, perTier] of pending) {
        if (term < from || term >= to) continue;
        docs.set(term, (docs.get(term) ?? 0) + perTier.reduce((sum, n) => sum + n, 0));
      }
      return [...docs].filter(([, doc]) => doc > 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([term, doc]) => ({ term, doc }));
    });
  }
}
