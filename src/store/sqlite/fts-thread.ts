// The FTS5 follower's worker thread (fts-follow.ts, fold-worker.ts): asked for
// a pass once REQUEST_ROWS log rows were committed since the last, or
// REQUEST_DELAY_MS after the first of fewer, one pass at a time. Not after
// every batch: a message to the worker and its pass cost each batch more than
// the rows did, and searches read nothing stale meanwhile (they bring the
// index level themselves). If it cannot start, fails or gets stuck, it
// stops, and the writer follows the log on its own thread after each batch
// (SqliteSearch.committed), as searches on the database path always do
// before they read (SqliteSearch.ftsCurrent).
import type { FtsReply, FtsRequest } from "./fold-worker.ts";
import { workerSpecifier } from "./fold-thread.ts";
import { WORKER, type WriteTurn } from "./write-turn.ts";

/** A pass not made within this many ms means the worker is stuck or gone. */
const PASS_TIMEOUT_MS = 60_000;
/** Log rows committed that make a pass be asked for at once. */
export const REQUEST_ROWS = 32;
/** ... or this many ms after the first of fewer. */
const REQUEST_DELAY_MS = 10;

export class FtsThread {
  private worker: Worker | null = null;
  private ready = false;
  private inFlight = false;
  /** Log rows committed and not asked for (as far as this thread knows). */
  private unasked = REQUEST_ROWS;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private deadline: ReturnType<typeof setTimeout> | null = null;
  private closing: (() => void) | null = null;
  private turn: WriteTurn | null = null;
  /** Passes made and log rows they made (for tests and benches). */
  passes = 0;
  rows = 0;

  /** Started, opened and not failed: passes go to it. */
  get running(): boolean {
    return this.ready && this.worker !== null && this.closing === null;
  }

  /** Starts the worker on the database file, sharing the write turn; false when it cannot. */
  start(file: string, turn: WriteTurn): boolean {
    try {
      const worker = new Worker(workerSpecifier());
      worker.unref();
      worker.onmessage = (event: MessageEvent<FtsReply>) => this.answered(event.data);
      worker.onerror = () => this.stop();
      this.post(worker, { openFts: file, turn: turn.buffer });
      this.worker = worker;
      this.turn = turn;
      this.inFlight = true;
      return true;
    } catch {
      return false;
    }
  }

  private post(worker: Worker, request: FtsRequest): void {
    worker.postMessage(request);
  }

  /** A write batch that logged `rows` index changes committed. */
  committed(rows: number): void {
    this.unasked += rows;
    this.maybeRequest();
  }

  private maybeRequest(): void {
    if (!this.running || this.inFlight || this.unasked === 0) return;
    if (this.unasked >= REQUEST_ROWS) return this.request();
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.running && !this.inFlight && this.unasked > 0) this.request();
    }, REQUEST_DELAY_MS);
    this.timer.unref?.();
  }

  /** Asks for a pass over what is committed when the worker reads. */
  private request(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.unasked = 0;
    this.inFlight = true;
    this.deadline = setTimeout(() => this.stop(), PASS_TIMEOUT_MS);
    this.deadline.unref?.();
    this.post(this.worker!, { follow: true });
  }

  private answered(reply: FtsReply): void {
    this.inFlight = false;
    if (this.deadline !== null) clearTimeout(this.deadline);
    this.deadline = null;
    if ("closed" in reply) return this.closing?.();
    if ("failed" in reply) return this.stop();
    if ("opened" in reply) this.ready = true;
    else {
      this.passes++;
      this.rows += reply.followed;
      this.unasked = Math.max(this.unasked, reply.lag);
    }
    this.maybeRequest();
  }

  /** The worker failed: the writer follows the log on its own thread from now on. */
  private stop(): void {
    this.ready = false;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.inFlight = false;
    if (this.deadline !== null) clearTimeout(this.deadline);
    this.deadline = null;
    this.terminate();
  }

  /** Ends the worker; a turn it held is given back, or the writer would wait for it forever. */
  private terminate(): void {
    this.worker?.terminate();
    this.worker = null;
    this.turn?.give(WORKER);
  }

  /** Closes the worker's connection (after its pass in flight, if any), then the worker. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (worker === null) return;
    await new Promise<void>((resolve) => {
      this.closing = resolve;
      const timeout = setTimeout(resolve, 2000);
      timeout.unref?.();
      this.post(worker, { close: true });
    });
    this.terminate();
    this.ready = false;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.deadline !== null) clearTimeout(this.deadline);
    this.deadline = null;
  }
}
