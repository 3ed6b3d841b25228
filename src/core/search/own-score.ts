// The similar-notes lookup's ranking (docs/design.md, "Similar notes"), for
// any engine's SimilarSource. It runs before the new note is stored (so that
// its answer can be stored with the write, for an Idempotency-Key's replay),
// with the corpus counted as if the note were stored: one more note, its
// field lengths, one more holder of each of its terms. So the new note's own
// score (what it would score when searched for by its terms) and every other
// note's score are those the ranking gives once it is stored, by the same
// function and sums as every ranking path (ranking.ts), and the note itself
// is never a candidate. The in-memory postings run the same rule in
// similar-memory.ts.
//
// The rule, bounded whatever the commons holds (a replay loop writes
// thousands of notes sharing every word of the new one):
//   1. reach: the new note's shared terms (held by some other note), rarest
//      first, each gives the newest of its holders, `reach` holders at most
//      in all; each holder gains the term's BM25F share (its partial score
//      for the rarest terms);
//   2. pool: the `pool` holders with the most (then the newest) are scored
//      exactly, BM25F over all the lookup's terms;
//   3. those reaching `minShare` of the new note's own score are listed, best
//      first, `limit` at most.
import type { Fields } from "./analyzer.ts";
import { idf, saturate, scoreVector, TopK, weightedFrequencyOf, type CorpusStats, type QueryTerm, type Ranked, type TermSource } from "./ranking.ts";
import { readLengths, termCounts } from "./vector.ts";

/** What the similar-notes lookup asks an engine (Store.similarNotes). */
export interface SimilarQuery {
  /** Index terms as given (no typo correction). */
  terms: string[];
  /** The new note's term vector (vector.ts), not stored yet. */
  vector: string;
  /** Notes listed at most (more on ties). */
  limit: number;
  /** The share of the new note's own score a note must reach. */
  minShare: number;
  /** Holders of the rarest shared terms read at most (step 1 of the rule above). */
  reach: number;
  /** Holders scored exactly at most (step 2). */
  pool: number;
  /**
   * `reach` on the database index's path (while the postings are built, or
   * over their budget), where each holder reached costs a stored vector read;
   * `reach` when not given.
   */
  databaseReach?: number;
}

/** What the lookup reads of an engine's index on the database path. */
export interface SimilarSource extends Pick<TermSource, "corpus" | "tierCounts" | "vectors"> {
  /** Keys of the newest `limit` (Infinity: all) notes holding `term`, in any order. */
  newestWith(term: string, limit: number): number[] | Promise<number[]>;
}

/** A lookup term: its weight, the notes holding it with the new note counted in (`holding`), and the others (`others`). */
export type SimilarTerm = QueryTerm & { holding: number; others: number };

/** The lookup's statistics, the new note counted in. */
export interface SimilarStats {
  query: SimilarTerm[];
  averages: Fields<number>;
}

/** The what-if statistics: `corpus` and `othersHolding` (notes holding a term) without the new note, plus it. */
export function similarStats(corpus: CorpusStats, othersHolding: (term: string) => number, terms: string[], vector: string): SimilarStats {
  const notes = corpus.notes + 1;
  const lengths = readLengths(vector);
  const averages = corpus.lengthSums.map((sum, f) => Math.max((sum + lengths[f]) / notes, 1e-9)) as Fields<number>;
  const query: SimilarStats["query"] = [];
  for (const term of terms) {
    const others = othersHolding(term);
    const holding = others + (termCounts(vector, term) === null ? 0 : 1);
    if (holding > 0) query.push({ term, idf: idf(notes, holding), holding, others });
  }
  return { query, averages };
}

/** The new note's own score for the lookup's terms. */
export const ownScore = (stats: SimilarStats, vector: string): number => scoreVector(vector, stats.query, stats.averages);

/** The query's terms some other note holds, rarest first (ties in query order): the order holders are reached in. */
export const rarestShared = (query: SimilarTerm[]): SimilarTerm[] => query.filter((q) => q.others > 0).sort((a, b) => a.others - b.others);

/** How many holders of each term in `rarest` are reached within `reach` (step 1), in that order; zero once it is spent. */
export function reachPerTerm(rarest: SimilarTerm[], reach: number): number[] {
  let left = reach;
  return rarest.map(({ others }) => {
    const take = Math.min(others, left);
    left -= take;
    return take;
  });
}

/**
 * The pool (step 2): of the first `count` of `items` (each weighed by
 * `weights[item]`, its summed score for the terms that reached it), the
 * `pool` with the largest weight, then the largest key (the newest);
 * ascending by item. One pass keeping the best `pool` in a heap over typed
 * arrays, worst on top: the lookup runs on every write, most items lose to
 * the top in one comparison, and a key is read only for an item that enters
 * the pool or ties the top's weight (a replay loop ties thousands).
 */
export function poolOf(items: Int32Array, count: number, weights: Float64Array, pool: number, keyOf: (item: number) => number): Int32Array {
  if (count <= pool) return items.slice(0, count).sort();
  const heap = new PoolHeap(pool);
  const least = leastOfBest(items, count, weights, pool);
  // Last reached first: those are the newest holders of the commonest term reached, so where thousands tie (a replay loop) the newest fill the heap first and the others lose to its top at once.
  for (let i = count - 1; i >= 0; i--) {
    const item = items[i];
    const weight = weights[item];
    if (weight < least) continue;
    if (heap.size < pool) heap.push(item, weight, keyOf(item));
    else if (weight > heap.weights[0]) heap.replaceTop(item, weight, keyOf(item));
    else if (weight === heap.weights[0]) {
      const key = keyOf(item);
      if (key > heap.keys[0]) heap.replaceTop(item, weight, key);
    }
  }
  return heap.items.sort();
}

/**
 * A weight the pool's least reaches: the `pool`-th largest of the first items
 * (the holders of the rarest terms, reached first, which weigh the most). Any
 * `pool` items' `pool`-th largest weight is at most the pool's least, so an
 * item below it is out of the pool without a key read or a heap step.
 */
function leastOfBest(items: Int32Array, count: number, weights: Float64Array, pool: number): number {
  const sample = Math.min(count, 8 * pool);
  const sampled = new Float64Array(sample);
  for (let i = 0; i < sample; i++) sampled[i] = weights[items[i]];
  // Quickselect (Hoare's) for the element of rank sample - pool in ascending order.
  const rank = sample - pool;
  let low = 0;
  let high = sample - 1;
  while (low < high) {
    const pivot = sampled[(low + high) >>> 1];
    let i = low;
    let j = high;
    while (i <= j) {
      while (sampled[i] < pivot) i++;
      while (sampled[j] > pivot) j--;
      if (i <= j) {
        const swap = sampled[i];
        sampled[i++] = sampled[j];
        sampled[j--] = swap;
      }
    }
    if (rank <= j) high = j;
    else if (rank >= i) low = i;
    else break;
  }
  return sampled[rank];
}

const ranksBelow = (weight: number, key: number, otherWeight: number, otherKey: number): boolean =>
  weight < otherWeight || (weight === otherWeight && key < otherKey);

/** A binary min-heap of (item, weight, key) by weight, then key: the worst of the pool on top. */
class PoolHeap {
  readonly items: Int32Array;
  readonly weights: Float64Array;
  readonly keys: Float64Array;
  size = 0;

  constructor(capacity: number) {
    this.items = new Int32Array(capacity);
    this.weights = new Float64Array(capacity);
    this.keys = new Float64Array(capacity);
  }

  push(item: number, weight: number, key: number): void {
    let at = this.size++;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!ranksBelow(weight, key, this.weights[parent], this.keys[parent])) break;
      this.move(parent, at);
      at = parent;
    }
    this.set(at, item, weight, key);
  }

  replaceTop(item: number, weight: number, key: number): void {
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= this.size) break;
      if (child + 1 < this.size && ranksBelow(this.weights[child + 1], this.keys[child + 1], this.weights[child], this.keys[child])) child++;
      if (!ranksBelow(this.weights[child], this.keys[child], weight, key)) break;
      this.move(child, at);
      at = child;
    }
    this.set(at, item, weight, key);
  }

  private move(from: number, to: number): void {
    this.set(to, this.items[from], this.weights[from], this.keys[from]);
  }

  private set(at: number, item: number, weight: number, key: number): void {
    this.items[at] = item;
    this.weights[at] = weight;
    this.keys[at] = key;
  }
}

/** What an engine's lookup finds: the new note's own score and the other notes reaching the floor, best `limit` (ties kept). */
export interface SimilarRanking {
  own: number;
  ranked: Ranked[];
}

/** The lookup (the rule above) on the database index's path, reaching `databaseReach` holders when given. */
export async function rankSimilar(source: SimilarSource, { terms, vector, limit, minShare, reach: memoryReach, pool, databaseReach }: SimilarQuery): Promise<SimilarRanking> {
  const reach = databaseReach ?? memoryReach;
  const [corpus, perTier] = await Promise.all([source.corpus(), source.tierCounts(terms)]);
  const held = new Map(terms.map((term, i) => [term, perTier[i].reduce((sum, n) => sum + n, 0)]));
  const stats = similarStats(corpus, (term) => held.get(term) ?? 0, terms, vector);
  const own = ownScore(stats, vector);
  if (!(own > 0) || limit <= 0) return { own, ranked: [] };
  const floor = minShare * own;
  // Step 1: which of the rarest terms reached each holder, in reach order (the order the in-memory path sums in).
  const reachedBy = new Map<number, number[]>();
  const rarest = rarestShared(stats.query);
  const takes = reachPerTerm(rarest, reach);
  for (const [i, { term }] of rarest.entries()) {
    if (takes[i] <= 0) break;
    for (const key of await source.newestWith(term, takes[i])) {
      const by = reachedBy.get(key);
      if (by) by.push(i);
      else reachedBy.set(key, [i]);
    }
  }
  // Only notes whose vector is still there (on SQLite a write may run between these reads; PostgreSQL reads one snapshot).
  const vectors = new Map((await source.vectors([...reachedBy.keys()])).map(({ key, vector: theirs }) => [key, theirs]));
  const reached = [...vectors.keys()];
  const weightOf = (key: number) => {
    const theirs = vectors.get(key)!;
    const lengths = readLengths(theirs);
    let weight = 0;
    for (const i of reachedBy.get(key)!) {
      const tf = termCounts(theirs, rarest[i].term);
      if (tf) weight += rarest[i].idf * saturate(weightedFrequencyOf(tf[0], tf[1], tf[2], lengths[0], lengths[1], lengths[2], stats.averages));
    }
    return weight;
  };
  // Step 2: the pool, scored exactly (poolOf picks among positions in `reached`).
  const weights = Float64Array.from(reached, weightOf);
  const picked = Array.from(poolOf(Int32Array.from(reached.keys()), reached.length, weights, pool, (i) => reached[i]), (i) => reached[i]);
  const top = new TopK(limit);
  for (const key of picked.sort((a, b) => a - b)) {
    const score = scoreVector(vectors.get(key)!, stats.query, stats.averages);
    if (score >= floor) top.offer(key, score);
  }
  return { own, ranked: top.items };
}
