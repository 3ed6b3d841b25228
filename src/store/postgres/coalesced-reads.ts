// Point reads that many concurrent requests make (a key's candidates by
// prefix, a note by id) coalesced: every read asked for during one turn of the
// event loop goes to PostgreSQL as one statement over all their keys
// (`= ANY($1)`), sent on the next turn. Under load a keyed GET otherwise paid
// two statements of its own, and the per-statement cost (the replica's
// client, PostgreSQL's protocol and executor start) was most of its CPU on
// both sides (docs/benchmarks.md, "Keyed GET on PostgreSQL").
//
// Nothing is remembered here: each read is sent after the request that asked
// for it arrived, so it sees every change committed before that (a revoke
// holds on the next request at every replica, as before). A failed statement fails
// every read of its batch; callers see the same error they would alone.

/** One text[] parameter, each element quoted (PostgreSQL's array literal syntax). */
export const textArray = (values: Iterable<string>) => `{${[...values].map((v) => `"${v.replace(/(["\\])/g, "\\$1")}"`).join(",")}}`;

interface Waiter<R> {
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Statements of one kind in flight at most, unless a reader says otherwise;
 * reads asked for meanwhile wait and go out together in the next. One, not
 * two, when a keyed GET read its key and then its note's row: batches twice as
 * large cost PostgreSQL and the replica less per read (docs/benchmarks.md,
 * "Issue 20, third round"). The key reads, now a keyed GET's only statement,
 * take two (note-log.ts).
 */
export const READS_IN_FLIGHT = 1;

export class CoalescedReads<Row, R> {
  private pending = new Map<string, Waiter<R>[]>();
  /** Callers of sent(): settled by the next fetch, whatever keys it carries (none, maybe). */
  private pulses: Waiter<void>[] = [];
  private scheduled = false;
  private inFlight = 0;

  /**
   * `fetch` reads every key it is given in one statement; `answer` makes each
   * waiter's own value from its key's row (undefined when there was none), so
   * no two requests share an object.
   */
  constructor(
    private readonly fetch: (keys: string[]) => Promise<Map<string, Row>>,
    private readonly answer: (row: Row | undefined) => R,
    private readonly maxInFlight = READS_IN_FLIGHT,
  ) {}

  read(key: string): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const waiters = this.pending.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
      this.schedule();
    });
  }

  /**
   * Settles once a fetch sent after this call has answered (with the keys
   * asked for meanwhile, or none): for a fetch that does more than read its
   * keys (note-log.ts reads the note log with them).
   */
  sent(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pulses.push({ resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || (this.pending.size === 0 && this.pulses.length === 0)) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    const batch = this.pending;
    const pulses = this.pulses;
    this.pending = new Map();
    this.pulses = [];
    this.scheduled = false;
    this.inFlight++;
    const done = () => {
      this.inFlight--;
      this.schedule();
    };
    this.fetch([...batch.keys()]).then(
      (found) => {
        done();
        for (const pulse of pulses) pulse.resolve();
        for (const [key, waiters] of batch) {
          const row = found.get(key);
          for (const waiter of waiters) {
            try {
              waiter.resolve(this.answer(row));
            } catch (error) {
              waiter.reject(error);
            }
          }
        }
      },
      (error) => {
        done();
        for (const pulse of pulses) pulse.reject(error);
        for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
      },
    );
  }
}
