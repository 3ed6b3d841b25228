// One term's postings in memory (docs/search-index.md, "In-memory postings"):
// the notes holding the term in ordinal order, compressed (ordinal gaps and
// counts as variable-length bytes, a skip entry every BLOCK postings, a bound
// per block), and the cursor that reads them. The index of every term is
// memory-index.ts; ranking over the postings is maxscore.ts.
import type { Fields } from "./analyzer.ts";

/** Postings per block: each complete block has a skip entry (its last ordinal, where the next block starts). */
export const BLOCK_SHIFT = 7;
export const BLOCK = 1 << BLOCK_SHIFT;
/** Postings into a block where its half entry points (TermPostings.halves). */
export const HALF = BLOCK >> 1;

/**
 * The notes holding one term, by ordinal (ascending: ordinals are handed out
 * in commit order). Each posting is written as
 *   varint(gap · 4 + c)                      c < 3: the term is in the body only, c + 1 times
 *   varint(gap · 4 + 3) varint(body · 2 + f) [varint(title) varint(tags) when f = 1]
 * where gap is the ordinal minus the previous posting's (the first: ordinal + 1).
 */
export class TermPostings {
  data: Uint8Array;
  /** Bytes of `data` in use. */
  length = 0;
  /** Postings written (live or not). */
  size = 0;
  /** Live notes holding the term (postings of removed notes stay until the next compaction). */
  notes = 0;
  /** The last posting's ordinal. */
  last = -1;
  /** Per complete block: its last ordinal and the byte where the next block starts. */
  skips: Int32Array | null = null;
  /**
   * Per block of HALF postings or more: the ordinal of its posting HALF - 1
   * and the byte where its posting HALF starts. A leap to a note in the
   * second half of a block reads on from there (PostingCursor.leap), half a
   * block's postings fewer (docs/search-index.md, "Half-block entries").
   */
  halves: Int32Array | null = null;
  /** The largest weighted frequency among the postings under `boundAverages` (a bound: removed notes may have held it). */
  maxWeighted = 0;
  /** The field averages the bound was computed under; null: not computed yet. */
  boundAverages: Fields<number> | null = null;
  /** The same bound per block of BLOCK postings (rounded up to a float32), under `boundAverages`; null until computed. */
  blockMax: Float32Array | null = null;

  /** Raises the bounds for the last posting's weighted frequency (under `boundAverages`). */
  raiseBound(weighted: number): void {
    if (weighted > this.maxWeighted) this.maxWeighted = weighted;
    const block = (this.size - 1) >> BLOCK_SHIFT;
    if (!this.blockMax || block >= this.blockMax.length) {
      const grown = new Float32Array(Math.max(4, 2 * (block + 1)));
      if (this.blockMax) grown.set(this.blockMax);
      this.blockMax = grown;
    }
    const bound = roundUp(weighted);
    if (bound > this.blockMax[block]) this.blockMax[block] = bound;
  }

  constructor(capacityBytes: number) {
    this.data = new Uint8Array(capacityBytes);
  }

  /** Grows `data` to hold `more` bytes past `length`; returns the bytes added. */
  private grow(more: number): number {
    const before = this.data.length;
    const grown = new Uint8Array(Math.max(this.length + more, Math.ceil(before * 1.5), 8));
    grown.set(this.data.subarray(0, this.length));
    this.data = grown;
    return grown.length - before;
  }

  /** Writes `value` as a varint at `at`; returns where the next byte goes. */
  private static varint(data: Uint8Array, at: number, value: number): number {
    let v = value;
    while (v >= 128) {
      data[at++] = (v & 127) | 128;
      v >>>= 7;
    }
    data[at++] = v;
    return at;
  }

  /** Appends a posting (`ordinal` above every one held); returns the bytes the arrays grew by. */
  push(ordinal: number, title: number, tags: number, body: number): number {
    // At most four varints of five bytes; one when the term is in the body only, 1-3 times (most postings):
    // a new term's first array then holds its first postings instead of being replaced at the first.
    const most = title === 0 && tags === 0 && body >= 1 && body <= 3 ? 5 : 20;
    let grown = this.length + most > this.data.length ? this.grow(most) : 0;
    const data = this.data;
    const gap = ordinal - this.last;
    let at = this.length;
    if (title === 0 && tags === 0 && body >= 1 && body <= 3) {
      // The common case: body only, one to three times, in one varint.
      at = TermPostings.varint(data, at, gap * 4 + body - 1);
    } else {
      at = TermPostings.varint(data, at, gap * 4 + 3);
      const more = title > 0 || tags > 0;
      at = TermPostings.varint(data, at, body * 2 + (more ? 1 : 0));
      if (more) {
        at = TermPostings.varint(data, at, title);
        at = TermPostings.varint(data, at, tags);
      }
    }
    this.length = at;
    this.last = ordinal;
    this.size++;
    if ((this.size & (BLOCK - 1)) === 0) grown += this.skipEntry(this.size, ordinal);
    else if ((this.size & (BLOCK - 1)) === HALF) grown += this.halfEntry(this.size, ordinal);
    return grown;
  }

  /**
   * push() for every posting of a staged chain (posting-stage.ts: `ordinals`
   * and `counts` by staged posting, `next` the chain from `from`, ordinals
   * ascending), with the list's place and size kept in locals through the
   * run and the array grown once for the run's most bytes (as push() reckons them); the same bytes and
   * skip entries as pushing each (test/unit/push-chain.test.ts). The posting's encoding is push()'s,
   * written out again: one function for both cost the stored vectors' add 5-8% (docs/benchmarks.md,
   * "Final check of the session, quiet host, 2026-11-26 08:40-09:00 UTC"). Returns the bytes the arrays grew by.
   */
  pushChain(ordinals: Int32Array, counts: Int32Array, next: Int32Array, from: number): number {
    // What push() would make room for, summed: five bytes for a body-only posting of count 1-3, else twenty.
    let postings = 0;
    let most = 0;
    for (let at = from; at >= 0; at = next[at]) {
      postings++;
      const body = counts[3 * at + 2];
      most += counts[3 * at] === 0 && counts[3 * at + 1] === 0 && body >= 1 && body <= 3 ? 5 : 20;
    }
    let grown = this.length + most > this.data.length ? this.grow(most) : 0;
    const data = this.data;
    let at = this.length;
    let last = this.last;
    let size = this.size;
    for (let staged = from; staged >= 0; staged = next[staged]) {
      const ordinal = ordinals[staged];
      const title = counts[3 * staged];
      const tags = counts[3 * staged + 1];
      const body = counts[3 * staged + 2];
      const gap = ordinal - last;
      if (title === 0 && tags === 0 && body >= 1 && body <= 3) {
        at = TermPostings.varint(data, at, gap * 4 + body - 1);
      } else {
        at = TermPostings.varint(data, at, gap * 4 + 3);
        const more = title > 0 || tags > 0;
        at = TermPostings.varint(data, at, body * 2 + (more ? 1 : 0));
        if (more) {
          at = TermPostings.varint(data, at, title);
          at = TermPostings.varint(data, at, tags);
        }
      }
      last = ordinal;
      size++;
      if ((size & (BLOCK - 1)) === 0) {
        this.length = at;
        grown += this.skipEntry(size, ordinal);
      } else if ((size & (BLOCK - 1)) === HALF) {
        this.length = at;
        grown += this.halfEntry(size, ordinal);
      }
    }
    this.length = at;
    this.last = last;
    this.size = size;
    this.notes += postings;
    return grown;
  }

  /** Records the skip entry of the block that posting `size` (its ordinal `ordinal`, `length` bytes written) completes; returns the bytes `skips` grew by. */
  private skipEntry(size: number, ordinal: number): number {
    const before = this.skips;
    this.skips = withPair(before, (size >> BLOCK_SHIFT) - 1, ordinal, this.length);
    return (this.skips.length - (before?.length ?? 0)) * 4;
  }

  /** Records the half entry of the block whose posting HALF - 1 is posting `size` - 1 (its ordinal `ordinal`, `length` bytes written); returns the bytes `halves` grew by. */
  private halfEntry(size: number, ordinal: number): number {
    const before = this.halves;
    this.halves = withPair(before, size >> BLOCK_SHIFT, ordinal, this.length);
    return (this.halves.length - (before?.length ?? 0)) * 4;
  }

  /** Bytes held by the arrays. */
  get bytes(): number {
    return this.data.length + (this.skips ? this.skips.length * 4 : 0) + (this.halves ? this.halves.length * 4 : 0);
  }

  /** Shrinks the arrays to what they hold; returns the bytes freed. */
  trim(): number {
    const before = this.bytes;
    if (this.data.length > this.length) this.data = this.data.slice(0, this.length);
    const blocks = this.size >> BLOCK_SHIFT;
    if (this.skips && this.skips.length > 2 * blocks) this.skips = this.skips.slice(0, 2 * blocks);
    const halved = this.size >= HALF ? ((this.size - HALF) >> BLOCK_SHIFT) + 1 : 0;
    if (this.halves && this.halves.length > 2 * halved) this.halves = this.halves.slice(0, 2 * halved);
    return before - this.bytes;
  }

  /** Calls `each` with every posting in order: ordinal and counts (title, tags, body). */
  forEach(each: (ordinal: number, title: number, tags: number, body: number) => void): void {
    const cursor = new PostingCursor(this);
    while (cursor.next()) each(cursor.ordinal, cursor.title, cursor.tags, cursor.body);
  }
}

/** `pairs` (an ordinal and a byte offset per block) with pair `block` set, grown to twice the blocks when it has no room. */
function withPair(pairs: Int32Array | null, block: number, ordinal: number, at: number): Int32Array {
  let into = pairs;
  if (!into || into.length < 2 * block + 2) {
    into = new Int32Array(Math.max(8, 2 * (block + 1) * 2));
    if (pairs) into.set(pairs);
  }
  into[2 * block] = ordinal;
  into[2 * block + 1] = at;
  return into;
}

/**
 * The counts after a posting's gap when its code is 3 (the layout above):
 * varint(body · 2 + f), then the title's and the tags' counts when f = 1.
 * Written to `into` as [body, title, tags]; returns where the next posting
 * starts. Every reader of the postings decodes them here; only the gap, in
 * every posting, is decoded inline by each (most postings are body-only: the
 * gap is all there is).
 */
export function readFieldCounts(data: Uint8Array, from: number, into: Int32Array): number {
  let at = readVarint(data, from, into, 0);
  const f = into[0];
  into[0] = f >>> 1;
  if ((f & 1) === 0) {
    into[1] = 0;
    into[2] = 0;
    return at;
  }
  at = readVarint(data, at, into, 1);
  return readVarint(data, at, into, 2);
}

/** One varint at `from` into `into[slot]`; returns where the next value starts. */
function readVarint(data: Uint8Array, from: number, into: Int32Array, slot: number): number {
  let at = from;
  let value = data[at++];
  if (value >= 128) {
    value &= 127;
    let shift = 7;
    let byte: number;
    do {
      byte = data[at++];
      value |= (byte & 127) << shift;
      shift += 7;
    } while (byte >= 128);
  }
  into[slot] = value;
  return at;
}

/** A float32 at least `value` (a bound stays a bound once stored). */
export function roundUp(value: number): number {
  const stored = Math.fround(value);
  return stored >= value ? stored : Math.fround(value * (1 + 1e-6));
}

/**
 * Reads one term's postings in order: next() decodes the following posting,
 * seek() moves to the first posting at or past an ordinal, skipping whole
 * blocks by their skip entries.
 */
export class PostingCursor {
  /** The current posting's ordinal (-1 before the first, Infinity past the last) and counts. */
  ordinal = -1;
  title = 0;
  tags = 0;
  body = 0;
  private at = 0;
  private readonly fields = new Int32Array(3);
  /** The block holding the current posting. */
  private block = 0;
  private read = 0;

  constructor(private readonly list: TermPostings) {}

  next(): boolean {
    const list = this.list;
    if (this.at >= list.length) {
      this.ordinal = Infinity;
      return false;
    }
    const data = list.data;
    let at = this.at;
    let v = data[at++];
    if (v >= 128) {
      v &= 127;
      let shift = 7;
      let byte: number;
      do {
        byte = data[at++];
        v |= (byte & 127) << shift;
        shift += 7;
      } while (byte >= 128);
    }
    this.ordinal += v >>> 2;
    const code = v & 3;
    if (code !== 3) {
      this.body = code + 1;
      this.title = 0;
      this.tags = 0;
    } else {
      at = readFieldCounts(data, at, this.fields);
      this.body = this.fields[0];
      this.title = this.fields[1];
      this.tags = this.fields[2];
    }
    this.at = at;
    this.read++;
    if ((this.read & (BLOCK - 1)) === 0) this.block++;
    return true;
  }

  /** Moves to the first posting whose ordinal is at least `target`; true when it is `target` itself. */
  seek(target: number): boolean {
    if (this.ordinal >= target) return this.ordinal === target;
    const list = this.list;
    const skips = list.skips;
    if (skips) {
      const blocks = list.size >> BLOCK_SHIFT;
      let block = this.block;
      while (block < blocks && skips[2 * block] < target) block++;
      if (block > this.block) this.toBlock(block);
    }
    while (this.next()) if (this.ordinal >= target) return this.ordinal === target;
    return false;
  }

  /**
   * seek() for a few targets far apart in a long list (the similar-notes
   * lookup's pool): finds the target's block by binary search over the skip
   * entries instead of walking them, and reads on from the block's half entry
   * when the target is past it.
   */
  leap(target: number): boolean {
    if (this.ordinal >= target) return this.ordinal === target;
    const skips = this.list.skips;
    if (skips) {
      let low = this.block;
      let high = this.list.size >> BLOCK_SHIFT;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (skips[2 * middle] < target) low = middle + 1;
        else high = middle;
      }
      if (low > this.block) this.toBlock(low);
    }
    const halves = this.list.halves;
    const half = (this.block << BLOCK_SHIFT) + HALF;
    if (halves !== null && half > this.read && half <= this.list.size && halves[2 * this.block] < target) {
      this.ordinal = halves[2 * this.block];
      this.at = halves[2 * this.block + 1];
      this.read = half;
    }
    // Up to the target, only the gaps are read (each posting's counts skipped, nothing stored per posting); its counts by next().
    const list = this.list;
    const data = list.data;
    let at = this.at;
    let ordinal = this.ordinal;
    let read = this.read;
    while (at < list.length) {
      const start = at;
      let v = data[at++];
      if (v >= 128) {
        v &= 127;
        let shift = 7;
        let byte: number;
        do {
          byte = data[at++];
          v |= (byte & 127) << shift;
          shift += 7;
        } while (byte >= 128);
      }
      if (ordinal + (v >>> 2) >= target) {
        this.at = start;
        this.ordinal = ordinal;
        this.read = read;
        this.block = read >> BLOCK_SHIFT;
        this.next();
        return this.ordinal === target;
      }
      ordinal += v >>> 2;
      read++;
      if ((v & 3) === 3) {
        // varint(body · 2 + f), then two more varints when f = 1
        let more = data[at] & 1;
        while (data[at++] >= 128);
        for (; more > 0 && more < 3; more++) while (data[at++] >= 128);
      }
    }
    this.at = at;
    this.ordinal = Infinity;
    this.read = read;
    this.block = read >> BLOCK_SHIFT;
    return false;
  }

  /** Moves to just before the first posting of block `block` (1 up to the complete blocks; the last may be the partial one). */
  toBlock(block: number): void {
    const skips = this.list.skips!;
    this.block = block;
    this.ordinal = skips[2 * block - 2];
    this.at = skips[2 * block - 1];
    this.read = block << BLOCK_SHIFT;
  }
}
