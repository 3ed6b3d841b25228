// WAL checkpoints off the request path (docs/benchmarks.md, "Writes of ~2 KB
// notes, second round"). In WAL mode every commit appends pages to the -wal
// file; a checkpoint copies them back into the database file, syncing the WAL
// before and the database after. SQLite runs it inside the COMMIT that takes
// the WAL past `wal_autocheckpoint` pages (1,000 by default): on the single
// thread that serves every request, measured at ~6 ms of CPU and 12-40 ms of
// wall time (the syncs) every ~140 notes of ~2 KB.
//
// Here a worker thread with a connection of its own runs PASSIVE checkpoints
// (they never take the write lock, so the writer goes on meanwhile) after
// commits, one at a time. What is left to the writer's own autocheckpoint
// (raised to TAIL_PAGES while the worker runs) is the tail of frames written
// during the worker's last pass, and with it the WAL's restart from its
// start (SQLite restarts the WAL only at a write that begins with every frame
// copied back). Durability is unchanged: a COMMIT is what makes a write
// durable, on the same connection and with the same synchronous setting as
// before; the checkpoint syncs as SQLite's own does. If the worker cannot
// start or fails, the writer's autocheckpoint goes back to SQLite's default.
import type { Database } from "bun:sqlite";

/** Batches committed before the worker starts: stores that write little (tests, tools) never start one. */
export const START_AFTER_BATCHES = 64;
/** The writer's own autocheckpoint while the worker runs: the tail, and the backstop if the worker lags. */
export const TAIL_PAGES = 4000;
/** SQLite's default, restored when no worker runs. */
const DEFAULT_PAGES = 1000;
/** At most one pass per this many ms (each pass syncs the WAL and the database once). */
const MIN_INTERVAL_MS = 100;

// The worker's code, inline so that the compiled binary needs no second entry point.
const WORKER_SOURCE = `
import { Database } from "bun:sqlite";
let db = null;
onmessage = ({ data }) => {
  try {
    if (data.open) {
      db = new Database(data.open);
      db.exec("PRAGMA busy_timeout = 0");
      db.exec("PRAGMA synchronous = " + data.synchronous);
      postMessage({ opened: true });
    } else if (data.close) {
      db?.close();
      db = null;
      postMessage({ closed: true });
    } else {
      const row = db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
      postMessage({ done: true, log: row.log, checkpointed: row.checkpointed });
    }
  } catch (error) {
    postMessage({ failed: String(error?.message ?? error) });
  }
};`;

type Reply = { opened: true } | { closed: true } | { done: true; log: number; checkpointed: number } | { failed: string };

export class WalCheckpointer {
  private worker: Worker | null = null;
  private batches = 0;
  /** A pass was asked for and has not answered. */
  private inFlight = false;
  /** A commit happened since the last pass was asked for. */
  private dirty = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastPass = 0;
  private off = false;
  /** The worker's source, revoked once it has loaded. */
  private url: string | null = null;
  private closing: ((value: void) => void) | null = null;
  /** Passes run, for tests and benches. */
  passes = 0;

  constructor(
    private readonly sqlite: Database,
    private readonly synchronous: "NORMAL" | "FULL",
  ) {}

  /** A worker thread is checkpointing (for tests). */
  get running(): boolean {
    return this.worker !== null;
  }

  /** After each batch's COMMIT. */
  committed(): void {
    if (this.off) return;
    if (this.worker === null) {
      if (++this.batches >= START_AFTER_BATCHES) this.start();
      return;
    }
    this.dirty = true;
    this.request();
  }

  private start(): void {
    const file = this.sqlite.filename;
    if (!file || file === ":memory:") {
      this.off = true;
      return;
    }
    try {
      const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" }));
      const worker = new Worker(url);
      this.url = url;
      worker.unref();
      worker.onmessage = (event: MessageEvent<Reply>) => this.answered(event.data);
      worker.onerror = () => this.stop();
      worker.postMessage({ open: file, synchronous: this.synchronous });
      this.worker = worker;
      this.inFlight = true;
    } catch {
      this.off = true;
    }
  }

  private answered(reply: Reply): void {
    this.inFlight = false;
    if ("failed" in reply) return this.stop();
    if ("closed" in reply) return this.closing?.();
    if ("opened" in reply) {
      if (this.url !== null) URL.revokeObjectURL(this.url);
      this.url = null;
      if (this.closing) return;
      // From now on the worker copies the pages back; the writer keeps the tail.
      try {
        this.sqlite.exec(`PRAGMA wal_autocheckpoint = ${TAIL_PAGES}`);
      } catch {
        return this.stop();
      }
    } else {
      this.passes++;
    }
    if (this.dirty) this.request();
  }

  private request(): void {
    if (this.inFlight || this.timer !== null || this.worker === null || this.closing) return;
    const wait = this.lastPass + MIN_INTERVAL_MS - performance.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.request();
      }, wait);
      this.timer.unref?.();
      return;
    }
    this.dirty = false;
    this.inFlight = true;
    this.lastPass = performance.now();
    this.worker.postMessage({});
  }

  /** The worker failed: the writer checkpoints alone again, at SQLite's default. */
  private stop(): void {
    this.off = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.worker?.terminate();
    this.worker = null;
    try {
      this.sqlite.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_PAGES}`);
    } catch {
      // the connection is closed
    }
  }

  /** Closes the worker's connection (before the writer's, so that the writer's close is the last and checkpoints). */
  async close(): Promise<void> {
    const worker = this.worker;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.off = true;
    if (worker === null) return;
    await new Promise<void>((resolve) => {
      this.closing = resolve;
      const timeout = setTimeout(resolve, 2000);
      timeout.unref?.();
      worker.postMessage({ close: true });
    });
    worker.terminate();
    this.worker = null;
  }
}
