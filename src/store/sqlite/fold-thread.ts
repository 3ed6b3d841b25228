// The term counts' folds (term-counts.ts, term-folds.ts) made off the thread that serves
// requests (docs/benchmarks.md, "Writes of ~2 KB notes, third round" and
// "fourth round"). A fold was ~11% of the serving thread's time under a write
// load of ~2 KB notes, inside a request batch: reading the log rows, parsing
// their notes' vectors, summing, sorting and encoding the changes, then one
// upsert. A worker thread with a connection of its own (fold-worker.ts) now
// prepares it in one read snapshot and writes it in a short transaction of
// its own, in its write turn (write-turn.ts), if the counts have not moved
// since (another process folded): the counts stay exact at every read, as
// before, because readers add the log rows not folded yet. After each fold it
// brings the FTS5 index level with the log (fts-follow.ts), in a transaction
// of its own, so the writer makes no FTS5 pass while it runs ("fifth round").
// It writes only the search file (search-file.ts), so the writer's batches,
// which lock only cairn.db, go on meanwhile ("seventh round"). If the worker
// cannot start or fails, the writer folds (and makes the FTS5 passes) on its
// own thread again.
import type { FoldReply, FoldRequest } from "./fold-worker.ts";
import type { WrittenVectors } from "./term-folds.ts";
import { workerUrl } from "./worker-url.ts";
import { WORKER, type WriteTurn } from "./write-turn.ts";

/** A fold not prepared within this many ms means the worker is stuck or gone: the writer folds on its own thread from then on. */
const PREPARE_TIMEOUT_MS = 60_000;
/**
 * How long a close waits for the worker to finish the fold it is writing.
 * A fold with its FTS5 passes can take seconds on a loaded host; a worker
 * terminated inside one would never give the write turn back.
 */
const CLOSE_TIMEOUT_MS = 20_000;

export class FoldThread {
  private worker: Worker | null = null;
  private ready = false;
  private inFlight = false;
  private deadline: ReturnType<typeof setTimeout> | null = null;
  /** The write turn shared with the worker (write-turn.ts). */
  private turn: WriteTurn | null = null;
  private closing: (() => void) | null = null;

  /** `onFolded`: a fold was made ready and written (`applied`), or found stale (another process folded); not called when none was pending. */
  constructor(private readonly onFolded: (applied: boolean) => void) {}

  /** Started, opened and not failed: folds go to it. */
  get running(): boolean {
    return this.ready && this.worker !== null && this.closing === null;
  }

  /** Starts the worker on the database file, sharing the write turn; false when it cannot. */
  start(file: string, turn: WriteTurn): boolean {
    this.turn = turn;
    try {
      const worker = new Worker(workerUrl("fold-worker"));
      worker.unref();
      worker.onmessage = (event: MessageEvent<FoldReply>) => this.answered(event.data);
      worker.onerror = () => this.stop();
      this.post(worker, { open: file, turn: turn.buffer });
      this.worker = worker;
      this.inFlight = true;
      return true;
    } catch {
      return false;
    }
  }

  private post(worker: Worker, request: FoldRequest): void {
    worker.postMessage(request);
  }

  /**
   * Asks for a fold of what is committed when the worker reads, with the
   * stored vectors of committed notes this process wrote (so the worker need
   * not read them back); nothing while one is being prepared. Whether it was asked.
   */
  request(written?: WrittenVectors): boolean {
    if (!this.running || this.inFlight) return false;
    this.inFlight = true;
    this.deadline = setTimeout(() => this.stop(), PREPARE_TIMEOUT_MS);
    this.deadline.unref?.();
    this.post(this.worker!, { prepare: true, written });
    return true;
  }

  private answered(reply: FoldReply): void {
    this.inFlight = false;
    if (this.deadline !== null) clearTimeout(this.deadline);
    this.deadline = null;
    if ("closed" in reply) return this.closing?.();
    if ("failed" in reply) return this.stop();
    if ("opened" in reply) {
      this.ready = true;
      return;
    }
    if (reply.prepared !== null && this.closing === null) this.onFolded(reply.applied);
  }

  /** The worker failed: the writer folds on its own thread from now on. */
  private stop(): void {
    this.ready = false;
    if (this.deadline !== null) clearTimeout(this.deadline);
    this.deadline = null;
    this.worker?.terminate();
    this.worker = null;
    this.releaseTurn();
  }

  /** A worker ended inside its write turn never gives it back: the writer would wait for it forever (search.ts takes it to bring FTS5 level). */
  private releaseTurn(): void {
    this.turn?.give(WORKER);
  }

  /** Closes the worker's connection, then the worker. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (worker === null) return;
    await new Promise<void>((resolve) => {
      this.closing = resolve;
      const timeout = setTimeout(resolve, CLOSE_TIMEOUT_MS);
      timeout.unref?.();
      this.post(worker, { close: true });
    });
    worker.terminate();
    this.worker = null;
    this.releaseTurn();
    this.ready = false;
    if (this.deadline !== null) clearTimeout(this.deadline);
    this.deadline = null;
  }
}
