// Postings added to the in-memory index but not appended to their terms'
// lists yet (memory-index.ts; docs/search-index.md, "Adding a note"): a
// write's postings are recorded here by term id, chained per term in the
// order added (when first needed: adding stays a few sequential writes), and
// appended term by term: a term held by many of the staged
// notes has its list touched once for all of them (appending is memory-latency
// bound: each touch of a list is a few cache misses). A read appends only the
// terms it reads (`take`), so the stage can hold many notes without a search
// paying for all of them.
import { grownInt32 } from "./typed-arrays.ts";

export class PostingStage {
  /** Postings staged (including those taken since the last `clear`). */
  size = 0;
  /** Notes staged since the last `clear`. */
  notes = 0;
  /** Per staged posting: its term id, ordinal, counts (title, tags, body: three each) and, once chained, the next staged posting of its term (-1: none). */
  private term = new Int32Array(64);
  ordinal = new Int32Array(64);
  counts = new Int32Array(3 * 64);
  next = new Int32Array(64);
  /** Term ids in the order their first posting was staged (a term taken and staged again is listed again). */
  private touched = new Int32Array(64);
  private touchedCount = 0;
  /** Staged postings chained so far (the rest are chained by the next take or drain). */
  private chained = 0;
  /** Per term id: its first and last staged posting not taken yet (-1: none). */
  private first = new Int32Array(64).fill(-1);
  private last = new Int32Array(64);

  /** Stages a posting of term `id` (an id `addTerm` made room for). */
  add(id: number, ordinal: number, title: number, tags: number, body: number): void {
    const at = this.size++;
    if (at === this.ordinal.length) this.grow();
    this.term[at] = id;
    this.ordinal[at] = ordinal;
    this.counts[3 * at] = title;
    this.counts[3 * at + 1] = tags;
    this.counts[3 * at + 2] = body;
  }

  /** Chains the postings staged since the last chaining to their terms' (one tight pass: its random reads overlap). */
  private chain(): void {
    const { term, next, first, last } = this;
    for (let at = this.chained; at < this.size; at++) {
      const id = term[at];
      next[at] = -1;
      if (first[id] < 0) {
        first[id] = at;
        this.touched[this.touchedCount++] = id;
      } else next[last[id]] = at;
      last[id] = at;
    }
    this.chained = this.size;
  }

  /** Makes room for term ids up to `id` (a term new to the index). */
  addTerm(id: number): void {
    if (id < this.first.length) return;
    const size = Math.max(2 * this.first.length, id + 1);
    const first = new Int32Array(size).fill(-1);
    first.set(this.first);
    const last = new Int32Array(size);
    last.set(this.last);
    this.first = first;
    this.last = last;
  }

  /**
   * The first staged posting of term `id` not taken yet (follow `next` for
   * the rest, in the order staged), or -1; they count as taken from now on.
   */
  take(id: number): number {
    if (id >= this.first.length) return -1;
    if (this.chained < this.size) this.chain();
    const at = this.first[id];
    this.first[id] = -1;
    return at;
  }

  /** The term ids with staged postings (some maybe taken), `touchedIds[0 .. touchedTerms)`, once chained. */
  touchedIds(): Int32Array {
    this.chain();
    return this.touched;
  }

  get touchedTerms(): number {
    return this.touchedCount;
  }

  /** Calls `each` with every term id that has staged postings not taken, then empties the stage. */
  drain(each: (id: number) => void): void {
    this.chain();
    for (let i = 0; i < this.touchedCount; i++) {
      const id = this.touched[i];
      if (this.first[id] >= 0) each(id);
    }
    this.clear();
  }

  /** Forgets every staged posting (all taken). */
  private clear(): void {
    this.size = 0;
    this.notes = 0;
    this.touchedCount = 0;
    this.chained = 0;
  }

  /** Bytes the arrays hold. */
  get bytes(): number {
    return this.ordinal.length * 28 + this.first.length * 8;
  }

  private grow(): void {
    const capacity = 2 * this.ordinal.length;
    this.term = grownInt32(this.term, capacity);
    this.touched = grownInt32(this.touched, capacity);
    this.ordinal = grownInt32(this.ordinal, capacity);
    this.counts = grownInt32(this.counts, 3 * capacity);
    this.next = grownInt32(this.next, capacity);
  }
}
