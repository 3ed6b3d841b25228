// The in-memory postings on a thread of their own (search-worker.ts; the
// design: docs/design.md, "The search thread"). Adding a written note's
// postings, the catch-up's log reads and the postings' garbage were the part
// of a write the index cost the thread that serves requests, where it bounded
// the write rate while the second core had time to spare; searches and
// similar-notes lookups run there too, off that thread
// (docs/benchmarks.md, "Writes of ~2 KB notes, eighth round: the search thread").
//
// After each write batch's COMMIT the serving thread sends the stored vectors
// of the notes it wrote; the worker reads the log for anything else. Messages
// arrive in the order sent, and the worker reads the log up to the latest
// commit before every query, so a query finds every note committed before it
// was asked, as on the serving thread. If the worker cannot be made, the
// store keeps the postings on the serving thread (postings.ts); if it fails
// later, queries take the FTS5 index (exact, slower) and offReason says why.
import type { SimilarQuery, SimilarRanking } from "../../core/search/own-score.ts";
import type { Ranked } from "../../core/search/ranking.ts";
import type { IndexedVector, WordedVector } from "../../core/search/vector.ts";
import type { OwnRows } from "../search-follower.ts";
import type { Postings } from "./postings.ts";
import type { QueryAnswer, SearchQuery, SearchThreadReply, SearchThreadRequest } from "./search-worker.ts";
import { workerUrl } from "./worker-url.ts";
import type { ThreadScheduling } from "./background-thread.ts";
import { LookupsOnTheirWay } from "./group-commit.ts";

/** How long a close waits for the worker to close its connection (a background build stops at its next step). */
const CLOSE_TIMEOUT_MS = 5_000;

type Answer = { ranked: Ranked[] | null } | { similar: SimilarRanking | null };

export class SearchThread implements Postings {
  readonly takes = "stored" as const;
  private worker: Worker | null;
  private off: string | null = "the in-memory postings are being built";
  private nextId = 0;
  private readonly waiting = new Map<number, (answer: Answer | null) => void>();
  /** Queries asked in this turn of the event loop, sent together at its end (flush). */
  private asked: ({ id: number } & SearchQuery)[] = [];
  private whenStarted!: () => void;
  private readonly started = new Promise<void>((resolve) => (this.whenStarted = resolve));
  private whenLoaded!: () => void;
  private readonly built = new Promise<void>((resolve) => (this.whenLoaded = resolve));
  private whenClosed: (() => void) | null = null;
  /** The worker's thread id and how it is scheduled (background-thread.ts), once it has started. */
  scheduling: ThreadScheduling | null = null;

  /** Throws when no worker can be made (the caller keeps the postings on its own thread). */
  constructor(
    private readonly file: string,
    private readonly budgetBytes: number,
    private readonly loadNowPostings?: number,
    /** Told of each similar-notes lookup asked and answered: the group commit waits for their notes (group-commit.ts). */
    private readonly lookups = new LookupsOnTheirWay(),
  ) {
    // Referenced until it has started (start() waits for it: nothing else may keep the process alive yet).
    const worker = new Worker(workerUrl("search-worker"));
    worker.onmessage = (event: MessageEvent<SearchThreadReply>) => this.answered(event.data);
    worker.onerror = (event) => this.stop(`the search thread failed: ${event.message}`);
    // Ended without being closed (terminated, or its thread died): nothing would answer the queries waiting.
    worker.addEventListener("close", () => {
      if (this.worker === worker) this.stop("the search thread ended");
    });
    this.worker = worker;
  }

  get offReason(): string | null {
    return this.off;
  }

  start(): Promise<void> {
    this.post({ open: { file: this.file, budgetBytes: this.budgetBytes, loadNowPostings: this.loadNowPostings } });
    return this.started;
  }

  loaded(): Promise<void> {
    return this.built;
  }

  /**
   * Sends a batch's vectors: stored ones here (takes = "stored"), worded when
   * the analysis kept its word indexes. postMessage clones the map as it is
   * sent, so the caller may clear it after; each worded vector's array, made
   * for this message alone (wordedVector), is moved rather than copied (a copy
   * cost the sender ~1.5 µs a ~2 KB note: docs/benchmarks.md, "Eleventh
   * round"), and is left detached here.
   */
  committed(written: ReadonlyMap<number, IndexedVector>, rows?: OwnRows, upTo?: number): void {
    if (written.size === 0) return;
    const moved: ArrayBuffer[] = [];
    for (const vector of written.values()) if (typeof vector !== "string" && "words" in vector) moved.push(vector.words.buffer as ArrayBuffer);
    this.post({ committed: written as Map<number, string | WordedVector>, rows, upTo }, moved);
  }

  async search(words: string[], limit: number): Promise<Ranked[] | null> {
    const answer = await this.ask({ search: { words, limit } });
    return answer && "ranked" in answer ? answer.ranked : null;
  }

  async searchTagged(words: string[], tags: string[], limit: number): Promise<Ranked[] | null> {
    const answer = await this.ask({ tagged: { words, tags, limit } });
    return answer && "ranked" in answer ? answer.ranked : null;
  }

  async similar(query: SimilarQuery): Promise<SimilarRanking | null> {
    const answer = await this.ask({ similar: query }, true);
    return answer && "similar" in answer ? answer.similar : null;
  }

  /** The worker's answer; null (the FTS5 index answers) when no worker runs. */
  private ask(query: SearchQuery, lookup = false): Promise<Answer | null> {
    if (this.worker === null) return Promise.resolve(null);
    const id = this.nextId++;
    if (lookup) this.lookups.asked(id);
    return new Promise<Answer | null>((resolve) => {
      this.waiting.set(id, resolve);
      if (this.asked.length === 0) setImmediate(() => this.flush());
      this.asked.push({ id, ...query });
    });
  }

  /**
   * Sends the queries asked since the last flush in one message: under load
   * many requests ask in one turn, and a message costs each thread ~10 µs
   * whatever it holds. A commit posted meanwhile may reach the worker
   * first: a query then also finds notes committed after it was asked, and
   * still every note committed before.
   */
  private flush(): void {
    const queries = this.asked;
    this.asked = [];
    if (queries.length > 0) this.post({ queries });
  }

  private post(request: SearchThreadRequest, moved: ArrayBuffer[] = []): void {
    this.worker?.postMessage(request, moved);
  }

  private answered(reply: SearchThreadReply): void {
    if ("closed" in reply) return this.whenClosed?.();
    if ("failed" in reply) return this.stop(`the search thread failed: ${reply.failed}`);
    if ("started" in reply) {
      this.off = reply.off;
      this.scheduling = reply.scheduling;
      this.worker?.unref();
      return this.whenStarted();
    }
    if ("loaded" in reply) {
      this.off = reply.off;
      return this.whenLoaded();
    }
    for (const answer of reply.answers) this.answeredOne(answer);
    this.lookups.arrived();
  }

  private answeredOne(answer: QueryAnswer): void {
    this.off = answer.off;
    const waiting = this.waiting.get(answer.id);
    if (waiting === undefined) return;
    this.waiting.delete(answer.id);
    this.lookups.answered(answer.id);
    // A query the worker could not answer (its read of the database failed) takes the FTS5 index, which fails the same way if the database does.
    waiting("error" in answer ? null : answer);
  }

  /** No worker from now on: every query waiting, and every later one, takes the FTS5 index. */
  private stop(reason: string): void {
    this.off = reason;
    this.worker?.terminate();
    this.worker = null;
    for (const resolve of this.waiting.values()) resolve(null);
    this.waiting.clear();
    this.asked = [];
    this.lookups.clear();
    this.whenStarted();
    this.whenLoaded();
  }

  async close(): Promise<void> {
    const worker = this.worker;
    if (worker === null) return;
    // Referenced while it closes: the process must not end before close() resolves (nothing else may keep it alive).
    worker.ref();
    await new Promise<void>((resolve) => {
      this.whenClosed = resolve;
      const timeout = setTimeout(resolve, CLOSE_TIMEOUT_MS);
      timeout.unref?.();
      this.post({ close: true });
    });
    this.stop("closed");
  }
}
