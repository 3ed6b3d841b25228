// The SQLite engine's search log (drizzle/0004_search_log.sql), as the shared
// follower (src/store/search-follower.ts) reads it: the in-memory postings are
// built from search_vectors in one read snapshot and kept level through
// search_log, whose seq is commit order (SQLite has one writer at a time).
// Before each search the log is read from where this process last stopped
// (a cheap local read), so a note written by another server on the same file
// is found on the very next search. Until the postings are built, or when they
// would not fit SEARCH_MEMORY_MB, search runs on the FTS5 index (search.ts).
import { Database } from "bun:sqlite";
import { MemoryIndex } from "../../core/search/memory-index.ts";
import type { OrderColumns } from "../../core/search/query.ts";
import type { IndexedVector } from "../../core/search/vector.ts";
import { netChanges, SearchFollower, type BuildPlan, type LogChanges, type OwnRows, type SearchLog } from "../search-follower.ts";
import { attachSearchFile } from "./search-file.ts";

/** Corpora up to this many postings are loaded before migrate() returns; larger ones in the background. */
const LOAD_NOW_POSTINGS = 2_000_000;
/** Notes (and terms sized) per step of a load. */
const LOAD_STEP_NOTES = 200;
const LOAD_STEP_TERMS = 2_000;
/** Log rows read per query while catching up. */
const LOG_PAGE = 10_000;

interface LogRow {
  seq: number;
  pk: number;
  removed: string | null;
}

/** The postings of one SQLite store, following its search_log. */
export function sqliteMemorySearch(sqlite: Database, budgetBytes: number, loadNowPostings = LOAD_NOW_POSTINGS): SearchFollower<number> {
  return new SearchFollower(new SqliteSearchLog(sqlite, loadNowPostings), budgetBytes, { followEverySearch: true });
}

/** What had changed when the log was last read: rows this connection changed (total_changes()), and other connections' commits (data_version). */
interface Changed {
  own: number;
  others: number;
}

export class SqliteSearchLog implements SearchLog<number> {
  private statements?: ReturnType<SqliteSearchLog["prepare"]>;
  /** Where the last read of the log ended, and what had changed then. */
  private lastRead: { position: number; changed: Changed } | null = null;

  constructor(
    private readonly sqlite: Database,
    /** Corpora with more postings are built in the background (a setting only for tests). */
    private readonly loadNowPostings: number,
  ) {}

  private prepare() {
    const sqlite = this.sqlite;
    return {
      since: sqlite.query<LogRow, [number, number]>("SELECT seq, pk, removed FROM search_log WHERE seq > ?1 ORDER BY seq LIMIT ?2"),
      oldest: sqlite.query<{ seq: number | null }, []>("SELECT min(seq) AS seq FROM search_log"),
      changed: sqlite.query<Changed, []>("SELECT total_changes() AS own, (SELECT data_version FROM pragma_data_version) AS others"),
      vectorOf: sqlite.query<{ vector: string }, [number]>("SELECT vector FROM search_vectors WHERE pk = ?"),
      size: sqlite.query<{ postings: number; terms: number; notes: number }, []>(
        "SELECT (SELECT coalesce(sum(notes), 0) FROM search_terms) AS postings, (SELECT count(DISTINCT term) FROM search_terms) AS terms, (SELECT notes FROM search_totals) AS notes",
      ),
    };
  }

  private get s() {
    return (this.statements ??= this.prepare());
  }

  plan(): BuildPlan {
    const size = this.s.size.get()!;
    return { bytes: MemoryIndex.estimateBytes(size.postings, size.terms, size.notes), now: size.postings <= this.loadNowPostings };
  }

  *load(index: MemoryIndex, full: () => boolean, background: boolean): Generator<void, number, void> {
    const db = background ? new Database(this.sqlite.filename, { readonly: true }) : this.sqlite;
    try {
      if (background) attachSearchFile(db, true);
      return yield* loadSnapshot(db, index, full);
    } finally {
      if (background) db.close();
    }
  }

  /**
   * Log seqs are handed out densely in commit order (AUTOINCREMENT; writes
   * are serialized, and a rolled-back row's seq is handed out again), so rows
   * first..last follow `position` with nothing between when first is the
   * next seq.
   */
  after(position: number, rows: OwnRows): number | null {
    return position === rows.first - 1 ? rows.last : null;
  }

  /** A read that ended at `position` took every row up to it (a batch's rows commit together, so a read takes all or none). */
  took(position: number, seq: number): boolean {
    return position >= seq;
  }

  /**
   * The log rows written after `from`, in one read transaction (the vectors
   * read are those of the same snapshot), reduced to the net change per key.
   */
  changesSince(from: number, written: ReadonlyMap<number, IndexedVector>): LogChanges<number> | null {
    const own = !this.sqlite.inTransaction;
    // Every search and similar-notes lookup catches up first: when no row was
    // changed since the last read, by this connection or by a commit of any
    // other, there is nothing to read, and the transaction and query are skipped.
    const changed = own ? this.s.changed.get()! : null;
    const last = this.lastRead;
    if (changed && written.size === 0 && last?.position === from && last.changed.own === changed.own && last.changed.others === changed.others) {
      return { position: from, changes: [] };
    }
    this.lastRead = null;
    // After this connection's own write batches (the common case on a server),
    // every row since is one of its adds, whose vectors it holds: one read of
    // the log without a transaction (no vector is read back, so there is no
    // snapshot to keep). Anything else (a removal, a key it did not write:
    // another process's or a catch-up's) is read again below, in one snapshot.
    if (own && written.size > 0) {
      const read = this.readLog(from, written, true);
      if (read !== undefined) {
        if (read !== null) this.lastRead = { position: read.position, changed: changed! };
        return read;
      }
    }
    if (own) this.sqlite.exec("BEGIN");
    try {
      const read = this.readLog(from, written, false)!;
      if (read !== null && changed) this.lastRead = { position: read.position, changed };
      return read;
    } finally {
      if (own) this.sqlite.exec("COMMIT");
    }
  }

  /**
   * The log rows after `from` as net changes per key; null when the log no
   * longer reaches back to `from`. `ownAddsOnly`: undefined, reading no
   * vector back, unless every row adds a key of `written`.
   */
  private readLog(from: number, written: ReadonlyMap<number, IndexedVector>, ownAddsOnly: boolean): LogChanges<number> | null | undefined {
    const rows: LogRow[] = [];
    let seq = from;
    for (;;) {
      const page = this.s.since.all(seq, LOG_PAGE);
      if (page.length === 0) break;
      if (seq === from && page[0].seq !== seq + 1 && (this.s.oldest.get()?.seq ?? 0) > seq + 1) return null;
      if (ownAddsOnly) for (const row of page) if (row.removed !== null || !written.has(row.pk)) return undefined;
      rows.push(...page);
      seq = page[page.length - 1].seq;
      if (page.length < LOG_PAGE) break;
    }
    // A key removed within the read and added again may name another note (SQLite hands a deleted
    // newest note's row id to the next note, perhaps another process's): its vector is read back,
    // not taken from this process's own writes (SearchLog.changesSince).
    const removedInRead = new Set<number>();
    for (const row of rows) if (row.removed !== null) removedInRead.add(row.pk);
    const changes = [...netChanges(rows.map((row) => ({ key: row.pk, removed: row.removed })))].map(([key, change]) => ({
      key,
      removed: change.firstRemoved,
      added: change.added ? ((removedInRead.has(key) ? undefined : written.get(key)) ?? this.s.vectorOf.get(key)?.vector ?? null) : null,
    }));
    return { position: seq, changes };
  }
}

/** The stored vectors (search_vectors) of some notes, read on `sqlite`: for scoring a few tagged notes directly. */
export function storedVectors(sqlite: Database): (keys: number[]) => { key: number; vector: string }[] {
  const statement = sqlite.query<[number, string], [string]>("SELECT pk, vector FROM search_vectors WHERE pk IN (SELECT value FROM json_each(?1))");
  return (keys) => (statement.values(JSON.stringify(keys)) as [number, string][]).map(([key, vector]) => ({ key, vector }));
}

/**
 * A statement reading `columns` (of `posts` aliased `p`) of the notes whose
 * keys are the JSON array ?1, never a superseded one: a note may be superseded
 * between a ranking and this read (the readers of search results, similar
 * listings and their order columns, on either thread; here, not in
 * note-row.ts, so that the search thread's bundle stays without Drizzle).
 */
export const unsupersededByKeys = (columns: string) =>
  `SELECT ${columns} FROM posts p WHERE p.pk IN (SELECT value FROM json_each(?1)) AND p.superseded_by IS NULL`;

/** The order columns (cutTies) of some notes, read on `sqlite`; never a superseded note, as the rows read after them. */
export function orderColumns(sqlite: Database): (keys: number[]) => OrderColumns[] {
  const statement = sqlite.query<OrderColumns, [string]>(unsupersededByKeys("p.pk, p.score, p.created_at AS createdAt"));
  return (keys) => statement.all(JSON.stringify(keys));
}

/** The loading connection's statements. */
function loadStatements(db: Database) {
  return {
    seq: db.query<{ seq: number }, []>("SELECT coalesce(max(seq), 0) AS seq FROM search_log"),
    termSizes: db.query<{ term: string; notes: number }, []>("SELECT term, sum(notes) AS notes FROM search_terms GROUP BY term"),
    vectors: db.query<{ pk: number; vector: string }, [number, number]>("SELECT pk, vector FROM search_vectors WHERE pk > ?1 ORDER BY pk LIMIT ?2"),
  };
}

/**
 * All postings as of one read snapshot of `db`, with the log position of that
 * snapshot, built in small steps (its read transaction ends when it finishes or is closed).
 */
function* loadSnapshot(db: Database, index: MemoryIndex, full: () => boolean): Generator<void, number, void> {
  const s = loadStatements(db);
  const own = !db.inTransaction;
  if (own) db.exec("BEGIN");
  try {
    const seq = s.seq.get()!.seq;
    let reserved = 0;
    for (const { term, notes } of s.termSizes.iterate()) {
      index.reserve(term, notes);
      if (++reserved % LOAD_STEP_TERMS === 0) yield;
    }
    for (let after = Number.MIN_SAFE_INTEGER; ; ) {
      const rows = s.vectors.all(after, LOAD_STEP_NOTES);
      for (const row of rows) {
        index.add(row.pk, row.vector);
        if (full()) return seq;
      }
      if (rows.length < LOAD_STEP_NOTES) return seq;
      after = rows[rows.length - 1].pk;
      yield;
    }
  } finally {
    if (own) db.exec("COMMIT");
  }
}
