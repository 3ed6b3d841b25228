// Index terms to dense ids (memory-index.ts), for the write side's lookups:
// open addressing over one typed array, each slot holding the term's hash,
// id and where its characters start in one character pool, so that finding a
// term reads one slot and one run of the pool. A Map<string, number> read the
// map's entry, the key string's object and its characters, each a cache miss
// on a large vocabulary: adding a note is memory-latency bound, one lookup a
// distinct term (docs/benchmarks.md, "The in-memory index's cost on a write").

/** Slots per term at most (the table doubles past it): short probe runs. */
const LOAD = 0.5;
/** Int32s per slot: hash (0: empty), id, pool start, length. */
const SLOT = 4;

export class TermTable {
  private slots: Int32Array;
  private mask: number;
  private pool = new Uint16Array(256);
  private poolUsed = 0;
  /** Terms held. */
  size = 0;

  constructor(capacity = 1024) {
    let slots = 16;
    while (slots * LOAD < capacity) slots *= 2;
    this.slots = new Int32Array(SLOT * slots);
    this.mask = slots - 1;
  }

  /** The term's id, or -1. */
  get(term: string): number {
    return this.getIn(term, 0, term.length);
  }

  /** get() of the term `text.slice(start, end)`, without making that string. */
  getIn(text: string, start: number, end: number): number {
    let hash = FNV_START;
    for (let i = start; i < end; i++) hash = fnvStep(hash, text.charCodeAt(i));
    return this.getHashed(finishHash(hash), text, start, end);
  }

  /**
   * Reads the first slot (and its characters) of each of `count` hashes, in
   * a loop whose loads do not wait on each other, so that their cache misses
   * overlap; the getHashed() calls that follow then find them in cache
   * (docs/benchmarks.md, "Adding notes in passes"). Returns a value only so
   * that the reads are not dropped.
   */
  warm(hashes: Int32Array, count: number): number {
    const slots = this.slots;
    const pool = this.pool;
    const mask = this.mask;
    let sink = 0;
    for (let i = 0; i < count; i++) {
      const at = SLOT * (hashes[i] & mask);
      sink += pool[slots[at + 2]] | 0;
    }
    return sink;
  }

  /** getIn() of a term whose hash (as getIn computes it: FNV-1a, then finishHash) is known. */
  getHashed(hash: number, text: string, start: number, end: number): number {
    const length = end - start;
    const slots = this.slots;
    const pool = this.pool;
    const mask = this.mask;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const at = SLOT * slot;
      const held = slots[at];
      if (held === 0) return -1;
      if (held === hash && slots[at + 3] === length) {
        const from = slots[at + 2];
        let i = 0;
        while (i < length && pool[from + i] === text.charCodeAt(start + i)) i++;
        if (i === length) return slots[at + 1];
      }
    }
  }

  /** Adds a term not held, under `id`. */
  add(term: string, id: number): void {
    if (this.size + 1 > (this.mask + 1) * LOAD) this.rehash(2 * (this.mask + 1));
    const length = term.length;
    if (this.poolUsed + length > this.pool.length) {
      const pool = new Uint16Array(Math.max(2 * this.pool.length, this.poolUsed + length));
      pool.set(this.pool.subarray(0, this.poolUsed));
      this.pool = pool;
    }
    const start = this.poolUsed;
    for (let i = 0; i < length; i++) this.pool[start + i] = term.charCodeAt(i);
    this.poolUsed += length;
    this.place(hashOf(term), id, start, length);
    this.size++;
  }

  /** Bytes held by the slots and the pool. */
  get bytes(): number {
    return this.slots.byteLength + this.pool.byteLength;
  }

  private place(hash: number, id: number, start: number, length: number): void {
    const slots = this.slots;
    let slot = hash & this.mask;
    while (slots[SLOT * slot] !== 0) slot = (slot + 1) & this.mask;
    const at = SLOT * slot;
    slots[at] = hash;
    slots[at + 1] = id;
    slots[at + 2] = start;
    slots[at + 3] = length;
  }

  private rehash(count: number): void {
    const old = this.slots;
    this.slots = new Int32Array(SLOT * count);
    this.mask = count - 1;
    for (let at = 0; at < old.length; at += SLOT) if (old[at] !== 0) this.place(old[at], old[at + 1], old[at + 2], old[at + 3]);
  }
}

/** FNV-1a's starting state and one step (a UTF-16 code unit). */
export const FNV_START = 0x811c9dc5 | 0;
export const fnvStep = (h: number, code: number): number => Math.imul(h ^ code, 0x01000193);

/** FNV-1a over the UTF-16 code units, then mixed (murmur3's finaliser); never 0 (an empty slot). */
function hashOf(term: string): number {
  let h = FNV_START;
  for (let i = 0; i < term.length; i++) h = fnvStep(h, term.charCodeAt(i));
  return finishHash(h);
}

/** An FNV-1a state mixed by murmur3's finaliser; never 0 (an empty slot of an open-addressing table). */
export function finishHash(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h === 0 ? 1 : h;
}
