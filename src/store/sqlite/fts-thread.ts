// The FTS5 follower's worker thread (fts-follow.ts, fold-worker.ts): asked for
// a pass after each write batch's COMMIT, one pass at a time, and again while
// the log is ahead of the index. If it cannot start, fails or gets stuck, it
// stops, and the writer follows the log on its own thread after each batch
// (SqliteSearch.committed), as searches on the database path always do
// before they read (SqliteSearch.ftsCurrent).
import type { FtsReply, FtsRequest } from "./fold-worker.ts";
import { workerSpecifier } from "./fold-thread.ts";
import { WORKER, type WriteTurn } from "./write-turn.ts";

/** A pass not made within this many ms means the worker is stuck or gone. */
const PASS_TIMEOUT_MS = 60_000;

export class FtsThread {
  private worker: Worker | null = null;
  private ready = false;
  private inFlight = false;
  /** A batch committed while a pass was in flight: another pass follows it. */
  private again = false;
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

  /** Asks for a pass over what is committed when the worker reads. */
  request(): void {
    if (!this.running) return;
    if (this.inFlight) {
      this.again = true;
      return;
    }
    this.again = false;
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
      if (reply.lag === 0 && !this.again) return;
    }
    this.request();
  }

  /** The worker failed: the writer follows the log on its own thread from now on. */
  private stop(): void {
    this.ready = false;
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
    if (this.deadline !== null) clearTimeout(this.deadline);
    this.deadline = null;
  }
}
