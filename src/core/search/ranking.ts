// Exact top-k ranking with dynamic pruning (MaxScore, Turtle & Flood 1995),
// over any engine that can list the notes holding a term and read a note's
// term vector. The algorithm and its invariants: docs/design.md, "Search".
import type { Fields } from "./analyzer.ts";
import { readLengths, termCounts } from "./vector.ts";

/**
 * BM25F (Robertson & Zaragoza 2009): each field's term frequency is
 * normalised by that field's length, the fields are weighted and summed, and
 * the sum saturates once. Parameters and the variants measured against them:
 * docs/search-quality.md.
 */
export const BM25F = {
  k1: 1.2,
  /** Length normalisation per field: title, tags, body. */
  b: [0.75, 0.75, 0.75] as Fields<number>,
  weights: [3, 1, 1] as Fields<number>,
};

export interface CorpusStats {
  notes: number;
  /** Terms in each field, summed over all notes. */
  lengthSums: Fields<number>;
}

/** What an engine provides to rank: term statistics, postings and term vectors. */
export interface TermSource {
  corpus(): CorpusStats | Promise<CorpusStats>;
  /** How many notes hold each term (0 when none), in the order asked. */
  noteCounts(terms: string[]): number[] | Promise<number[]>;
  /** Keys of the notes holding `term` and none of `without`, and (when `anyOf` is given) at least one of `anyOf`. */
  notesWith(term: string, without: string[], anyOf: string[] | null): number[] | Promise<number[]>;
  /** The stored term vectors (see vector.ts) of these notes. */
  vectors(keys: number[]): { key: number; vector: string }[] | Promise<{ key: number; vector: string }[]>;
}

export interface Ranked {
  key: number;
  score: number;
}

/** Robertson-Sparck Jones IDF as Lucene computes it: always positive, so a word in most notes still counts a little. */
export function idf(notes: number, holding: number): number {
  return Math.log(1 + (notes - holding + 0.5) / (holding + 0.5));
}

/** A query term's weight and its largest possible contribution to a score (never reached: saturation is asymptotic). */
export interface QueryTerm {
  term: string;
  idf: number;
  bound: number;
}

/** Bounds are compared with this slack so that float rounding can never prune a note that could tie. */
const SLACK = 1 + 1e-9;

/** One term's share of a note's BM25F score, from its counts per field and the note's field lengths. */
function contribution(term: QueryTerm, tf: Fields<number>, lengths: Fields<number>, averages: Fields<number>): number {
  const { k1, b, weights } = BM25F;
  let weighted = 0;
  for (let f = 0; f < 3; f++) {
    if (tf[f] > 0) weighted += (weights[f] * tf[f]) / (1 - b[f] + (b[f] * lengths[f]) / averages[f]);
  }
  return (term.idf * weighted * (k1 + 1)) / (weighted + k1);
}

/** A note's BM25F score for the query terms, the shares summed in query order (every scorer then gets the same float). */
export function scoreVector(vector: string, terms: QueryTerm[], averages: Fields<number>): number {
  const lengths = readLengths(vector);
  let score = 0;
  for (const term of terms) {
    const tf = termCounts(vector, term.term);
    if (tf !== null) score += contribution(term, tf, lengths, averages);
  }
  return score;
}

/**
 * The same score, or null as soon as the note cannot reach `threshold`: terms
 * are looked up largest bound first (`order`, from `from` on: earlier ones
 * are known to be absent), and once the shares found plus the bounds of the
 * terms not yet looked up fall short, the rest is not read.
 */
function scoreOrSkip(
  vector: string,
  query: QueryTerm[],
  order: QueryTerm[],
  from: number,
  remaining: number[],
  averages: Fields<number>,
  threshold: number,
): number | null {
  const lengths = readLengths(vector);
  const shares = new Map<QueryTerm, number>();
  let partial = 0;
  for (let i = from; i < order.length; i++) {
    if ((partial + remaining[i]) * SLACK < threshold) return null;
    const tf = termCounts(vector, order[i].term);
    if (tf === null) continue;
    const share = contribution(order[i], tf, lengths, averages);
    shares.set(order[i], share);
    partial += share;
  }
  let score = 0;
  for (const term of query) score += shares.get(term) ?? 0;
  return score;
}

/**
 * The best `k` scores seen, plus every note tied with the k-th: ties are
 * settled later by the documented tie order, so none may be cut here.
 */
class TopK {
  readonly items: Ranked[] = [];
  constructor(private readonly k: number) {}

  get full(): boolean {
    return this.items.length >= this.k;
  }

  /** The score a note must reach to enter (ties enter too). */
  get threshold(): number {
    return this.full ? this.items[this.k - 1].score : -Infinity;
  }

  offer(key: number, score: number): void {
    if (this.full && score < this.threshold) return;
    let at = this.items.length;
    while (at > 0 && this.items[at - 1].score < score) at--;
    this.items.splice(at, 0, { key, score });
    if (this.items.length > this.k) {
      const kth = this.items[this.k - 1].score;
      let keep = this.items.length;
      while (keep > this.k && this.items[keep - 1].score < kth) keep--;
      this.items.length = keep;
    }
  }
}


/**
 * The top `k` notes by BM25F among all notes holding any of `terms` (index
 * terms, distinct), exactly as if every such note were scored; more than `k`
 * when notes tie with the k-th.
 *
 * Every term has a bound: the most it can add to a score. Terms are taken
 * rarest first (largest bound first); step i scores the notes whose rarest
 * query term is term i. Such a note scores less than term i's bound plus the
 * bounds of the later terms it holds, so the step asks only for notes that
 * also hold one of the later terms whose bounds could lift them past the
 * current k-th score (all of its notes when term i alone could). Once term
 * i's bound plus all later bounds cannot reach the k-th score, no unscored
 * note can enter and the search stops. A seed step first scores the notes
 * holding the two rarest terms, so that the k-th score is high early.
 */
export async function rankTopK(source: TermSource, terms: string[], k: number): Promise<Ranked[]> {
  if (terms.length === 0 || k <= 0) return [];
  const [corpus, counts] = await Promise.all([source.corpus(), source.noteCounts(terms)]);
  if (corpus.notes <= 0) return [];
  const averages = corpus.lengthSums.map((sum) => Math.max(sum / corpus.notes, 1e-9)) as Fields<number>;
  const query: QueryTerm[] = [];
  terms.forEach((term, i) => {
    if (counts[i] <= 0) return;
    const weight = idf(corpus.notes, counts[i]);
    query.push({ term, idf: weight, bound: weight * (BM25F.k1 + 1) });
  });
  if (query.length === 0) return [];
  const order = [...query].sort((a, b) => b.bound - a.bound || (a.term < b.term ? -1 : 1));
  // remaining[i]: the bounds of terms i.. summed.
  const remaining = order.map(() => 0);
  for (let i = order.length - 1; i >= 0; i--) remaining[i] = order[i].bound + (remaining[i + 1] ?? 0);

  const top = new TopK(k);
  const seen = new Set<number>();
  /** Scores notes known to lack the terms before `from` in `order`. */
  const score = async (keys: number[], from: number) => {
    const fresh = keys.filter((key) => !seen.has(key));
    if (fresh.length === 0) return;
    for (const key of fresh) seen.add(key);
    for (const { key, vector } of await source.vectors(fresh)) {
      const value = top.full ? scoreOrSkip(vector, query, order, from, remaining, averages, top.threshold) : scoreVector(vector, query, averages);
      if (value !== null) top.offer(key, value);
    }
  };
  const cannotReach = (bound: number) => top.full && top.threshold >= bound * SLACK;

  if (order.length > 1) await score(await source.notesWith(order[0].term, [], [order[1].term]), 0);
  for (let i = 0; i < order.length; i++) {
    if (cannotReach(remaining[i])) break;
    const earlier = order.slice(0, i).map((t) => t.term);
    // The later terms a note must hold to have a chance: the largest bounds,
    // until the rest added to term i's own bound cannot reach the k-th score.
    let needed = order.length;
    while (needed > i + 1 && cannotReach(order[i].bound + remaining[needed - 1] - (remaining[order.length] ?? 0))) needed--;
    const anyOf = needed === order.length && !cannotReach(order[i].bound) ? null : order.slice(i + 1, needed).map((t) => t.term);
    if (anyOf !== null && anyOf.length === 0) continue;
    await score(await source.notesWith(order[i].term, earlier, anyOf), i);
  }
  return top.items;
}
