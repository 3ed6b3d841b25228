// The similar-notes lookup (own-score.ts: the rule) over the in-memory
// postings (memory-index.ts): the same holders, pool and scores as the
// database index's path, read from the postings. Not through rankInMemory
// (maxscore.ts): that ranks with the index's own statistics, and the lookup
// counts the new note in before it is stored.
import { BLOCK_SHIFT, PostingCursor, type MemoryIndex, type TermPostings } from "./memory-index.ts";
import { ownScore, poolOf, rarestShared, reachPerTerm, similarStats, type SimilarQuery, type SimilarRanking } from "./own-score.ts";
import { saturate, TopK, weightedFrequencyOf } from "./ranking.ts";

/**
 * A cursor just before the newest `take` live postings of `list`: from the
 * block holding the take-th posting from the end when every posting is live
 * (skipping the ones before it), else from further back, counting the live
 * ones. Returns the cursor and how many live postings to pass first.
 */
function newestLive(list: TermPostings, live: Uint8Array, take: number): [cursor: PostingCursor, skip: number] {
  const at = (block: number) => {
    const cursor = new PostingCursor(list);
    if (block > 0) cursor.toBlock(block);
    return cursor;
  };
  const fromEnd = (block: number) => list.size - (block << BLOCK_SHIFT);
  let block = Math.max(0, (list.size - take) >> BLOCK_SHIFT);
  // Postings of removed notes stay until a compaction: then count the live ones, further back when short.
  if (list.notes === list.size) return [at(block), fromEnd(block) - take];
  for (;;) {
    const cursor = at(block);
    let count = 0;
    while (cursor.next()) if (live[cursor.ordinal] === 1) count++;
    if (count >= take || block === 0) return [at(block), Math.max(0, count - take)];
    block = Math.max(0, block - Math.max(1, (take - count) >> BLOCK_SHIFT));
  }
}

/**
 * A term's postings are walked whole for the pool when they are at most this
 * many per candidate, else each candidate is leapt to: a leap decodes about
 * half a block of BLOCK postings.
 */
const WALK_PER_CANDIDATE = 48;

/** The lookup on the in-memory postings: what rankSimilar (own-score.ts) answers on the database index. */
export function rankSimilarInMemory(index: MemoryIndex, { terms, vector, limit, minShare, reach, pool }: SimilarQuery): SimilarRanking {
  const stats = similarStats({ notes: index.notes, lengthSums: index.lengthSums }, (term) => index.notesWith(term), terms, vector);
  const own = ownScore(stats, vector);
  if (!(own > 0) || limit <= 0) return { own, ranked: [] };
  const floor = minShare * own;
  // Step 1 on ranking's scratch (zero between uses, and left so): each holder reached gains its score for the term.
  const { accumulators, touched } = index.scratch();
  let reached = 0;
  const rarest = rarestShared(stats.query);
  const takes = reachPerTerm(rarest, reach);
  const live = index.liveFlags;
  const lengths = index.lengths;
  for (const [i, { term, idf }] of rarest.entries()) {
    const list = takes[i] > 0 ? index.postings(term) : undefined;
    if (!list) continue;
    const [cursor, skip] = newestLive(list, live, takes[i]);
    for (let passed = 0; cursor.next(); ) {
      const ordinal = cursor.ordinal;
      if (live[ordinal] !== 1 || passed++ < skip) continue;
      if (accumulators[ordinal] === 0) touched[reached++] = ordinal;
      const o = 3 * ordinal;
      accumulators[ordinal] += idf * saturate(weightedFrequencyOf(cursor.title, cursor.tags, cursor.body, lengths[o], lengths[o + 1], lengths[o + 2], stats.averages));
    }
  }
  const candidates = poolOf(touched, reached, accumulators, pool, (ordinal) => index.keyOf(ordinal));
  for (let t = 0; t < reached; t++) accumulators[touched[t]] = 0;
  if (candidates.length === 0) return { own, ranked: [] };
  // Step 2: the pool scored exactly, term at a time, summed in query-term order (every scorer's float); terms only the new note holds add nothing.
  const scores = new Float64Array(candidates.length);
  for (const { term, idf, others } of stats.query) {
    const list = others > 0 ? index.postings(term) : undefined;
    if (!list) continue;
    const cursor = new PostingCursor(list);
    const add = (c: number) => {
      const o = 3 * candidates[c];
      scores[c] += idf * saturate(weightedFrequencyOf(cursor.title, cursor.tags, cursor.body, lengths[o], lengths[o + 1], lengths[o + 2], stats.averages));
    };
    if (list.size <= WALK_PER_CANDIDATE * candidates.length) {
      // A short list (the rarer terms): walked once beside the ascending candidates.
      for (let c = 0; c < candidates.length && cursor.next(); ) {
        while (c < candidates.length && candidates[c] < cursor.ordinal) c++;
        if (c < candidates.length && candidates[c] === cursor.ordinal) add(c++);
      }
    } else for (let c = 0; c < candidates.length; c++) if (cursor.leap(candidates[c])) add(c);
  }
  const top = new TopK(limit);
  for (let c = 0; c < candidates.length; c++) if (scores[c] >= floor) top.offer(index.keyOf(candidates[c]), scores[c]);
  return { own, ranked: top.items };
}
