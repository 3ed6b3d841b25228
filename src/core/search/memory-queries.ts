// A search and a tagged search over the in-memory postings (memory-index.ts),
// for every engine and every thread that holds them: PostgreSQL's replicas
// (src/store/postgres/search.ts), and SQLite's serving thread or search thread
// (src/store/sqlite/postings.ts, search-worker.ts). Term counts, corpus sizes
// and the typo vocabulary all come from the postings, so every path of a
// query scores with the same statistics.
import { rankInMemory } from "./maxscore.ts";
import type { MemoryIndex } from "./memory-index.ts";
import { queryTerms } from "./query.ts";
import type { Ranked, TermSource } from "./ranking.ts";
import { MEMORY_DIRECT_COST, rankTagged } from "./tagged.ts";

/** Stored term vectors by key (the engine's table), for scoring a few tagged notes directly. */
export type VectorReader = Pick<TermSource, "vectors">;

/**
 * Term counts and the typo vocabulary from the postings: the terms and counts
 * of the notes the postings hold, which the ranking's statistics are too, and
 * faster than the engine's tables (docs/benchmarks.md, "Issue 18, second round").
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

/** The words' best notes among `tagged` (the keys of the notes carrying every tag of the query: tagged.ts). */
export function searchTaggedPostings(memory: MemoryIndex, words: string[], tagged: number[], limit: number, stored: VectorReader): Promise<Ranked[]> {
  const terms = postingsTerms(memory);
  return rankTagged(
    {
      terms,
      vectors: {
        corpus: () => ({ notes: memory.notes, lengthSums: memory.lengthSums }),
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
