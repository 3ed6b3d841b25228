// The state block-max MaxScore (maxscore.ts) keeps while it ranks: each
// term's postings as a lane with its bounds, the k best sums, the scratch the
// index keeps between queries, and what a ranking carries from window to window.
import type { Fields } from "./analyzer.ts";
import { BLOCK_SHIFT, type MemoryIndex, type TermPostings } from "./memory-index.ts";
import { saturate } from "./ranking.ts";

/** The `k` largest values offered (ties included), kept sorted; `floor` is the k-th (-Infinity until k were offered). */
export class Best {
  private readonly values: Float64Array;
  private count = 0;
  floor = -Infinity;

  constructor(private readonly k: number) {
    this.values = new Float64Array(k);
  }

  reset(): void {
    this.count = 0;
    this.floor = -Infinity;
  }

  offer(value: number): void {
    const values = this.values;
    const k = this.k;
    let at: number;
    if (this.count === k) {
      if (value <= values[k - 1]) return;
      at = k - 1;
    } else {
      at = this.count++;
    }
    while (at > 0 && values[at - 1] < value) {
      values[at] = values[at - 1];
      at--;
    }
    values[at] = value;
    if (this.count === k) this.floor = values[k - 1];
  }
}

/**
 * One query term's postings as ranking reads them: a cursor (the next
 * posting starts at byte `at`, is the `read`-th, and follows ordinal
 * `previous`), and the bounds of what the term adds to a note: over the whole
 * list (`bound`) and per block of 2^BLOCK_SHIFT postings.
 */
export class Lane {
  readonly data: Uint8Array;
  readonly skips: Int32Array | null;
  /** The list's half entries (TermPostings.halves). */
  readonly halves: Int32Array | null;
  readonly blockMax: Float32Array | null;
  readonly size: number;
  readonly length: number;
  readonly last: number;
  /** Complete blocks (each with a skip entry), and all blocks (the last may be partial). */
  readonly complete: number;
  readonly blocks: number;
  at = 0;
  read = 0;
  previous = -1;
  /** Per block, what the term adds at most to a note of it (filled by windowMaxima). */
  bounds: Float64Array = EMPTY;
  /** A second, undecoding walker: the block of the last note whose bound was asked. */
  shallow = 0;

  constructor(
    list: TermPostings,
    readonly weight: number,
    readonly drift: number,
    readonly bound: number,
  ) {
    this.data = list.data;
    this.skips = list.skips;
    this.halves = list.halves;
    this.blockMax = list.blockMax;
    this.size = list.size;
    this.length = list.length;
    this.last = list.last;
    this.complete = list.size >> BLOCK_SHIFT;
    this.blocks = Math.ceil(list.size / (1 << BLOCK_SHIFT));
  }

  /** What the term adds at most to a note of block `block` (computed from the stored block maximum: see `bounds` for the array). */
  blockBound(block: number): number {
    const blockMax = this.blockMax;
    return blockMax !== null && block < blockMax.length ? this.weight * saturate(blockMax[block] * this.drift) : this.bound;
  }

  /** The last ordinal of block `block`. */
  blockLast(block: number): number {
    return block < this.complete ? this.skips![2 * block] : this.last;
  }

  /** The first block, from `from` on, whose last ordinal is at least `target`; `blocks` when none is. */
  findBlock(target: number, from: number): number {
    const skips = this.skips;
    let low = from;
    let high = this.complete;
    if (skips !== null) {
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (skips[2 * middle] < target) low = middle + 1;
        else high = middle;
      }
    }
    if (low < this.complete) return low;
    return target <= this.last ? this.complete : this.blocks;
  }

  /** The bound of the block `ordinal` would be in (0 past the last posting), from the shallow walker (ordinals asked in ascending order). */
  boundAt(ordinal: number): number {
    let block = this.shallow;
    const skips = this.skips;
    while (block < this.complete && skips![2 * block] < ordinal) block++;
    if (block === this.complete && ordinal > this.last) block = this.blocks;
    this.shallow = block;
    return block < this.blocks ? this.bounds[block] : 0;
  }

  /** The largest bound of the blocks holding ordinals in [first, last] (ascending ranges, with boundAt's walker). */
  rangeBound(first: number, last: number): number {
    const skips = this.skips;
    const complete = this.complete;
    let block = this.shallow;
    while (block < complete && skips![2 * block] < first) block++;
    if (block === complete && first > this.last) block = this.blocks;
    this.shallow = block;
    if (block >= this.blocks) return 0;
    let bound = this.bounds[block];
    while (block < complete && skips![2 * block] < last) {
      block++;
      if (block < this.blocks && this.bounds[block] > bound) bound = this.bounds[block];
    }
    return bound;
  }

  /** Moves the cursor to the first posting of block `block`. */
  toBlock(block: number): void {
    if (block === 0) {
      this.at = 0;
      this.previous = -1;
    } else {
      this.at = this.skips![2 * block - 1];
      this.previous = this.skips![2 * block - 2];
    }
    this.read = block << BLOCK_SHIFT;
  }

  /** Moves the cursor to the start of the block holding the first posting at or past `target`, unless it is already in that block before `target`; false when no posting is at or past it. */
  position(target: number): boolean {
    const current = this.read >> BLOCK_SHIFT;
    const block = this.findBlock(target, this.previous < target ? Math.min(current, this.complete) : 0);
    if (block >= this.blocks) return false;
    if (block !== current || this.previous >= target) this.toBlock(block);
    return true;
  }
}

const EMPTY = new Float64Array(0);

/** Ranking's scratch, kept by the index between queries (MemoryIndex.rankingScratch). */
export interface Scratch {
  /** Partial scores of the window's notes by ordinal - window start (all zero between windows). */
  scores: Float64Array;
  touched: Int32Array;
  /** The window's candidates (ascending ordinals), their partial sums, and what the terms not yet added give them at most. */
  candidates: Int32Array;
  partial: Float64Array;
  remaining: Float64Array;
  /** The lanes' block bounds, one after the other. */
  bounds: Float64Array;
  /** One posting's field counts (readFieldCounts). */
  fields: Int32Array;
}

export function scratchOf(index: MemoryIndex, window: number, blocks: number): Scratch {
  let scratch = index.rankingScratch as Scratch | null;
  if (!scratch || scratch.scores.length < window) {
    scratch = {
      scores: new Float64Array(window),
      touched: new Int32Array(window),
      candidates: new Int32Array(window),
      partial: new Float64Array(window),
      remaining: new Float64Array(window),
      bounds: scratch?.bounds ?? EMPTY,
      fields: new Int32Array(3),
    };
  }
  if (scratch.bounds.length < blocks) scratch.bounds = new Float64Array(Math.max(blocks, 2 * scratch.bounds.length));
  index.rankingScratch = scratch;
  return scratch;
}

export interface Ranking {
  index: MemoryIndex;
  /** Ordinals per window, as a power of two. */
  windowShift: number;
  lanes: Lane[];
  averages: Fields<number>;
  accept: ((ordinal: number) => boolean) | undefined;
  windows: number;
  /** Per term (windows apart), its bound per window. */
  windowBounds: Float64Array;
  /** A lower bound of the final k-th score. */
  threshold: number;
  /** The k-th best partial sum of the notes scored whole. */
  best: Best;
  /** Scratch: the k best partial sums of a window's notes. */
  partials: Best;
  /** Notes scored whole whose sum may reach the final k-th, with their sums. */
  finalOrdinals: number[];
  finalScores: number[];
  /** Scratch: the terms of a window by bound. */
  order: Int32Array;
  scratch: Scratch;
}
