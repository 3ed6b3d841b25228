// A least-recently-used cache bounded by the bytes its values take (as the
// caller sizes them), not by the number of entries.
export class ByteBoundedCache<K, V> {
  private readonly entries = new Map<K, V>();
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    const size = this.sizeOf(value);
    if (size > this.maxBytes) return;
    this.delete(key);
    this.entries.set(key, value);
    this.bytes += size;
    while (this.bytes > this.maxBytes) this.delete(this.entries.keys().next().value as K);
  }

  delete(key: K): void {
    const value = this.entries.get(key);
    if (value === undefined) return;
    this.entries.delete(key);
    this.bytes -= this.sizeOf(value);
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}
