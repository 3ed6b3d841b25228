// A note's own score for a set of index terms: what it would score if it were
// searched for by them, by the same function and sums as every ranking path
// (ranking.ts). The similar-notes lookup measures other notes against it
// (docs/design.md, "Similar notes").
import type { Fields } from "./analyzer.ts";
import { idf, scoreVector, type QueryTerm, type TermSource } from "./ranking.ts";

export async function ownScore(source: Pick<TermSource, "corpus" | "tierCounts" | "vectors">, terms: string[], key: number): Promise<number> {
  const [corpus, perTier, vectors] = await Promise.all([source.corpus(), source.tierCounts(terms), source.vectors([key])]);
  if (corpus.notes <= 0 || vectors.length === 0) return 0;
  const averages = corpus.lengthSums.map((sum) => Math.max(sum / corpus.notes, 1e-9)) as Fields<number>;
  const query: QueryTerm[] = [];
  terms.forEach((term, i) => {
    const holding = perTier[i].reduce((sum, n) => sum + n, 0);
    if (holding > 0) query.push({ term, idf: idf(corpus.notes, holding) });
  });
  return scoreVector(vectors[0].vector, query, averages);
}
