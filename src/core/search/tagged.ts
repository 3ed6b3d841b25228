// Tag words (`tag:NAME` in a query; docs/design.md, "Tag words"): the exact
// top-k among the notes that carry every tag. Engine-neutral: an engine hands
// over the keys of those notes and a ranking that takes a candidate filter.
import { queryTerms, type SearchSource } from "./query.ts";
import { idf, scoreVector, TopK, type QueryTerm, type Ranked, type TermSource } from "./ranking.ts";
import type { Fields } from "./analyzer.ts";

/** Term vectors read per query when the tagged notes are scored one by one. */
const VECTOR_BATCH = 1_000;

export interface TaggedRanking {
  /** Answers the query step's questions (term counts, typo vocabulary). */
  terms: Pick<SearchSource, "tierCounts" | "vocabulary">;
  /** Statistics and term vectors, to score a few tagged notes directly. */
  vectors: TermSource;
  /** The engine's exact ranking over every note holding a term, keeping only notes `accept` takes. */
  rankFiltered(terms: string[], k: number, accept: (key: number) => boolean): Ranked[] | Promise<Ranked[]>;
  /**
   * What scoring one note from its vector costs next to the ranking walking
   * one posting: the tagged notes are scored directly when they are fewer
   * than the notes holding the terms divided by this.
   */
  directCost: number;
}

/**
 * The best `k` notes for the words among `tagged` (the keys of the notes
 * carrying every tag), exactly as the ranking would order them had only those
 * notes held the words; ties with the k-th included. Either every tagged note
 * is scored (few of them), or the engine's ranking runs with a filter: both
 * score the same notes with the same corpus statistics, so both are exact.
 */
export async function rankTagged(ranking: TaggedRanking, words: string[], tagged: number[], k: number): Promise<Ranked[]> {
  if (words.length === 0 || tagged.length === 0 || k <= 0) return [];
  const terms = await queryTerms(ranking.terms, words);
  if (terms.length === 0) return [];
  const holding = (await ranking.terms.tierCounts(terms)).reduce((sum, tiers) => sum + tiers.reduce((a, n) => a + n, 0), 0);
  if (tagged.length * ranking.directCost <= holding) return rankAmong(ranking.vectors, terms, tagged, k);
  const keys = new Set(tagged);
  return ranking.rankFiltered(terms, k, (key) => keys.has(key));
}

/** The best `k` of `keys` by BM25F for the terms (notes holding none are left out), each scored from its vector. */
export async function rankAmong(source: TermSource, terms: string[], keys: number[], k: number): Promise<Ranked[]> {
  const [corpus, perTier] = await Promise.all([source.corpus(), source.tierCounts(terms)]);
  if (corpus.notes <= 0) return [];
  const averages = corpus.lengthSums.map((sum) => Math.max(sum / corpus.notes, 1e-9)) as Fields<number>;
  const query: QueryTerm[] = [];
  terms.forEach((term, i) => {
    const notes = perTier[i].reduce((sum, n) => sum + n, 0);
    if (notes > 0) query.push({ term, idf: idf(corpus.notes, notes) });
  });
  const top = new TopK(k);
  if (query.length === 0) return [];
  for (let at = 0; at < keys.length; at += VECTOR_BATCH) {
    for (const { key, vector } of await source.vectors(keys.slice(at, at + VECTOR_BATCH))) {
      // Every share of a held term is positive (idf > 0), so 0 means the note holds none.
      const score = scoreVector(vector, query, averages);
      if (score > 0) top.offer(key, score);
    }
  }
  return top.items;
}
