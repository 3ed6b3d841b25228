// The similar-notes lookup's ranking (docs/design.md, "Similar notes"), for
// any engine's TermSource: a note's own score for a set of index terms (what
// it scores when searched for by them, by the same function and sums as
// every ranking path, ranking.ts), and the notes sharing one of its rarest
// terms scored against it. The in-memory postings run the same through
// MaxScore (maxscore.ts: `floor`, `candidateTerms`, `maxCandidates`).
import type { Fields } from "./analyzer.ts";
import { idf, scoreVector, TopK, type QueryTerm, type Ranked, type TermSource } from "./ranking.ts";

type StatsSource = Pick<TermSource, "corpus" | "tierCounts" | "vectors">;

async function queryOf(source: StatsSource, terms: string[]): Promise<{ query: (QueryTerm & { holding: number })[]; averages: Fields<number> } | null> {
  const [corpus, perTier] = await Promise.all([source.corpus(), source.tierCounts(terms)]);
  if (corpus.notes <= 0) return null;
  const averages = corpus.lengthSums.map((sum) => Math.max(sum / corpus.notes, 1e-9)) as Fields<number>;
  const query: (QueryTerm & { holding: number })[] = [];
  terms.forEach((term, i) => {
    const holding = perTier[i].reduce((sum, n) => sum + n, 0);
    if (holding > 0) query.push({ term, idf: idf(corpus.notes, holding), holding });
  });
  return { query, averages };
}

/** What the similar-notes lookup asks an engine (Store.similarNotes). */
export interface SimilarQuery {
  /** Index terms as given (no typo correction). */
  terms: string[];
  /** Notes listed at most (more on ties). */
  limit: number;
  /** The share of the new note's own score a note must reach. */
  minShare: number;
  /** Candidates come from the notes holding one of this many of its rarest shared terms. */
  candidateTerms: number;
  /** At most this many candidates are scored (the first found, in commit order). */
  maxCandidates: number;
}

/**
 * The `n` rarest of `terms` that some other note holds too (held by more
 * than one note, the new one included): where the lookup takes candidates
 * from. Rarest: fewest notes; ties in query order.
 */
export function rarestShared(terms: string[], holding: (term: string) => number, n: number): Set<string> {
  const shared = terms.map((term) => ({ term, notes: holding(term) })).filter((t) => t.notes > 1);
  return new Set(shared.sort((a, b) => a.notes - b.notes).slice(0, n).map((t) => t.term));
}

export async function ownScore(source: StatsSource, terms: string[], key: number): Promise<number> {
  const [stats, vectors] = await Promise.all([queryOf(source, terms), source.vectors([key])]);
  if (stats === null || vectors.length === 0) return 0;
  return scoreVector(vectors[0].vector, stats.query, stats.averages);
}

/**
 * The best `k` notes (ties kept) scoring at least `floor` for `terms`, among
 * the first `maxCandidates` notes holding one of the `candidateTerms` rarest
 * of them that some other note holds too (a term only the new note holds
 * yields no candidate).
 */
export async function rankSimilar(source: TermSource, terms: string[], k: number, floor: number, candidateTerms: number, maxCandidates: number): Promise<Ranked[]> {
  const stats = await queryOf(source, terms);
  if (stats === null || stats.query.length === 0) return [];
  const held = new Map(stats.query.map((q) => [q.term, q.holding]));
  const rarest = rarestShared(terms, (term) => held.get(term) ?? 0, candidateTerms);
  const keys = new Set<number>();
  const cap = Number.isFinite(maxCandidates) ? maxCandidates : -1;
  for (const term of rarest) for (const key of await source.notesWith({ term, tiers: null }, [], null, cap)) keys.add(key);
  const candidates = [...keys].sort((a, b) => a - b).slice(0, Number.isFinite(maxCandidates) ? maxCandidates : undefined);
  const top = new TopK(k);
  for (const { key, vector } of await source.vectors(candidates)) {
    const score = scoreVector(vector, stats.query, stats.averages);
    if (score >= floor) top.offer(key, score);
  }
  return top.items;
}
