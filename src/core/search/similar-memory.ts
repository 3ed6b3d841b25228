// The similar-notes lookup (own-score.ts) over the in-memory postings
// (memory-index.ts): the same candidate rule and scores as the database
// index's path, read from the postings. Not through rankInMemory
// (maxscore.ts): that ranks with the index's own statistics, and the lookup
// counts the new note in before it is stored; with at most `maxCandidates`
// candidates and a few terms, scoring them term at a time is already cheap.
import { PostingCursor, type MemoryIndex } from "./memory-index.ts";
import { ownScore, rarestShared, similarStats, type SimilarQuery, type SimilarRanking } from "./own-score.ts";
import { saturate, TopK, weightedFrequencyOf } from "./ranking.ts";

/**
 * The first `max` live notes (by ordinal, which follows commit order) holding
 * one of `terms`, ascending.
 */
function candidatesOf(index: MemoryIndex, terms: Iterable<string>, max: number): Int32Array {
  const live = index.liveFlags;
  const found = new Set<number>();
  for (const term of terms) {
    const list = index.postings(term);
    if (!list) continue;
    // The union's first `max` are among each term's first `max`.
    const cursor = new PostingCursor(list);
    for (let taken = 0; taken < max && cursor.next(); ) {
      if (live[cursor.ordinal] === 1) {
        found.add(cursor.ordinal);
        taken++;
      }
    }
  }
  const sorted = Int32Array.from(found).sort();
  return Number.isFinite(max) && sorted.length > max ? sorted.subarray(0, max) : sorted;
}

/** The lookup on the in-memory postings: what rankSimilar (own-score.ts) answers on the database index. */
export function rankSimilarInMemory(index: MemoryIndex, { terms, vector, limit, minShare, candidateTerms, maxCandidates }: SimilarQuery): SimilarRanking {
  const stats = similarStats({ notes: index.notes, lengthSums: index.lengthSums }, (term) => index.notesWith(term), terms, vector);
  const own = ownScore(stats, vector);
  if (!(own > 0) || limit <= 0) return { own, ranked: [] };
  const floor = minShare * own;
  const candidates = candidatesOf(index, rarestShared(stats.query, candidateTerms), maxCandidates);
  if (candidates.length === 0) return { own, ranked: [] };
  // Term at a time over the candidates, summed in query-term order (every scorer's float); terms only the new note holds add nothing.
  const scores = new Float64Array(candidates.length);
  const lengths = index.lengths;
  for (const { term, idf, holding } of stats.query) {
    const list = holding > 1 ? index.postings(term) : undefined;
    if (!list) continue;
    const cursor = new PostingCursor(list);
    for (let c = 0; c < candidates.length; c++) {
      const ordinal = candidates[c];
      if (!cursor.seek(ordinal)) continue;
      const o = 3 * ordinal;
      scores[c] += idf * saturate(weightedFrequencyOf(cursor.title, cursor.tags, cursor.body, lengths[o], lengths[o + 1], lengths[o + 2], stats.averages));
    }
  }
  const top = new TopK(limit);
  for (let c = 0; c < candidates.length; c++) if (scores[c] >= floor) top.offer(index.keyOf(candidates[c]), scores[c]);
  return { own, ranked: top.items };
}
