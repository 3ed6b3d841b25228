// The in-memory postings of one SQLite store (src/core/search/memory-index.ts),
// built from search_vectors and kept level with the database through
// search_log: every add and remove of the search index, in commit order,
// whichever process made it (docs/design.md, "Search"). Before a search the
// log is read from where this process last stopped, so a note written by
// another server on the same file is found on the very next search. Until
// the postings are built, or when they would not fit SEARCH_MEMORY_MB,
// search runs on the FTS5 index (search.ts): exact too, slower.
import { Database } from "bun:sqlite";
import { MemoryIndex } from "../../core/search/memory-index.ts";

/** Corpora up to this many postings are loaded before migrate() returns; larger ones in the background. */
const LOAD_NOW_POSTINGS = 2_000_000;
/** Notes (and terms sized) per step of a load. */
const LOAD_STEP_NOTES = 200;
const LOAD_STEP_TERMS = 2_000;
/** A background load gives the event loop back after this much work. */
const LOAD_SLICE_MS = 10;
/** Log rows read per query while catching up. */
const LOG_PAGE = 10_000;

type State =
  | { kind: "off"; reason: string }
  | { kind: "loading" }
  | { kind: "ready"; index: MemoryIndex; seq: number }
  | { kind: "closed" };

interface LogRow {
  seq: number;
  pk: number;
  removed: string | null;
}

export class SqliteMemorySearch {
  private state: State = { kind: "off", reason: "not started" };
  private loading: Promise<void> = Promise.resolve();
  private statements?: ReturnType<SqliteMemorySearch["prepare"]>;

  constructor(
    private readonly sqlite: Database,
    private readonly budgetBytes: number,
    /** Corpora with more postings are built in the background (a setting only for tests). */
    private readonly loadNowPostings = LOAD_NOW_POSTINGS,
  ) {}

  /** Null while the postings serve searches; otherwise why not (loading, over budget, off). */
  get offReason(): string | null {
    const state = this.state;
    if (state.kind === "ready") return null;
    if (state.kind === "off") return state.reason;
    return state.kind === "loading" ? "the in-memory postings are being built" : "closed";
  }

  private prepare() {
    const sqlite = this.sqlite;
    return {
      since: sqlite.query<LogRow, [number, number]>("SELECT seq, pk, removed FROM search_log WHERE seq > ?1 ORDER BY seq LIMIT ?2"),
      oldest: sqlite.query<{ seq: number | null }, []>("SELECT min(seq) AS seq FROM search_log"),
      vectorOf: sqlite.query<{ vector: string }, [number]>("SELECT vector FROM search_vectors WHERE pk = ?"),
    };
  }

  private get s() {
    return (this.statements ??= this.prepare());
  }

  /** Builds the postings: at once for a small corpus, else in the background. Call after migrations. */
  start(): void {
    if (this.state.kind === "closed" || this.state.kind === "loading") return;
    try {
      this.build();
    } catch (error) {
      this.state = { kind: "off", reason: `building the in-memory postings failed: ${(error as Error).message}` };
    }
  }

  private build(): void {
    if (this.budgetBytes <= 0) {
      this.state = { kind: "off", reason: "SEARCH_MEMORY_MB is 0" };
      return;
    }
    const size = this.sqlite.query<{ postings: number; terms: number; notes: number }, []>(
      "SELECT (SELECT coalesce(sum(notes), 0) FROM search_terms) AS postings, (SELECT count(DISTINCT term) FROM search_terms) AS terms, (SELECT notes FROM search_totals) AS notes",
    ).get()!;
    const estimate = MemoryIndex.estimateBytes(size.postings, size.terms, size.notes);
    if (estimate > this.budgetBytes) {
      this.state = { kind: "off", reason: overBudget(estimate, this.budgetBytes) };
      return;
    }
    this.state = { kind: "loading" };
    if (size.postings <= this.loadNowPostings) {
      this.finishLoad(loadNow(this.sqlite, this.budgetBytes));
      return;
    }
    const reader = new Database(this.sqlite.filename, { readonly: true });
    this.loading = loadInSteps(reader, this.budgetBytes, () => this.state.kind === "closed")
      .then((loaded) => this.finishLoad(loaded))
      .catch((error: Error) => {
        if (this.state.kind !== "closed") this.state = { kind: "off", reason: `building the in-memory postings failed: ${error.message}` };
      })
      .finally(() => reader.close());
  }

  private finishLoad(loaded: Loaded | null): void {
    if (this.state.kind === "closed") return;
    if (loaded === null) this.state = { kind: "off", reason: "closed while loading" };
    else if (loaded.index.bytes > this.budgetBytes) this.state = { kind: "off", reason: overBudget(loaded.index.bytes, this.budgetBytes) };
    else this.state = { kind: "ready", ...loaded };
    this.follow();
  }

  /** Settles once a background build has finished (or failed). */
  loaded(): Promise<void> {
    return this.loading;
  }

  /** The postings, level with every committed write; null when search must use the FTS5 index. */
  current(): MemoryIndex | null {
    this.follow();
    return this.state.kind === "ready" ? this.state.index : null;
  }

  /**
   * catchUp(), never throwing: postings that could not follow the log are
   * dropped (search takes the FTS5 path, and the reason is kept), since a
   * half-applied batch would no longer be exact.
   */
  private follow(written?: Map<number, string>): void {
    if (this.state.kind !== "ready") return;
    try {
      this.catchUp(written);
    } catch (error) {
      this.state = { kind: "off", reason: `following search_log failed: ${(error as Error).message}` };
    }
  }

  /**
   * After a batch of this process's writes: follows them now, so that no
   * search pays for catching up a burst of writes. `written` holds the
   * vectors the batch indexed, by key (spares reading them back).
   */
  committed(written: Map<number, string>): void {
    this.follow(written);
  }

  close(): void {
    this.state = { kind: "closed" };
  }

  /**
   * Applies the log rows written since the last catch-up, in one read
   * transaction (the vectors read are those of the same snapshot). Per note,
   * only the net change matters: the first removal (if the note was held
   * before, it removes that version) and whether its last change was an add.
   */
  private catchUp(written?: Map<number, string>): void {
    const state = this.state;
    if (state.kind !== "ready") return;
    const own = !this.sqlite.inTransaction;
    let trimmedPast = false;
    if (own) this.sqlite.exec("BEGIN");
    try {
      const net = new Map<number, { firstRemoved: string | null; added: boolean }>();
      let seq = state.seq;
      for (;;) {
        const rows = this.s.since.all(seq, LOG_PAGE);
        if (rows.length === 0) break;
        if (seq === state.seq && rows[0].seq !== seq + 1 && (this.s.oldest.get()?.seq ?? 0) > seq + 1) {
          trimmedPast = true;
          break;
        }
        for (const row of rows) {
          let change = net.get(row.pk);
          if (!change) net.set(row.pk, (change = { firstRemoved: row.removed, added: false }));
          change.added = row.removed === null;
        }
        seq = rows[rows.length - 1].seq;
        if (rows.length < LOG_PAGE) break;
      }
      if (trimmedPast) return;
      for (const [pk, change] of net) {
        if (change.firstRemoved !== null) state.index.remove(pk, change.firstRemoved);
        if (change.added) {
          const vector = written?.get(pk) ?? this.s.vectorOf.get(pk)?.vector;
          if (vector !== undefined) state.index.add(pk, vector);
          // Checked note by note: notes of many distinct terms must not overshoot the budget by a batch.
          if (state.index.bytes > this.budgetBytes) break;
        }
      }
      state.seq = seq;
    } finally {
      if (own) this.sqlite.exec("COMMIT");
      if (trimmedPast) {
        // The log was trimmed past this process's place (it did not search for a long time): build again.
        this.state = { kind: "off", reason: "rebuilding" };
        this.start();
      }
    }
    if (state.index.bytes > this.budgetBytes) {
      this.state = { kind: "off", reason: overBudget(state.index.bytes, this.budgetBytes) };
    }
  }
}

const overBudget = (bytes: number, budget: number) =>
  `the in-memory postings would take ~${Math.ceil(bytes / 1048576)} MB, over SEARCH_MEMORY_MB (${Math.floor(budget / 1048576)} MB)`;

/** The loading connection's statements. */
function loadStatements(db: Database) {
  return {
    seq: db.query<{ seq: number }, []>("SELECT coalesce(max(seq), 0) AS seq FROM search_log"),
    termSizes: db.query<{ term: string; notes: number }, []>("SELECT term, sum(notes) AS notes FROM search_terms GROUP BY term"),
    vectors: db.query<{ pk: number; vector: string }, [number, number]>("SELECT pk, vector FROM search_vectors WHERE pk > ?1 ORDER BY pk LIMIT ?2"),
  };
}

interface Loaded {
  index: MemoryIndex;
  seq: number;
}

/**
 * All postings as of one read snapshot of `db`, with the log position of that
 * snapshot, built in small steps: the generator yields between steps and
 * returns the result (its read transaction ends when it finishes or is closed).
 */
function* loadSnapshot(db: Database, budgetBytes: number): Generator<void, Loaded, void> {
  const s = loadStatements(db);
  const own = !db.inTransaction;
  if (own) db.exec("BEGIN");
  try {
    const index = new MemoryIndex();
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
        // Over budget: stop here (the caller sees the size and drops the postings).
        if (index.bytes > budgetBytes) return { index, seq };
      }
      if (rows.length < LOAD_STEP_NOTES) {
        index.trim();
        return { index, seq };
      }
      after = rows[rows.length - 1].pk;
      yield;
    }
  } finally {
    if (own) db.exec("COMMIT");
  }
}

/** Runs loadSnapshot to its end at once. */
function loadNow(db: Database, budgetBytes: number): Loaded {
  const steps = loadSnapshot(db, budgetBytes);
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/**
 * Runs loadSnapshot on its own connection, giving the event loop back after
 * each LOAD_SLICE_MS of work (requests are served between slices); null when
 * `stopped` turns true.
 */
async function loadInSteps(reader: Database, budgetBytes: number, stopped: () => boolean): Promise<Loaded | null> {
  // The first step waits too: start() (and so migrate()) returns before any work.
  await new Promise((resolve) => setImmediate(resolve));
  if (stopped()) return null;
  const steps = loadSnapshot(reader, budgetBytes);
  try {
    let sliceStart = performance.now();
    for (;;) {
      const next = steps.next();
      if (next.done) return next.value;
      if (performance.now() - sliceStart < LOAD_SLICE_MS) continue;
      await new Promise((resolve) => setImmediate(resolve));
      if (stopped()) return null;
      sliceStart = performance.now();
    }
  } finally {
    steps.return(undefined as never);
  }
}
