// A Map bounded by entries AND by an estimate of the bytes its values hold:
// a count alone let 1,000 notes of 20,000 CJK characters grow RSS by 80 MB
// (issue 12), since a note's size varies a hundredfold.
//
// Second-chance (CLOCK) eviction: a hit only marks its entry, and eviction
// skips marked entries once. Moving an entry to the back on every hit (exact
// LRU) cost two Map writes per read, a tenth of a cached GET's time.

interface Entry<V> {
  value: V;
  bytes: number;
  used: boolean;
}

export class BoundedCache<K, V> {
  private readonly entries = new Map<K, Entry<V>>();
  private total = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The estimated bytes held, as counted by `sizeOf`. */
  get bytes(): number {
    return this.total;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    entry.used = true;
    return entry.value;
  }

  set(key: K, value: V): void {
    const bytes = this.sizeOf(value);
    this.delete(key);
    // A value larger than the whole budget is not kept at all.
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { value, bytes, used: false });
    this.total += bytes;
    while (this.entries.size > this.maxEntries || this.total > this.maxBytes) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [K, Entry<V>];
      this.entries.delete(oldestKey);
      if (oldest.used) {
        oldest.used = false;
        this.entries.set(oldestKey, oldest);
      } else {
        this.total -= oldest.bytes;
      }
    }
  }

  delete(key: K): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.total -= entry.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }
}
