// In-memory postings of the search index, engine-neutral (docs/design.md,
// "Search"): for each index term, the notes holding it in insertion order with
// the term's count in each field, plus each note's field lengths and the
// corpus sums. Built from the stored term vectors (vector.ts) and kept level
// with the database by the engine (which feeds it every add and remove in
// commit order); ranked by maxscore.ts. One instance per store: nothing here
// is shared between connections or processes.
import type { Fields } from "./analyzer.ts";
import { weightedFrequencyOf } from "./ranking.ts";
import { forEachTerm, readLengths } from "./vector.ts";

/**
 * A posting's counts packed in one int32: body in bits 0-15, tags in 16-23,
 * title in 24-30 (never negative); ESCAPE when one does not fit, the exact
 * counts then in the list's overflow map.
 */
const ESCAPE = -1;
const TITLE_MAX = 127;
const TAGS_MAX = 255;
const BODY_MAX = 0xffff;

/**
 * A cached largest weighted frequency stays a bound while the field averages
 * grow by at most this factor (it is multiplied by the growth); past it, the
 * largest is computed again over the postings.
 */
const BOUND_DRIFT = 1.05;

/** Postings per block: each block of a longer list keeps its largest weighted frequency (block-max bounds). */
export const BLOCK_SHIFT = 6;
const BLOCK = 1 << BLOCK_SHIFT;

/** Bytes per posting: ordinal (4), packed counts (4), a share of its block's bound. */
export const POSTING_BYTES = 8 + 8 / BLOCK;
/**
 * What a term costs besides its postings (map entry and key, object, two
 * typed arrays), and a note (key, lengths, live flag, key map entry): measured
 * in Bun (docs/reliability.md), rounded up.
 */
export const TERM_BYTES = 400;
const NOTE_BYTES = 100;

/** The notes holding one term, by ordinal (ascending: ordinals are handed out in commit order). */
export class TermPostings {
  ordinals: Int32Array;
  /** Each posting's counts (see ESCAPE). */
  counts: Int32Array;
  size = 0;
  /** Live notes holding the term (postings of removed notes stay until the next compaction). */
  notes = 0;
  /** Exact counts of postings whose counts do not fit the arrays, by ordinal. */
  overflow: Map<number, Fields<number>> | null = null;
  /** The largest weighted frequency among the postings under `boundAverages` (a bound: removed notes may have held it). */
  maxWeighted = 0;
  /** The same per block of BLOCK postings; null while the list fits one block (maxWeighted is its bound). */
  blockMax: Float64Array | null = null;
  /** The field averages the bounds were computed under; null: not computed yet. */
  boundAverages: Fields<number> | null = null;

  constructor(capacity: number) {
    this.ordinals = new Int32Array(capacity);
    this.counts = new Int32Array(capacity);
    if (capacity > BLOCK) this.blockMax = new Float64Array(Math.ceil(capacity / BLOCK));
  }

  get capacity(): number {
    return this.ordinals.length;
  }

  /** Grows the arrays to hold at least `capacity` postings; returns the bytes added. */
  reserve(capacity: number): number {
    if (capacity <= this.capacity) return 0;
    const added = capacity - this.capacity;
    const ordinals = new Int32Array(capacity);
    ordinals.set(this.ordinals.subarray(0, this.size));
    const counts = new Int32Array(capacity);
    counts.set(this.counts.subarray(0, this.size));
    this.ordinals = ordinals;
    this.counts = counts;
    if (capacity > BLOCK) {
      const blockMax = new Float64Array(Math.ceil(capacity / BLOCK));
      if (this.blockMax) blockMax.set(this.blockMax);
      else if (this.size > 0) blockMax[0] = this.maxWeighted;
      this.blockMax = blockMax;
    }
    return added * POSTING_BYTES;
  }

  /** Raises the bounds (computed under `boundAverages`) for posting `at`'s weighted frequency. */
  raiseBound(at: number, weighted: number): void {
    if (weighted > this.maxWeighted) this.maxWeighted = weighted;
    if (this.blockMax) {
      const block = at >> BLOCK_SHIFT;
      if (weighted > this.blockMax[block]) this.blockMax[block] = weighted;
    }
  }

  /** The bound of the block holding posting `at` (under `boundAverages`). */
  blockBound(at: number): number {
    return this.blockMax ? this.blockMax[at >> BLOCK_SHIFT] : this.maxWeighted;
  }

  push(ordinal: number, title: number, tags: number, body: number): void {
    const at = this.size++;
    this.ordinals[at] = ordinal;
    if (title <= TITLE_MAX && tags <= TAGS_MAX && body <= BODY_MAX) {
      this.counts[at] = (title << 24) | (tags << 16) | body;
    } else {
      this.counts[at] = ESCAPE;
      (this.overflow ??= new Map()).set(ordinal, [title, tags, body]);
    }
  }

  /** The counts (title, tags, body) of posting `at`, written into `out`. */
  countsAt(at: number, out: Fields<number>): Fields<number> {
    const packed = this.counts[at];
    if (packed === ESCAPE) {
      const exact = this.overflow!.get(this.ordinals[at])!;
      out[0] = exact[0];
      out[1] = exact[1];
      out[2] = exact[2];
    } else {
      out[0] = packed >>> 24;
      out[1] = (packed >>> 16) & 0xff;
      out[2] = packed & 0xffff;
    }
    return out;
  }
}

/** The postings of every term, each note's field lengths, and the corpus sizes. */
export class MemoryIndex {
  private readonly terms = new Map<string, TermPostings>();
  /** Per ordinal: the note's key, its three field lengths, whether it is live. */
  private keys = new Float64Array(64);
  private fieldLengths = new Uint32Array(3 * 64);
  private live = new Uint8Array(64);
  private readonly ordinalOfKey = new Map<number, number>();
  private nextOrdinal = 0;
  private removed = 0;
  private postingBytes = 0;
  /** Live notes. */
  notes = 0;
  /** Terms in each field, summed over live notes. */
  readonly lengthSums: Fields<number> = [0, 0, 0];

  /** What an index of this size holds, roughly (see `bytes`): to decide before building it. */
  static estimateBytes(postings: number, terms: number, notes: number): number {
    return postings * POSTING_BYTES + terms * TERM_BYTES + notes * (8 + 12 + 1 + NOTE_BYTES);
  }

  /** Sizes a term's postings for `count` notes ahead of a bulk load (no regrowth on the way). */
  reserve(term: string, count: number): void {
    let postings = this.terms.get(term);
    if (!postings) this.newTerm(term, (postings = new TermPostings(0)));
    this.postingBytes += postings.reserve(count);
  }

  has(key: number): boolean {
    return this.ordinalOfKey.has(key);
  }

  /** Adds a note from its stored vector; false (and nothing changes) when the key is already held. */
  add(key: number, vector: string): boolean {
    if (this.ordinalOfKey.has(key)) return false;
    const ordinal = this.newOrdinal(key);
    const lengths = readLengths(vector);
    this.fieldLengths.set(lengths, 3 * ordinal);
    for (let f = 0; f < 3; f++) this.lengthSums[f] += lengths[f];
    this.notes++;
    forEachTerm(vector, (term, title, tags, body) => {
      let postings = this.terms.get(term);
      if (!postings) this.newTerm(term, (postings = new TermPostings(0)));
      if (postings.size === postings.capacity) this.postingBytes += postings.reserve(Math.max(4, Math.ceil(postings.capacity * 1.5)));
      postings.push(ordinal, title, tags, body);
      postings.notes++;
      if (postings.boundAverages) {
        postings.raiseBound(postings.size - 1, weightedFrequencyOf(title, tags, body, lengths[0], lengths[1], lengths[2], postings.boundAverages));
      }
    });
    return true;
  }

  /**
   * Removes a note; `vector` must be the one it was added with (the terms
   * whose counts drop). Its postings stay, skipped as dead, until compact().
   */
  remove(key: number, vector: string): boolean {
    const ordinal = this.ordinalOfKey.get(key);
    if (ordinal === undefined) return false;
    this.ordinalOfKey.delete(key);
    this.live[ordinal] = 0;
    this.removed++;
    this.notes--;
    for (let f = 0; f < 3; f++) this.lengthSums[f] -= this.fieldLengths[3 * ordinal + f];
    forEachTerm(vector, (term) => {
      const postings = this.terms.get(term);
      if (postings) postings.notes--;
    });
    if (this.removed > 1024 && this.removed > this.nextOrdinal / 4) this.compact();
    return true;
  }

  postings(term: string): TermPostings | undefined {
    const postings = this.terms.get(term);
    return postings && postings.notes > 0 ? postings : undefined;
  }

  /** How many live notes hold `term`. */
  notesWith(term: string): number {
    return this.terms.get(term)?.notes ?? 0;
  }

  /** Every term in code-unit order, but for `newTerms`: those added since, merged in when a lookup finds them many. */
  private sortedTerms: string[] = [];
  private newTerms: string[] = [];

  private newTerm(term: string, postings: TermPostings): void {
    this.terms.set(term, postings);
    this.newTerms.push(term);
  }

  /** Terms in [from, to) that live notes hold, with how many (typo correction). */
  vocabulary(from: string, to: string): { term: string; doc: number }[] {
    if (this.newTerms.length > 1024) {
      this.sortedTerms = mergeSorted(this.sortedTerms, this.newTerms.sort());
      this.newTerms = [];
    }
    const found: { term: string; doc: number }[] = [];
    const take = (term: string) => {
      const notes = this.terms.get(term)?.notes ?? 0;
      if (notes > 0) found.push({ term, doc: notes });
    };
    const sorted = this.sortedTerms;
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (sorted[middle] < from) low = middle + 1;
      else high = middle;
    }
    for (let at = low; at < sorted.length && sorted[at] < to; at++) take(sorted[at]);
    for (const term of this.newTerms) if (term >= from && term < to) take(term);
    return found;
  }

  keyOf(ordinal: number): number {
    return this.keys[ordinal];
  }

  isLive(ordinal: number): boolean {
    return this.live[ordinal] === 1;
  }

  /** Field lengths of every ordinal, three per ordinal (title, tags, body). */
  get lengths(): Uint32Array {
    return this.fieldLengths;
  }

  /** Approximate heap bytes held (postings arrays, per-term and per-note overheads). */
  get bytes(): number {
    return this.postingBytes + this.terms.size * TERM_BYTES + this.keys.length * (8 + 12 + 1) + this.ordinalOfKey.size * NOTE_BYTES;
  }

  /**
   * Makes the term's bounds (`maxWeighted`, `blockMax`: the largest weighted
   * frequency of its notes, overall and per block) valid under these
   * averages once multiplied by the factor returned. They are kept with the
   * averages they were computed under; the factor is how much any field
   * average has grown since (a field's normalised frequency grows at most in
   * proportion to its average); past BOUND_DRIFT they are computed again.
   */
  bounds(postings: TermPostings, averages: Fields<number>): number {
    const cachedUnder = postings.boundAverages;
    if (cachedUnder) {
      let drift = 1;
      for (let f = 0; f < 3; f++) drift = Math.max(drift, averages[f] / cachedUnder[f]);
      if (drift <= BOUND_DRIFT) return drift;
    }
    const counts: Fields<number> = [0, 0, 0];
    const lengths = this.fieldLengths;
    postings.maxWeighted = 0;
    postings.blockMax?.fill(0);
    postings.boundAverages = [averages[0], averages[1], averages[2]];
    for (let at = 0; at < postings.size; at++) {
      const ordinal = postings.ordinals[at];
      if (this.live[ordinal] === 0) continue;
      postings.countsAt(at, counts);
      const o = 3 * ordinal;
      postings.raiseBound(at, weightedFrequencyOf(counts[0], counts[1], counts[2], lengths[o], lengths[o + 1], lengths[o + 2], averages));
    }
    return 1;
  }

  private newOrdinal(key: number): number {
    const ordinal = this.nextOrdinal++;
    if (ordinal === this.keys.length) this.growNotes(Math.ceil(this.keys.length * 1.5));
    this.keys[ordinal] = key;
    this.live[ordinal] = 1;
    this.ordinalOfKey.set(key, ordinal);
    return ordinal;
  }

  private growNotes(capacity: number): void {
    const keys = new Float64Array(capacity);
    keys.set(this.keys.subarray(0, this.nextOrdinal));
    const lengths = new Uint32Array(3 * capacity);
    lengths.set(this.fieldLengths.subarray(0, 3 * this.nextOrdinal));
    const live = new Uint8Array(capacity);
    live.set(this.live.subarray(0, this.nextOrdinal));
    this.keys = keys;
    this.fieldLengths = lengths;
    this.live = live;
  }

  /** Drops dead postings and renumbers live notes densely (order kept); terms no note holds go. */
  compact(): void {
    this.compactPostings();
    this.sortedTerms = [...this.terms.keys()].sort();
    this.newTerms = [];
  }

  private compactPostings(): void {
    const renumbered = new Int32Array(this.nextOrdinal).fill(-1);
    let next = 0;
    for (let ordinal = 0; ordinal < this.nextOrdinal; ordinal++) {
      if (this.live[ordinal] === 0) continue;
      renumbered[ordinal] = next;
      this.keys[next] = this.keys[ordinal];
      this.fieldLengths.copyWithin(3 * next, 3 * ordinal, 3 * ordinal + 3);
      this.live[next] = 1;
      this.ordinalOfKey.set(this.keys[next], next);
      next++;
    }
    this.live.fill(0, next, this.nextOrdinal);
    this.nextOrdinal = next;
    this.removed = 0;
    this.postingBytes = 0;
    for (const [term, postings] of this.terms) {
      if (postings.notes <= 0) {
        this.terms.delete(term);
        continue;
      }
      const fresh = new TermPostings(postings.notes);
      const counts: Fields<number> = [0, 0, 0];
      for (let at = 0; at < postings.size; at++) {
        const ordinal = renumbered[postings.ordinals[at]];
        if (ordinal < 0) continue;
        postings.countsAt(at, counts);
        fresh.push(ordinal, counts[0], counts[1], counts[2]);
      }
      fresh.notes = postings.notes;
      // Bounds are computed again on the next query that needs them (blocks moved).
      this.terms.set(term, fresh);
      this.postingBytes += fresh.capacity * POSTING_BYTES;
    }
  }
}

/** Two sorted lists as one. */
function mergeSorted(a: string[], b: string[]): string[] {
  const out = new Array<string>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = a[i] <= b[j] ? a[i++] : b[j++];
  while (i < a.length) out[k++] = a[i++];
  while (j < b.length) out[k++] = b[j++];
  return out;
}
