// Exact top-k ranking with dynamic pruning (MaxScore, Turtle & Flood 1995,
// over impact tiers in the manner of block-max indexes), over any engine that
// can list the notes holding a term at given tiers and read a note's term
// vector (the FTS5 path). The algorithm and why it is exact: docs/search-index.md.
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
  b: [0.75, 0.75, 0.9] as Fields<number>,
  weights: [3, 1, 1] as Fields<number>,
};

/**
 * Impact tiers. A note's weighted term frequency for a term, computed with
 * these fixed field lengths instead of the corpus averages, puts the term in
 * one of TIERS tiers (below 0.5, 1, 2, … 64, or above: doubling, so that even
 * a term in nearly every note has a thin top tier). With the averages of the day,
 * the true weighted frequency is at most the tier's limit times
 * max(1, average / reference) over the fields, so a tier bounds what the term
 * can add to the note's score whatever the corpus has become since.
 */
export const TIER_LIMITS = [0.5, 1, 2, 4, 8, 16, 32, 64];
export const TIERS = TIER_LIMITS.length + 1;
export const REFERENCE_LENGTHS: Fields<number> = [10, 4, 150];
/**
 * The length normalisation and field weights tiers are computed with. Fixed,
 * not BM25F's: stored tiers must not depend on the ranking's parameters, which
 * may change between releases; tierDrift() covers the difference.
 */
const TIER_B: Fields<number> = [0.75, 0.75, 0.75];
const TIER_WEIGHTS: Fields<number> = [3, 1, 1];

/**
 * A term in at most this many notes is taken whole (all tiers in one step),
 * and a slice this small is read without filters: asking the index for a
 * filtered set costs more than scoring a few hundred notes, which are mostly
 * dismissed after one lookup anyway.
 */
export const WHOLE_TERM_NOTES = 256;

/**
 * A term held by more than this share of all notes is not used to exclude the
 * notes already read (FTS5 would walk its whole doclist to do so); such notes
 * are skipped by key instead, or scored again and dismissed.
 */
export const EXCLUDE_SHARE = 0.1;

/** The seed (see rankTopK): pairs of the SEED_TERMS rarest terms, SEED_NOTES notes per pair. */
export const SEED_TERMS = 2;
export const SEED_NOTES = 64;

/**
 * A step filters its slice by the other terms a note must hold only when
 * they are this few: an FTS5 OR over more terms costs more than dismissing
 * the slice's extra notes one lookup each.
 */
export const FILTER_TERMS = 99;

/**
 * How many slices a query is cut into, over all its terms: a long query's
 * terms are taken whole or in few slices (each slice is one index query),
 * a short query's in every tier.
 */
export const SLICES = 12;

export interface CorpusStats {
  notes: number;
  /** Terms in each field, summed over all notes. */
  lengthSums: Fields<number>;
}

/** A term restricted to some of its tiers (all of them when `tiers` is null). */
export interface TermAt {
  term: string;
  tiers: number[] | null;
}

/** What an engine provides to rank: term statistics, postings by tier and term vectors. */
export interface TermSource {
  corpus(): CorpusStats | Promise<CorpusStats>;
  /** How many notes hold each term in each tier (index = tier), in the order asked. */
  tierCounts(terms: string[]): number[][] | Promise<number[][]>;
  /** Keys of the notes holding `term` at one of `tiers`, none of `without`, and (unless null) one of `anyOf`; at most `limit` of them when given. */
  notesWith(term: TermAt, without: TermAt[], anyOf: TermAt[] | null, limit?: number): number[] | Promise<number[]>;
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

export const saturate = (weighted: number) => (weighted * (BM25F.k1 + 1)) / (weighted + BM25F.k1);

/**
 * The fields' term frequencies, each normalised by its field's length and
 * weighted, summed: BM25F's one frequency before saturation. Every scorer
 * (vectors, in-memory postings, tier bounds) calls this one, so the same note
 * gets the same float whichever path scored it.
 */
export function weightedFrequencyOf(
  title: number,
  tags: number,
  body: number,
  titleLength: number,
  tagsLength: number,
  bodyLength: number,
  averages: Fields<number>,
): number {
  const { b, weights } = BM25F;
  let weighted = 0;
  if (title > 0) weighted += (weights[0] * title) / (1 - b[0] + (b[0] * titleLength) / averages[0]);
  if (tags > 0) weighted += (weights[1] * tags) / (1 - b[1] + (b[1] * tagsLength) / averages[1]);
  if (body > 0) weighted += (weights[2] * body) / (1 - b[2] + (b[2] * bodyLength) / averages[2]);
  return weighted;
}

const weightedFrequency = (tf: Fields<number>, lengths: Fields<number>, averages: Fields<number>) =>
  weightedFrequencyOf(tf[0], tf[1], tf[2], lengths[0], lengths[1], lengths[2], averages);

/** The impact tier of a term in a note (see TIER_LIMITS). */
export function tierOf(tf: Fields<number>, lengths: Fields<number>): number {
  let weighted = 0;
  for (let f = 0; f < 3; f++) {
    if (tf[f] > 0) weighted += (TIER_WEIGHTS[f] * tf[f]) / (1 - TIER_B[f] + (TIER_B[f] * lengths[f]) / REFERENCE_LENGTHS[f]);
  }
  let tier = 0;
  while (tier < TIER_LIMITS.length && weighted >= TIER_LIMITS[tier]) tier++;
  return tier;
}

/**
 * How much a note's weighted frequency under the ranking (BM25F's b and
 * weights, today's field averages) can exceed the one its tier was computed
 * with (TIER_B, TIER_WEIGHTS, REFERENCE_LENGTHS): per field the ratio of the
 * two normalised frequencies is monotonic in the field's length, so its
 * largest value is at length 0 or at unbounded length; the largest over the
 * fields bounds the sum.
 */
export function tierDrift(averages: Fields<number>): number {
  let drift = 0;
  for (let f = 0; f < 3; f++) {
    const b = BM25F.b[f];
    const atZero = b >= 1 ? Infinity : (1 - TIER_B[f]) / (1 - b);
    const atInfinity = b <= 0 ? Infinity : (TIER_B[f] * averages[f]) / (b * REFERENCE_LENGTHS[f]);
    drift = Math.max(drift, (BM25F.weights[f] / TIER_WEIGHTS[f]) * Math.max(atZero, atInfinity));
  }
  return drift;
}

export interface QueryTerm {
  term: string;
  idf: number;
}

/** A note's BM25F score for the query terms, the shares summed in query order (every scorer then gets the same float). */
export function scoreVector(vector: string, terms: QueryTerm[], averages: Fields<number>): number {
  const lengths = readLengths(vector);
  let score = 0;
  for (const term of terms) {
    const tf = termCounts(vector, term.term);
    if (tf !== null) score += term.idf * saturate(weightedFrequency(tf, lengths, averages));
  }
  return score;
}

/** Bounds are compared with this slack so that float rounding can never prune a note that could tie. */
export const SLACK = 1 + 1e-9;

/**
 * The best `k` scores seen, plus every note tied with the k-th: ties are
 * settled later by the documented tie order, so none may be cut here.
 */
export class TopK {
  readonly items: Ranked[] = [];
  constructor(private readonly k: number) {}

  get full(): boolean {
    return this.items.length >= this.k;
  }

  /** The score a note must reach to enter (ties enter too). */
  get threshold(): number {
    return this.full ? this.items[this.k - 1].score : -Infinity;
  }

  /** Whether a note bounded by `bound` (never reached) cannot enter. */
  excludes(bound: number): boolean {
    return this.full && this.threshold >= bound * SLACK;
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

/** Some tiers of one query term (every tier when `tiers` is null), with the most they can add to a score. */
interface Slice {
  term: number;
  tiers: number[] | null;
  bound: number;
}

/**
 * The top `k` notes by BM25F among all notes holding any of `terms` (index
 * terms, distinct), exactly as if every such note were scored; more than `k`
 * when notes tie with the k-th.
 *
 * Each (term, tier) slice has a bound; a note holds at most one slice per
 * term. Slices are taken largest bound first; step s scores the notes holding
 * slice s and none of the slices already taken. Such a note scores less than
 * s's bound plus, for each other term it holds, that term's largest bound
 * among the slices not yet taken. So a step asks only for notes that also
 * hold one of the other terms whose bounds could lift them past the current
 * k-th score (all of its notes when s alone could), and once the untaken
 * bounds of all terms together cannot reach the k-th score, no unscored note
 * can enter and the search stops.
 *
 * With `accept`, notes it refuses are never scored (tag words): the k-th
 * score is that of accepted notes, so every bound still holds.
 */
export async function rankTopK(source: TermSource, terms: string[], k: number, accept?: (key: number) => boolean): Promise<Ranked[]> {
  if (terms.length === 0 || k <= 0) return [];
  const [corpus, perTier] = await Promise.all([source.corpus(), source.tierCounts(terms)]);
  if (corpus.notes <= 0) return [];
  const averages = corpus.lengthSums.map((sum) => Math.max(sum / corpus.notes, 1e-9)) as Fields<number>;
  const query: QueryTerm[] = [];
  const tierNotes: number[][] = [];
  const holding: number[] = [];
  terms.forEach((term, i) => {
    const notes = perTier[i].reduce((sum, n) => sum + n, 0);
    if (notes <= 0) return;
    query.push({ term, idf: idf(corpus.notes, notes) });
    tierNotes.push(perTier[i]);
    holding.push(notes);
  });
  if (query.length === 0) return [];

  const drift = tierDrift(averages);
  const slices: Slice[] = [];
  const perTerm = Math.max(1, Math.floor(SLICES / query.length));
  query.forEach((q, term) => {
    const tiers = tierNotes[term].flatMap((notes, tier) => (notes > 0 ? [tier] : [])).reverse();
    if (holding[term] <= WHOLE_TERM_NOTES || perTerm === 1) {
      slices.push({ term, tiers: null, bound: q.idf * (BM25F.k1 + 1) });
      return;
    }
    const bound = (tier: number) => q.idf * (tier < TIER_LIMITS.length && Number.isFinite(drift) ? saturate(TIER_LIMITS[tier] * drift) : BM25F.k1 + 1);
    // The top tiers (thin, large bounds) one by one; the rest together.
    tiers.slice(0, perTerm - 1).forEach((tier) => slices.push({ term, tiers: [tier], bound: bound(tier) }));
    const rest = tiers.slice(perTerm - 1);
    if (rest.length > 0) slices.push({ term, tiers: rest, bound: bound(rest[0]) });
  });
  slices.sort((a, b) => b.bound - a.bound || a.term - b.term || (b.tiers?.[0] ?? TIERS) - (a.tiers?.[0] ?? TIERS));
  // Per term: its tiers already taken (null: all of them), and the largest bound among the rest.
  const taken: (number[] | null)[] = query.map(() => []);
  const untaken = query.map((_, term) => Math.max(...slices.filter((s) => s.term === term).map((s) => s.bound)));
  const at = (term: number, tiers: number[] | null): TermAt => ({ term: query[term].term, tiers });

  const top = new TopK(k);
  const seen = new Set<number>();
  const score = async (keys: number[], bounds: number[]) => {
    let fresh = keys.filter((key) => !seen.has(key));
    for (const key of fresh) seen.add(key);
    if (accept !== undefined) fresh = fresh.filter(accept);
    if (fresh.length === 0) return;
    const order = query.map((_, i) => i).filter((i) => bounds[i] > 0).sort((a, b) => bounds[b] - bounds[a]);
    for (const { key, vector } of await source.vectors(fresh)) {
      const value = top.full ? scoreOrSkip(vector, query, bounds, order, averages, top.threshold) : scoreVector(vector, query, averages);
      if (value !== null) top.offer(key, value);
    }
  };

  // The seed: notes holding two of the rarest terms at once (each pair of the
  // SEED_TERMS rarest), a few per pair: likely among the best, they raise the k-th
  // score before the first step, so that whole slices are dismissed unread.
  const rarest = query.map((_, term) => term).sort((x, y) => query[y].idf - query[x].idf).slice(0, SEED_TERMS);
  for (let i = 0; i < rarest.length; i++) {
    for (let j = i + 1; j < rarest.length; j++) {
      await score(await source.notesWith(at(rarest[i], null), [], [at(rarest[j], null)], SEED_NOTES), [...untaken]);
    }
  }
  for (const [position, slice] of slices.entries()) {
    const total = untaken.reduce((sum, bound) => sum + bound, 0);
    if (top.excludes(total)) break;
    // Other terms by their untaken bound, largest first; those at the end
    // whose bounds together cannot lift a note past the k-th score need not be held.
    // The other terms' untaken slices a note must hold one of to have a chance:
    // the largest, until a note holding none of them (so, of each other term,
    // at most its best slice left out) could not reach the k-th score.
    const later = slices.slice(position + 1).filter((s) => s.term !== slice.term);
    const best = [...untaken];
    best[slice.term] = 0;
    let rest = best.reduce((sum, bound) => sum + bound, 0);
    const needed: Slice[] = [];
    for (const other of later) {
      if (top.excludes(slice.bound + rest)) break;
      needed.push(other);
      const next = later.find((s) => s.term === other.term && !needed.includes(s));
      rest += (next?.bound ?? 0) - best[other.term];
      best[other.term] = next?.bound ?? 0;
    }
    const aloneCanEnter = !top.excludes(slice.bound + rest);
    const without = query.flatMap((_, term) => {
      const tiers = taken[term];
      if (term === slice.term || holding[term] > EXCLUDE_SHARE * corpus.notes) return [];
      return tiers === null || tiers.length > 0 ? [at(term, tiers)] : [];
    });
    const small = (slice.tiers ?? []).reduce((sum, tier) => sum + tierNotes[slice.term][tier], slice.tiers ? 0 : Infinity) <= WHOLE_TERM_NOTES || holding[slice.term] <= WHOLE_TERM_NOTES;
    const filter = groupByTerm(needed, query.length);
    const anyOf = aloneCanEnter || small || filter.length > FILTER_TERMS ? null : filter.map(([term, tiers]) => at(term, tiers));
    if (aloneCanEnter || filter.length > 0) {
      const bounds = query.map((_, term) => (term === slice.term ? slice.bound : untaken[term]));
      await score(await source.notesWith(at(slice.term, slice.tiers), without, anyOf), bounds);
    }
    const tiers = taken[slice.term];
    if (slice.tiers === null || tiers === null) taken[slice.term] = null;
    else tiers.push(...slice.tiers);
    const left = slices.slice(position + 1).filter((s) => s.term === slice.term);
    untaken[slice.term] = left.length > 0 ? Math.max(...left.map((s) => s.bound)) : 0;
  }
  return top.items;
}

/** Slices grouped by term, as (term, tiers) pairs; null tiers when a term's whole slice is among them. */
function groupByTerm(list: Slice[], terms: number): [number, number[] | null][] {
  const byTerm = new Map<number, number[] | null>();
  for (const slice of list) {
    const tiers = byTerm.get(slice.term);
    if (slice.tiers === null || tiers === null) byTerm.set(slice.term, null);
    else byTerm.set(slice.term, [...(tiers ?? []), ...slice.tiers]);
  }
  void terms;
  return [...byTerm.entries()];
}

/**
 * A note's score, or null as soon as it cannot reach `threshold`: terms are
 * looked up largest bound first (`order`: the terms the note may hold), and once the shares found plus the bounds
 * of the terms not yet looked up fall short, the rest is not read.
 */
function scoreOrSkip(
  vector: string,
  query: QueryTerm[],
  bounds: number[],
  order: number[],
  averages: Fields<number>,
  threshold: number,
): number | null {
  const lengths = readLengths(vector);
  let rest = 0;
  for (const i of order) rest += bounds[i];
  const shares = new Array<number>(query.length).fill(0);
  let partial = 0;
  for (const i of order) {
    if ((partial + rest) * SLACK < threshold) return null;
    rest -= bounds[i];
    const tf = termCounts(vector, query[i].term);
    if (tf === null) continue;
    shares[i] = query[i].idf * saturate(weightedFrequency(tf, lengths, averages));
    partial += shares[i];
  }
  let score = 0;
  for (const share of shares) score += share;
  return score;
}
