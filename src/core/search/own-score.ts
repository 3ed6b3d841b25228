// The similar-notes lookup's ranking (docs/design.md, "Similar notes"), for
// any engine's TermSource. It runs before the new note is stored (so that its
// answer can be stored with the write, for an Idempotency-Key's replay), with
// the corpus counted as if the note were stored: one more note, its field
// lengths, one more holder of each of its terms. So the new note's own score
// (what it would score when searched for by its terms) and every other
// note's score are those the ranking gives once it is stored, by the same
// function and sums as every ranking path (ranking.ts), and the note itself
// is never a candidate. The in-memory postings run the same rule in
// similar-memory.ts.
import type { Fields } from "./analyzer.ts";
import { idf, scoreVector, TopK, type CorpusStats, type QueryTerm, type Ranked, type TermSource } from "./ranking.ts";
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
  /** Candidates come from the notes holding one of this many of its rarest shared terms. */
  candidateTerms: number;
  /** At most this many candidates are scored (the first found, in commit order). */
  maxCandidates: number;
}

/** The lookup's statistics, the new note counted in: each term held (`holding`, the new note included) and its weight. */
export interface SimilarStats {
  query: (QueryTerm & { holding: number })[];
  averages: Fields<number>;
}

/** The what-if statistics: `corpus` and `othersHolding` (notes holding a term) without the new note, plus it. */
export function similarStats(corpus: CorpusStats, othersHolding: (term: string) => number, terms: string[], vector: string): SimilarStats {
  const notes = corpus.notes + 1;
  const lengths = readLengths(vector);
  const averages = corpus.lengthSums.map((sum, f) => Math.max((sum + lengths[f]) / notes, 1e-9)) as Fields<number>;
  const query: SimilarStats["query"] = [];
  for (const term of terms) {
    const holding = othersHolding(term) + (termCounts(vector, term) === null ? 0 : 1);
    if (holding > 0) query.push({ term, idf: idf(notes, holding), holding });
  }
  return { query, averages };
}

/** The new note's own score for the lookup's terms. */
export const ownScore = (stats: SimilarStats, vector: string): number => scoreVector(vector, stats.query, stats.averages);

/**
 * The `n` rarest of the query's terms that some other note holds too (held
 * by more than one note, the new one included): where the lookup takes
 * candidates from. Rarest: fewest notes; ties in query order.
 */
export function rarestShared(query: SimilarStats["query"], n: number): Set<string> {
  const shared = query.filter((q) => q.holding > 1);
  return new Set([...shared].sort((a, b) => a.holding - b.holding).slice(0, n).map((q) => q.term));
}

/** What an engine's lookup finds: the new note's own score and the other notes reaching the floor, best `limit` (ties kept). */
export interface SimilarRanking {
  own: number;
  ranked: Ranked[];
}

/**
 * The best `limit` notes (ties kept) scoring at least `minShare` of the new
 * note's own score, among the first `maxCandidates` notes (by key) holding
 * one of the `candidateTerms` rarest terms that some other note holds (a term
 * only the new note holds yields no candidate), on the database index's path.
 */
export async function rankSimilar(source: TermSource, { terms, vector, limit, minShare, candidateTerms, maxCandidates }: SimilarQuery): Promise<SimilarRanking> {
  const [corpus, perTier] = await Promise.all([source.corpus(), source.tierCounts(terms)]);
  const held = new Map(terms.map((term, i) => [term, perTier[i].reduce((sum, n) => sum + n, 0)]));
  const stats = similarStats(corpus, (term) => held.get(term) ?? 0, terms, vector);
  const own = ownScore(stats, vector);
  if (!(own > 0)) return { own, ranked: [] };
  const floor = minShare * own;
  const keys = new Set<number>();
  const cap = Number.isFinite(maxCandidates) ? maxCandidates : -1;
  for (const term of rarestShared(stats.query, candidateTerms)) for (const key of await source.notesWith({ term, tiers: null }, [], null, cap)) keys.add(key);
  const candidates = [...keys].sort((a, b) => a - b).slice(0, Number.isFinite(maxCandidates) ? maxCandidates : undefined);
  const top = new TopK(limit);
  for (const { key, vector: theirs } of await source.vectors(candidates)) {
    const score = scoreVector(theirs, stats.query, stats.averages);
    if (score >= floor) top.offer(key, score);
  }
  return { own, ranked: top.items };
}
