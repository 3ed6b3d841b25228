// What a search, a tagged search and a similar-notes lookup do over the
// in-memory postings (src/core/search/memory-index.ts): the same whether the
// postings live on the thread that serves requests (postings.ts) or on the
// search thread (search-worker.ts). Term counts, corpus sizes and the typo
// vocabulary all come from the postings, so every path of a query scores with
// the same statistics.
import { rankInMemory } from "../../core/search/maxscore.ts";
import type { MemoryIndex } from "../../core/search/memory-index.ts";
import type { SimilarQuery, SimilarRanking } from "../../core/search/own-score.ts";
import { queryTerms } from "../../core/search/query.ts";
import type { Ranked } from "../../core/search/ranking.ts";
import { rankSimilarInMemory } from "../../core/search/similar-memory.ts";
import { MEMORY_DIRECT_COST, rankTagged } from "../../core/search/tagged.ts";

/** Stored term vectors by key (search_vectors), for scoring a few tagged notes directly. */
export interface VectorReader {
  vectors(keys: number[]): { key: number; vector: string }[];
}

/**
 * Term counts and the typo vocabulary from the postings: the terms and counts
 * of the notes the postings hold, which the ranking's statistics are too, and
 * faster than the table's range query (docs/benchmarks.md, "Issue 18, second round").
 */
function postingsTerms(memory: MemoryIndex) {
  return {
    tierCounts: (terms: string[]) => terms.map((term) => [memory.notesWith(term)]),
    vocabulary: (from: string, to: string) => memory.vocabulary(from, to),
  };
}

/** The best `limit` notes for the words (ties with the last kept). */
export async function searchPostings(memory: MemoryIndex, words: string[], limit: number): Promise<Ranked[]> {
  if (words.length === 0 || limit <= 0) return [];
  return rankInMemory(memory, await queryTerms(postingsTerms(memory), words), limit);
}

/** The words' best notes among `tagged` (the keys of the notes carrying every tag of the query: core/search/tagged.ts). */
export function searchTaggedPostings(memory: MemoryIndex, words: string[], tagged: number[], limit: number, stored: VectorReader): Promise<Ranked[]> {
  const terms = postingsTerms(memory);
  return rankTagged(
    {
      terms,
      vectors: {
        corpus: () => ({ notes: memory.notes, lengthSums: [memory.lengthSums[0], memory.lengthSums[1], memory.lengthSums[2]] }),
        tierCounts: terms.tierCounts,
        vectors: (keys) => stored.vectors(keys),
      },
      rankFiltered: (queryTerms, k, accept) => rankInMemory(memory, queryTerms, k, (ordinal) => accept(memory.keyOf(ordinal))),
      directCost: MEMORY_DIRECT_COST,
    },
    words,
    tagged,
    limit,
  );
}

/** The similar-notes lookup (core/search/own-score.ts has the rule). */
export function similarInPostings(memory: MemoryIndex, query: SimilarQuery): SimilarRanking {
  return rankSimilarInMemory(memory, query);
}
