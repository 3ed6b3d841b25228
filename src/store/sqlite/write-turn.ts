// Whose turn it is to write the search file (search-file.ts), between the
// fold thread (fold-worker.ts) and the thread that serves requests when it
// writes that file itself (a search on the FTS5 path bringing the index
// level, search.ts): one word in shared memory. Each takes the turn before
// its transaction and gives it back after its COMMIT, so neither waits in
// SQLite's busy handler for the other. The group commit's batches write
// cairn.db and take no turn: the fold thread never writes cairn.db. (Until
// the search file, both wrote cairn.db and every batch took the turn,
// deferring while the worker wrote: docs/benchmarks.md, "Writes of ~2 KB
// notes, seventh round".) Other processes (`cairn admin`) are ordered by
// SQLite's lock, as before.

const FREE = 0;
/** Who holds the turn. */
export const WRITER = 1;
export const WORKER = 2;

export class WriteTurn {
  private readonly word: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    this.word = new Int32Array(buffer);
  }

  /** Takes the turn if it is free; false when the other thread holds it. */
  tryTake(who: number): boolean {
    return Atomics.compareExchange(this.word, 0, FREE, who) === FREE;
  }

  /** Takes the turn, blocking this thread until it is free (a worker's side; never the serving thread). */
  take(who: number): void {
    for (;;) {
      const holder = Atomics.compareExchange(this.word, 0, FREE, who);
      if (holder === FREE) return;
      Atomics.wait(this.word, 0, holder, 50);
    }
  }

  /** Gives the turn back if `who` holds it (so giving twice is harmless), and wakes the other thread if it waits. */
  give(who: number): void {
    if (Atomics.compareExchange(this.word, 0, who, FREE) === who) Atomics.notify(this.word, 0);
  }

  /** Settles once the turn is free (or soon after: the caller tries again). */
  free(): Promise<unknown> {
    const holder = Atomics.load(this.word, 0);
    if (holder === FREE) return Promise.resolve();
    const waiting = Atomics.waitAsync(this.word, 0, holder, 50);
    return waiting.async ? waiting.value : Promise.resolve();
  }
}
