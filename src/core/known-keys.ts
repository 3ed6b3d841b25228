// Keys already found valid, remembered by their SHA-256 digest while the
// store's key generation has not moved (Store.keyGeneration). A hit costs one
// hash and one Map lookup; the full check (prefix candidates from the store,
// every digest compared in constant time) runs on a miss. Under load that
// check was the largest part of a keyed GET that our code controls.
//
// The lookup is by digest, never by the key itself: the raw key is not kept,
// and the Map's string comparison can only reveal digest bytes, which say
// nothing about any key. Only keys found valid are remembered, so made-up
// keys cannot fill memory, and a revoke moves the generation, which forgets all.
// While the store cannot tell (generation NaN) nothing is trusted or learnt,
// and what was remembered is kept for the generation's return.

/** Active keys remembered at most; past it the memo starts over. */
export const KNOWN_KEYS_LIMIT = 50_000;

export class KnownKeys {
  private readonly contributors = new Map<string, number>();
  private generation = NaN;

  constructor(private readonly limit = KNOWN_KEYS_LIMIT) {}

  /** The contributor behind this digest, if it was found valid in this generation. */
  lookup(digestText: string, generation: number): number | undefined {
    // NaN: the store cannot tell now (on PostgreSQL, a replica outside its lease on the change log).
    // Nothing is trusted then, but nothing is forgotten either: a generation that comes back
    // unchanged says no key changed meanwhile, so the keys remembered under it hold again.
    if (Number.isNaN(generation)) return undefined;
    if (generation !== this.generation) {
      this.contributors.clear();
      this.generation = generation;
      return undefined;
    }
    return this.contributors.get(digestText);
  }

  /** `generation` must have been read before the store was asked about the key. */
  remember(digestText: string, contributorNo: number, generation: number): void {
    if (Number.isNaN(generation) || generation !== this.generation) return;
    if (this.contributors.size >= this.limit) this.contributors.clear();
    this.contributors.set(digestText, contributorNo);
  }
}
