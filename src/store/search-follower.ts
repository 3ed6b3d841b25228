// The in-memory postings of one store (src/core/search/memory-index.ts), built
// from the database and kept level with it through the engine's search log:
// every add and remove of the search index, written in the transaction that
// changes the note and read back in commit order, whichever process made it
// (docs/design.md, "Search"). Engine-neutral: each engine supplies a
// SearchLog (src/store/sqlite/memory-search.ts, src/store/postgres/search-log.ts);
// the states, the budget, building in slices, applying the net change per key
// and rebuilding after the log was trimmed past this store's place are here,
// once. Until the postings are built, or when they would not fit
// SEARCH_MEMORY_MB, search runs on the engine's own index (exact, slower).
import { MemoryIndex } from "../core/search/memory-index.ts";
import type { IndexedVector } from "../core/search/vector.ts";

/** A background build gives the event loop back after this much work. */
const LOAD_SLICE_MS = 10;

/** One key's net change since the last catch-up. */
export interface KeyChange {
  key: number;
  /** The vector the index held for the key before (the first removal seen), or null. */
  removed: string | null;
  /** The vector to hold now (the key's last change was an add, and its note is there), or null. */
  added: IndexedVector | null;
}

export interface LogChanges<P> {
  /** Where the next catch-up starts. */
  position: P;
  changes: KeyChange[];
}

export interface BuildPlan {
  /** What the postings would take (MemoryIndex.estimateBytes), or null when the engine cannot tell cheaply. */
  bytes: number | null;
  /** Small enough to build before start() resolves; otherwise in the background. */
  now: boolean;
}

type Steps<P> = Generator<void, P, void> | AsyncGenerator<void, P, void>;

/** What an engine provides so that its postings follow its database. */
export interface SearchLog<P> {
  plan(): BuildPlan | Promise<BuildPlan>;
  /**
   * Adds every indexed note to `index` from one read snapshot, in steps (a
   * yield between them), and returns the log position of that snapshot.
   * Returns early once `full()` (the caller then sees the size). `background`:
   * the steps are interleaved with requests (use a connection of their own).
   */
  load(index: MemoryIndex, full: () => boolean, background: boolean): Steps<P>;
  /**
   * The net change per key committed after `from`, read in one snapshot; null
   * when the log no longer reaches back to `from` (trimmed). `written`: the
   * vectors this process's own recent writes indexed, by key (spares reading them back).
   */
  changesSince(from: P, written: ReadonlyMap<number, IndexedVector>): LogChanges<P> | null | Promise<LogChanges<P> | null>;
  /**
   * The position after log rows `rows` when they come right after `position`
   * (no other row between), else null. An engine whose rows are numbered
   * densely in commit order (SQLite) provides it: SearchFollower.committed
   * then takes a batch whose rows it was told without reading them.
   */
  after?(position: P, rows: OwnRows): P | null;
  /**
   * Whether a read of the log that ended at `position` took log row `seq`
   * (and every row committed with it). An engine whose rows are numbered in
   * commit order (SQLite) provides it: SearchFollower.committed then drops a
   * batch's vectors that arrive after a read took its rows (a search thread
   * behind the serving thread reads the log for a query asked before them).
   */
  took?(position: P, seq: number): boolean;
  // An engine answers a key's vector from `written` (that very object) only when the key's last
  // add row in the read is this process's own write: a row id taken again by another note after a
  // delete must come with that note's vector (PostgreSQL: PostgresSearchLog.ownRow; SQLite reads
  // back every key removed within the read, as it cannot tell whose add came after).
}

/** The log rows of one of this process's write batches, when they are exactly the adds of the notes it sent: seqs first..last. */
export interface OwnRows {
  first: number;
  last: number;
}

export interface FollowerOptions {
  /**
   * Catch up before every search and right after each of this process's
   * write batches (a cheap local read: SQLite); otherwise a search catches up
   * only when this process wrote since the last catch-up began.
   */
  followEverySearch: boolean;
  /** Catch up on a timer this often (ms), so other processes' writes are found without a search waiting; 0: never. */
  pollMs?: number;
}

type State<P> =
  | { kind: "off"; reason: string }
  | { kind: "loading" }
  | { kind: "ready"; index: MemoryIndex; position: P }
  | { kind: "closed" };

/**
 * Per key, from log rows in commit order: the first removal (it removes the
 * version the index held) and whether the last change was an add.
 */
export function netChanges(rows: Iterable<{ key: number; removed: string | null }>): Map<number, { firstRemoved: string | null; added: boolean }> {
  const net = new Map<number, { firstRemoved: string | null; added: boolean }>();
  for (const row of rows) {
    let change = net.get(row.key);
    if (!change) net.set(row.key, (change = { firstRemoved: row.removed, added: false }));
    change.added = row.removed === null;
  }
  return net;
}

export class SearchFollower<P> {
  private state: State<P> = { kind: "off", reason: "not started" };
  private loading: Promise<void> = Promise.resolve();
  /** Catch-ups run one at a time, in this chain; `queued` is the next one, not started yet (shared by whoever asks meanwhile). */
  private chain: Promise<void> = Promise.resolve();
  private queued: Promise<void> | null = null;
  /** Own writes committed since the last catch-up started (their vectors, by key). */
  private written = new Map<number, IndexedVector>();
  /**
   * This process's own new notes, added to the postings when their write
   * committed, ahead of the log read that will name them (`indexed`): their
   * stored vectors, by key, until a catch-up reads their rows.
   */
  private ahead = new Map<number, { vector: IndexedVector; stored: string }>();
  /** The catch-up that follows this process's latest writes (or the end of a build): searches wait for it. */
  private pending: Promise<void> | null = null;
  /** This process committed writes that no catch-up started since has read. */
  private stale = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  /** Why the last read of the log failed (the database did not answer), or null: nothing was applied, the next catch-up reads again. */
  private readError: unknown = null;

  constructor(
    private readonly log: SearchLog<P>,
    private readonly budgetBytes: number,
    private readonly options: FollowerOptions,
  ) {}

  /** Null while the postings serve searches; otherwise why not (loading, over budget, off). */
  get offReason(): string | null {
    const state = this.state;
    if (state.kind === "ready") return null;
    if (state.kind === "off") return state.reason;
    return state.kind === "loading" ? "the in-memory postings are being built" : "closed";
  }

  /** Builds the postings: before it resolves for a small corpus, else in the background. Call after migrations. */
  async start(): Promise<void> {
    await this.begin();
    await this.pending;
  }

  /** start() without the first catch-up (inside the catch-up chain, which does it itself). */
  private async begin(): Promise<void> {
    if (this.state.kind === "closed" || this.state.kind === "loading") return;
    if (this.budgetBytes <= 0) {
      this.state = { kind: "off", reason: "SEARCH_MEMORY_MB is 0" };
      return;
    }
    this.state = { kind: "loading" };
    this.ahead.clear();
    // loaded() waits from here: a rebuild begun by a catch-up (the log trimmed past this
    // store's place) is waited for too, whether it runs now or in the background.
    let settle!: (done: Promise<unknown>) => void;
    this.loading = new Promise<void>((resolve) => {
      settle = (done) => void done.then(() => resolve(), () => resolve());
    });
    let plan: BuildPlan;
    try {
      plan = await this.log.plan();
    } catch (error) {
      this.fail(`building the in-memory postings failed: ${(error as Error).message}`);
      settle(Promise.resolve());
      return;
    }
    if (plan.bytes !== null && plan.bytes > this.budgetBytes) {
      this.fail(overBudget(plan.bytes, this.budgetBytes));
      settle(Promise.resolve());
      return;
    }
    const build = this.build(plan.now);
    settle(build.then(() => this.pending ?? undefined));
    if (plan.now) await build;
    if (this.options.pollMs && !this.timer) {
      this.timer = setInterval(() => void this.follow().catch(() => {}), this.options.pollMs);
      this.timer.unref?.();
    }
  }

  private fail(reason: string): void {
    if (this.state.kind !== "closed") this.state = { kind: "off", reason };
  }

  private async build(now: boolean): Promise<void> {
    const index = new MemoryIndex();
    const stopped = () => this.state.kind === "closed";
    try {
      const steps = this.log.load(index, () => index.bytes > this.budgetBytes, !now);
      // The first step of a background build waits too: start() returns before any work.
      if (!now) await new Promise((resolve) => setImmediate(resolve));
      let sliceStart = performance.now();
      let position: P;
      try {
        for (;;) {
          if (stopped()) return;
          // A synchronous engine's build runs without a pause (its read transaction may be on the connection requests use).
          const step = steps.next();
          const next = step instanceof Promise ? await step : step;
          if (next.done) {
            position = next.value;
            break;
          }
          if (now || performance.now() - sliceStart < LOAD_SLICE_MS) continue;
          await new Promise((resolve) => setImmediate(resolve));
          sliceStart = performance.now();
        }
      } finally {
        const closing = steps.return(undefined as never);
        if (closing instanceof Promise) await closing;
      }
      if (stopped()) return;
      if (index.bytes > this.budgetBytes) {
        this.fail(overBudget(index.bytes, this.budgetBytes));
        return;
      }
      // Arrays sized for the load shrink to what they hold.
      index.trim();
      releaseBuildGarbage();
      this.ahead.clear();
      this.state = { kind: "ready", index, position };
      // What was written while building: followed before any search uses the postings.
      this.followOwn();
    } catch (error) {
      this.fail(`building the in-memory postings failed: ${(error as Error).message}`);
    }
  }

  /** Settles once a background build has finished (or failed). */
  loaded(): Promise<void> {
    return this.loading;
  }

  /** The postings, level with every write this process committed (and, on the engines that ask, with every other's); null when search must use the engine's index. */
  async current(): Promise<MemoryIndex | null> {
    if (this.state.kind !== "ready") return null;
    if (this.options.followEverySearch) await this.follow();
    else {
      if (this.stale) this.followOwn();
      if (this.pending) await this.pending;
    }
    if (this.readError !== null) {
      // The postings may lack this process's own writes: read again, and fail the search (the database's error) if that fails too.
      await this.follow();
      if (this.readError !== null) throw this.readError;
    }
    const state = this.state as State<P>;
    return state.kind === "ready" ? state.index : null;
  }

  /**
   * After a batch of this process's writes committed; `written` holds the
   * vectors it indexed, by key. With `rows` (its log rows are exactly the
   * adds of those notes) and an engine that can tell they follow the
   * postings' place (SearchLog.after), they are added without reading the
   * log: docs/design.md, "The search thread".
   */
  committed(written?: ReadonlyMap<number, IndexedVector>, rows?: OwnRows, upTo?: number): void {
    if (this.state.kind !== "ready") return; // a build in progress follows them when it ends
    if (written && rows && this.log.after) return this.takeOwn(written, rows);
    if (written) this.keepWritten(written, upTo);
    this.stale = true;
    // Where reading the log is a local read, followed now, so that no search
    // pays for catching up a burst of writes. Over a network it waits for the
    // next search or the timer: a burst of writes is then read in a few
    // statements, not one per write.
    if (this.options.followEverySearch) this.followOwn();
  }

  /**
   * Keeps a batch's vectors for the catch-up that reads its log rows (the
   * batch's last is `upTo`): a key's vector is then taken from them, not read
   * back. None is kept when a read of the log took those rows already: they
   * were applied from the database, and a vector kept would be taken by a
   * later read for whatever note holds the key by then (SQLite gives a
   * deleted newest note's key to the next note), indexing that note with the
   * deleted one's terms.
   */
  private keepWritten(written: ReadonlyMap<number, IndexedVector>, upTo: number | undefined): void {
    const state = this.state;
    if (upTo !== undefined && state.kind === "ready" && this.log.took?.(state.position, upTo)) return;
    for (const [key, vector] of written) this.written.set(key, vector);
  }

  /**
   * After a write of new notes committed (keys no note had before, each with
   * the one add row its write logged): they are added to the postings now,
   * so this process's next search or similar-notes lookup finds them without
   * waiting for a read of the log (docs/design.md, "Search"). The catch-up
   * that later reads their rows does not add them again; a row that removed
   * one meanwhile (a delete through another process) removes it then.
   * `stored`: the vector as written to the database (what removing it needs).
   */
  indexed(added: ReadonlyMap<number, { vector: IndexedVector; stored: string }>): void {
    const state = this.state;
    if (state.kind !== "ready") return; // a build in progress follows them from the log when it ends
    for (const [key, note] of added) {
      // A catch-up that began before the commit may have read the row (and added the note) already.
      if (!state.index.add(key, note.vector)) continue;
      this.ahead.set(key, note);
      if (state.index.bytes > this.budgetBytes) {
        this.fail(overBudget(state.index.bytes, this.budgetBytes));
        return;
      }
    }
  }

  /**
   * committed() for a batch whose log rows are known: in the catch-ups'
   * chain (after any catch-up already started or queued, before any asked
   * later: `queued` is let go, so a search asking now waits for this step),
   * its notes are added and the place moved past its rows when they follow
   * the place directly; otherwise they are handed to a catch-up as before
   * when another process logged rows between, and dropped when a catch-up
   * read these already (keepWritten).
   */
  private takeOwn(written: ReadonlyMap<number, IndexedVector>, rows: OwnRows): void {
    const step = this.chain.then(() => {
      const state = this.state;
      if (state.kind !== "ready") return;
      const next = this.log.after!(state.position, rows);
      if (next === null) {
        this.keepWritten(written, rows.last);
        this.stale = true;
        this.followOwn();
        return;
      }
      for (const [key, vector] of written) {
        state.index.add(key, vector);
        // Checked note by note, as a catch-up does.
        if (state.index.bytes > this.budgetBytes) return this.fail(overBudget(state.index.bytes, this.budgetBytes));
      }
      state.position = next;
    });
    const settled = step.catch((error) => this.fail(`following the search log failed: ${(error as Error).message}`));
    this.chain = settled;
    this.queued = null;
    this.pending = settled;
    void settled.then(() => {
      if (this.pending === settled) this.pending = null;
    });
  }

  /** A catch-up that every later search waits for (it holds this process's writes so far). */
  private followOwn(): void {
    const catchUp = this.follow();
    this.pending = catchUp;
    void catchUp.then(() => {
      if (this.pending === catchUp) this.pending = null;
    });
  }

  close(): void {
    this.state = { kind: "closed" };
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * A catch-up that starts after this call (so it sees every write committed
   * before it), never throwing: postings that could not follow the log are
   * dropped (search takes the engine's index, and the reason is kept), since
   * a half-applied batch would no longer be exact.
   */
  follow(): Promise<void> {
    if (this.queued) return this.queued;
    const next: Promise<void> = this.chain.then(async () => {
      this.queued = null;
      // A catch-up that takes this process's own writes (whoever started it: a search, the timer) is one every search waits for.
      if (this.stale) this.pending = next;
      try {
        await this.catchUp();
        this.readError = null;
      } catch (error) {
        if (error instanceof LogReadFailed) this.readError = error.cause;
        else this.fail(`following the search log failed: ${(error as Error).message}`);
      } finally {
        if (this.pending === next) this.pending = null;
      }
    });
    this.queued = next;
    this.chain = next;
    return next;
  }

  private async catchUp(): Promise<void> {
    const state = this.state;
    if (state.kind !== "ready") return;
    const written = this.written;
    this.written = new Map();
    this.stale = false;
    // Notes added ahead of the log are this process's writes too: their vectors are not read back.
    const own = this.ahead.size === 0 ? written : new Map([...[...this.ahead].map(([key, note]) => [key, note.vector] as const), ...written]);
    let read: LogChanges<P> | null;
    try {
      read = await this.log.changesSince(state.position, own);
    } catch (error) {
      // Nothing applied: the next catch-up reads the same rows again (with these vectors).
      for (const [key, vector] of written) if (!this.written.has(key)) this.written.set(key, vector);
      if (written.size > 0) this.stale = true;
      throw new LogReadFailed(error);
    }
    if (this.state !== state) return; // closed or dropped meanwhile
    if (read === null) {
      // The log was trimmed past this store's place (it did not follow for a long time): build again.
      this.state = { kind: "off", reason: "rebuilding" };
      await this.begin();
      if ((this.state as State<P>).kind === "ready") await this.catchUp();
      return;
    }
    for (const change of read.changes) {
      const ahead = this.ahead.get(change.key);
      if (ahead !== undefined) {
        // A new note's rows start with its own add, which the postings hold already. The
        // engine answers that very vector when the key's last add is that row (or the
        // stored one, read back when the read was sent before the write was known here);
        // otherwise (its note deleted since, maybe its row id taken again) the postings follow the log.
        this.ahead.delete(change.key);
        if (change.added === ahead.vector || change.added === ahead.stored) continue;
        state.index.remove(change.key, ahead.stored);
        if (change.added !== null) state.index.add(change.key, change.added);
        continue;
      }
      if (change.removed !== null) state.index.remove(change.key, change.removed);
      if (change.added !== null) {
        state.index.add(change.key, change.added);
        // Checked note by note: notes of many distinct terms must not overshoot the budget by a batch.
        if (state.index.bytes > this.budgetBytes) break;
      }
    }
    state.position = read.position;
    if (state.index.bytes > this.budgetBytes) this.fail(overBudget(state.index.bytes, this.budgetBytes));
  }
}

/**
 * A full collection right after a build: the build leaves the vectors it read
 * and the arrays it outgrew as garbage, several times the postings' size at
 * 1M notes, which the runtime would otherwise hold for minutes
 * (docs/benchmarks.md, "Issue 18, third round").
 */
function releaseBuildGarbage(): void {
  if (typeof Bun !== "undefined") Bun.gc(true);
}

/** The log could not be read (the database did not answer); the postings are intact but may be behind. */
class LogReadFailed extends Error {
  constructor(readonly cause: unknown) {
    super("reading the search log failed");
  }
}

const overBudget = (bytes: number, budget: number) =>
  `the in-memory postings would take ~${Math.ceil(bytes / 1048576)} MB, over SEARCH_MEMORY_MB (${Math.floor(budget / 1048576)} MB)`;
