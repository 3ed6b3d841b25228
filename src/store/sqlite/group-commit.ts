// Group commit: request writes queued during one turn of the event loop (a
// little longer while the notes of lookups being answered are on their way:
// WriteHold) run in ONE write transaction, each inside its own savepoint (a
// failing write rolls back alone), in arrival order. Each promise settles after COMMIT, so
// an acknowledged write is durable. One commit per batch instead of per
// request is what lets SQLite take thousands of notes a second.
// Each batch takes cairn.db's write lock first, as BEGIN IMMEDIATE would,
// which orders writers across processes (the server and `cairn admin`); but
// not the attached search file's, which BEGIN IMMEDIATE would take too: the
// fold thread writes that file meanwhile (search-file.ts).
import type { Database, Statement } from "bun:sqlite";

/** The most request writes committed together. */
const MAX_WRITE_BATCH = 256;
/** The longest a batch waits for writes on their way (WriteHold) after its first write was queued (a timer's least wait). */
const MAX_HOLD_MS = 1;

/**
 * Writes known to be on their way: note creations whose similar-notes lookup
 * is still being answered (search-thread.ts). A batch waits for those asked
 * before its first write was queued, MAX_HOLD_MS at most. With hints on, the
 * answers come back a few at a time, and batches of a few notes each spent a
 * commit (and a message to the search thread) on every few notes; waiting
 * gives fewer, larger batches (docs/benchmarks.md, "Fourteenth round"). A
 * lone create waits for nothing: no other lookup is on its way.
 */
export interface WriteHold {
  /** A mark taken when a batch's first write is queued. */
  mark(): number;
  /** Some write asked for before `mark` is still on its way. */
  coming(mark: number): boolean;
  /** Calls `wake` once, when some of them may have been queued. */
  onArrival(wake: () => void): void;
}

/**
 * The WriteHold of similar-notes lookups: the search thread (search-thread.ts)
 * says which it asked (by query id, ascending) and which were answered, and
 * when a message of answers has been handled; the group commit asks it.
 */
export class LookupsOnTheirWay implements WriteHold {
  /** Lookups not answered yet, by id in the order asked. */
  private readonly waiting = new Set<number>();
  private next = 0;
  private arrivals: (() => void)[] = [];

  asked(id: number): void {
    this.waiting.add(id);
    this.next = id + 1;
  }

  answered(id: number): void {
    this.waiting.delete(id);
  }

  /** After a message of answers (or when none will come: every waiting lookup is dropped). */
  arrived(): void {
    const wakes = this.arrivals;
    this.arrivals = [];
    for (const wake of wakes) wake();
  }

  /** None will be answered (the search thread stopped). */
  clear(): void {
    this.waiting.clear();
    this.arrived();
  }

  mark(): number {
    return this.next;
  }

  coming(mark: number): boolean {
    // A Set iterates in insertion order: its first id is the oldest lookup waiting.
    for (const id of this.waiting) return id < mark;
    return false;
  }

  onArrival(wake: () => void): void {
    this.arrivals.push(wake);
  }
}

interface Job {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface CommitHooks {
  /** After a batch's COMMIT, before its promises settle. */
  committed(): void;
  /** After a batch failed to begin or commit (nothing of it is stored). */
  failed(): void;
  /** Before each write of a batch, inside its savepoint. */
  writeStarted?(): void;
  /** After each write of a batch: `ok` false when it failed and was rolled back to its savepoint (the others go on). */
  writeEnded?(ok: boolean): void;
  /** After a batch's writes, before its COMMIT, in its transaction; a throw fails the whole batch. */
  beforeCommit?(): void;
}

export class GroupCommit {
  private queue: Job[] = [];
  private flushScheduled = false;
  /** The hold's mark and the time of the queue's first write. */
  private firstMark = 0;
  private firstAt = 0;
  private statements?: Record<"begin" | "savepoint" | "release" | "rollbackTo" | "commit" | "rollback", Statement> & { lock: Statement | null };

  constructor(
    private readonly sqlite: Database,
    private readonly hooks: CommitHooks,
    /**
     * A statement that writes nothing but takes the main file's write lock,
     * run right after BEGIN; without one a batch begins with BEGIN IMMEDIATE
     * (which locks every attached file too).
     */
    private readonly lockStatement?: string,
    private readonly hold?: WriteHold,
  ) {}

  /** Runs `work` inside the next batch's transaction; settles after COMMIT. */
  write<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.queue.length === 0) this.queueStarted();
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private get tx() {
    return (this.statements ??= {
      begin: this.sqlite.prepare(this.lockStatement ? "BEGIN" : "BEGIN IMMEDIATE"),
      lock: this.lockStatement ? this.sqlite.prepare(this.lockStatement) : null,
      savepoint: this.sqlite.prepare("SAVEPOINT job"),
      release: this.sqlite.prepare("RELEASE job"),
      rollbackTo: this.sqlite.prepare("ROLLBACK TO job"),
      commit: this.sqlite.prepare("COMMIT"),
      rollback: this.sqlite.prepare("ROLLBACK"),
    });
  }

  private queueStarted(): void {
    this.firstAt = performance.now();
    this.firstMark = this.hold?.mark() ?? 0;
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.queue.length === 0) return;
    if (this.holding()) return;
    this.run();
  }

  /** Waits for writes on their way (WriteHold) when the batch has room and time: flushes again on their arrival or at the deadline. */
  private holding(): boolean {
    const hold = this.hold;
    if (!hold || this.queue.length >= MAX_WRITE_BATCH) return false;
    const left = MAX_HOLD_MS - (performance.now() - this.firstAt);
    if (left <= 0 || !hold.coming(this.firstMark)) return false;
    this.flushScheduled = true;
    let woken = false;
    const wake = () => {
      if (woken) return;
      woken = true;
      clearTimeout(deadline);
      this.flush();
    };
    const deadline = setTimeout(wake, left);
    hold.onArrival(() => setImmediate(wake));
    return true;
  }

  private run(): void {
    const jobs = this.queue.splice(0, MAX_WRITE_BATCH);
    if (this.queue.length > 0) {
      this.queueStarted();
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
    if (jobs.length === 0) return;
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      this.tx.begin.run();
      try {
        this.tx.lock?.run();
      } catch (error) {
        this.tx.rollback.run();
        throw error;
      }
    } catch (error) {
      this.hooks.failed();
      for (const job of jobs) job.reject(error);
      return;
    }
    for (const job of jobs) {
      this.tx.savepoint.run();
      this.hooks.writeStarted?.();
      try {
        outcomes.push({ ok: true, value: job.work() });
        this.tx.release.run();
        this.hooks.writeEnded?.(true);
      } catch (error) {
        this.tx.rollbackTo.run();
        this.tx.release.run();
        this.hooks.writeEnded?.(false);
        outcomes.push({ ok: false, error });
      }
    }
    try {
      this.hooks.beforeCommit?.();
      this.tx.commit.run();
    } catch (error) {
      this.hooks.failed();
      try {
        this.tx.rollback.run();
      } catch {
        // already rolled back by SQLite
      }
      for (const job of jobs) job.reject(error);
      return;
    }
    this.hooks.committed();
    jobs.forEach((job, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.error);
    });
  }
}
