// The similar-notes lookup (own-score.ts: the rule) over the in-memory
// postings (memory-index.ts): the same holders, pool and scores as the
// database index's path, read from the postings. Not through rankInMemory
// (maxscore.ts): that ranks with the index's own statistics, and the lookup
// counts the new note in before it is stored.
import { BLOCK_SHIFT, PostingCursor, type MemoryIndex, type TermPostings } from "./memory-index.ts";
import { BLOCK, readFieldCounts } from "./term-postings.ts";
import type { Fields } from "./analyzer.ts";
import { ownScore, poolOf, rarestShared, reachPerTerm, similarStats, type SimilarQuery, type SimilarRanking, type SimilarStats, type SimilarTerm } from "./own-score.ts";
import { BM25F, saturate, SLACK, TopK, weightedFrequencyOf } from "./ranking.ts";

/**
 * What step 1 read, for step 2: each holder reached, term by term (ascending
 * ordinals within a term), with the share it gained. A pool note at or past
 * the first holder a term reached holds the term only if it was reached by
 * it, so its share for that term is read here instead of from the postings
 * again: the same float, as it is the same expression on the same counts.
 */
class ReachLog {
  ordinals: Int32Array;
  shares: Float64Array;
  size = 0;
  /** A posting's counts when it has more than the body's (scratch: readFieldCounts). */
  readonly fields = new Int32Array(3);
  /** One block's live postings and their shares, read ahead of taking them newest first (scratch: reachNewestLive). */
  readonly blockOrdinals = new Int32Array(BLOCK);
  readonly blockShares = new Float64Array(BLOCK);

  constructor(capacity: number) {
    this.ordinals = new Int32Array(capacity);
    this.shares = new Float64Array(capacity);
  }

  static of(index: MemoryIndex, capacity: number): ReachLog {
    const kept = index.similarScratch as ReachLog | null;
    const log = kept && kept.ordinals.length >= capacity ? kept : new ReachLog(capacity);
    index.similarScratch = log;
    log.size = 0;
    return log;
  }
}

/**
 * Step 1 for a list whose postings are all live (no removed note's left):
 * its newest `take` postings, read on from the block holding the first of
 * them and scored as they are decoded (each holder's share into `accumulators`
 * and the log; a holder new to the lookup into `touched`, from `reached` on).
 * Returns how many holders are touched then. Read in place rather than
 * copied out and read back: that cost as much as the rest of step 1
 * (docs/benchmarks.md, "The similar-notes lookup at half the CPU").
 */
function reachNewest(list: TermPostings, take: number, idf: number, averages: Fields<number>, lengths: Uint32Array, accumulators: Float64Array, touched: Int32Array, reached: number, log: ReachLog): number {
  const data = list.data;
  const block = Math.max(0, (list.size - take) >> BLOCK_SHIFT);
  let at = block > 0 ? list.skips![2 * block - 1] : 0;
  let ordinal = block > 0 ? list.skips![2 * block - 2] : -1;
  // Postings of the block before the newest `take`: decoded for their length only.
  let skip = list.size - (block << BLOCK_SHIFT) - take;
  const end = list.length;
  const fields = log.fields;
  const { b, weights, k1 } = BM25F;
  const bodyWeight = weights[2];
  const bodyB = b[2];
  const bodyAverage = averages[2];
  const logOrdinals = log.ordinals;
  const logShares = log.shares;
  let size = log.size;
  while (at < end) {
    let v = data[at++];
    if (v >= 128) {
      v &= 127;
      let shift = 7;
      let byte: number;
      do {
        byte = data[at++];
        v |= (byte & 127) << shift;
        shift += 7;
      } while (byte >= 128);
    }
    ordinal += v >>> 2;
    const code = v & 3;
    if (code === 3) at = readFieldCounts(data, at, fields);
    if (skip > 0) {
      skip--;
      continue;
    }
    const o = 3 * ordinal;
    // The share idf · saturate(weightedFrequencyOf(…)) as every scorer computes it (ranking.ts), written out for a posting in the body only
    // (code < 3: body = code + 1; most postings) with the same operations in the same order, so the same float (0 + x is x). Written out
    // here and in reachNewestLive: a function of its own for it cost this loop a third more.
    const weighted =
      code !== 3
        ? (bodyWeight * (code + 1)) / (1 - bodyB + (bodyB * lengths[o + 2]) / bodyAverage)
        : weightedFrequencyOf(fields[1], fields[2], fields[0], lengths[o], lengths[o + 1], lengths[o + 2], averages);
    const share = idf * ((weighted * (k1 + 1)) / (weighted + k1));
    if (accumulators[ordinal] === 0) touched[reached++] = ordinal;
    accumulators[ordinal] += share;
    logOrdinals[size] = ordinal;
    logShares[size++] = share;
  }
  log.size = size;
  return reached;
}

/**
 * reachNewest for a list holding removed notes' postings (they stay until a
 * compaction): its newest `take` live postings (`take` at most the live
 * notes holding the term). The blocks are read from the last one back, each
 * once, its live postings scored as they are decoded, then taken newest first
 * into the log from the end of the term's part down, so the part ascends.
 */
function reachNewestLive(list: TermPostings, live: Uint8Array, take: number, idf: number, averages: Fields<number>, lengths: Uint32Array, accumulators: Float64Array, touched: Int32Array, reached: number, log: ReachLog): number {
  const data = list.data;
  const skips = list.skips;
  const fields = log.fields;
  const { b, weights, k1 } = BM25F;
  const bodyWeight = weights[2];
  const bodyB = b[2];
  const bodyAverage = averages[2];
  const blockOrdinals = log.blockOrdinals;
  const blockShares = log.blockShares;
  const logOrdinals = log.ordinals;
  const logShares = log.shares;
  const start = log.size;
  let into = start + take;
  for (let block = (list.size - 1) >> BLOCK_SHIFT; block >= 0 && into > start; block--) {
    let at = block > 0 ? skips![2 * block - 1] : 0;
    let ordinal = block > 0 ? skips![2 * block - 2] : -1;
    let held = 0;
    for (let left = Math.min(BLOCK, list.size - (block << BLOCK_SHIFT)); left > 0; left--) {
      let v = data[at++];
      if (v >= 128) {
        v &= 127;
        let shift = 7;
        let byte: number;
        do {
          byte = data[at++];
          v |= (byte & 127) << shift;
          shift += 7;
        } while (byte >= 128);
      }
      ordinal += v >>> 2;
      const code = v & 3;
      if (code === 3) at = readFieldCounts(data, at, fields);
      if (live[ordinal] !== 1) continue;
      const o = 3 * ordinal;
      // The share as in reachNewest.
      const weighted =
        code !== 3
          ? (bodyWeight * (code + 1)) / (1 - bodyB + (bodyB * lengths[o + 2]) / bodyAverage)
          : weightedFrequencyOf(fields[1], fields[2], fields[0], lengths[o], lengths[o + 1], lengths[o + 2], averages);
      blockOrdinals[held] = ordinal;
      blockShares[held++] = idf * ((weighted * (k1 + 1)) / (weighted + k1));
    }
    for (let r = held - 1; r >= 0 && into > start; r--) {
      const ordinal = blockOrdinals[r];
      const share = blockShares[r];
      if (accumulators[ordinal] === 0) touched[reached++] = ordinal;
      accumulators[ordinal] += share;
      logOrdinals[--into] = ordinal;
      logShares[into] = share;
    }
  }
  // Fewer live than `take` (never, as `take` counts live notes): the part moved down to start at `start`.
  if (into > start) {
    logOrdinals.copyWithin(start, into, start + take);
    logShares.copyWithin(start, into, start + take);
  }
  log.size = start + take - (into - start);
  return reached;
}

/** The lookup on the in-memory postings: what rankSimilar (own-score.ts) answers on the database index. */
export function rankSimilarInMemory(index: MemoryIndex, { terms, vector, limit, minShare, reach, pool }: SimilarQuery): SimilarRanking {
  // Each term's postings found once (a lookup by its characters), for the statistics and both steps.
  const lists = new Map(terms.map((term) => [term, index.postings(term)]));
  const stats = similarStats({ notes: index.notes, lengthSums: index.lengthSums }, (term) => lists.get(term)?.notes ?? 0, terms, vector);
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
  const log = ReachLog.of(index, takes.reduce((sum, take) => sum + take, 0));
  /** Per term of `rarest` reached: where its holders are in the log, [start, end). */
  const logged = new Map<SimilarTerm, [start: number, end: number]>();
  for (const [i, term] of rarest.entries()) {
    const list = takes[i] > 0 ? lists.get(term.term) : undefined;
    if (!list) continue;
    const start = log.size;
    if (list.notes === list.size) reached = reachNewest(list, takes[i], term.idf, stats.averages, lengths, accumulators, touched, reached, log);
    else reached = reachNewestLive(list, live, takes[i], term.idf, stats.averages, lengths, accumulators, touched, reached, log);
    logged.set(term, [start, log.size]);
  }
  const candidates = poolOf(touched, reached, accumulators, pool, (ordinal) => index.keyOf(ordinal));
  const reachedShares = Float64Array.from(candidates, (ordinal) => accumulators[ordinal]);
  for (let t = 0; t < reached; t++) accumulators[touched[t]] = 0;
  const top = new TopK(limit);
  if (candidates.length > 0) scorePool(index, stats, lists, log, logged, candidates, reachedShares, floor, top);
  return { own, ranked: top.items };
}

/**
 * Step 2: the pool scored exactly, each note's shares summed in query-term
 * order (every scorer's float), one note at a time in ordinal order; those
 * reaching the floor are offered to `top` in that order. A note's share for a
 * term comes from step 1's log when step 1 read the term's holders from below
 * it (the note holds the term only if it was reached by it: the same float,
 * the same expression on the same counts), else from the term's postings by a
 * leap (each term's cursor moves forward only, as the notes ascend). Before its
 * first leap and after each, a note whose known shares (the sum step 1 gave
 * it) plus the most each term still to read can add (idf·(k1+1)) cannot reach
 * the floor, or the top's threshold once it holds `limit`, is dropped: it
 * could not be listed, and `top` sees the same offers minus ones it would
 * refuse.
 */
function scorePool(
  index: MemoryIndex,
  stats: SimilarStats,
  lists: Map<string, TermPostings | undefined>,
  log: ReachLog,
  logged: Map<SimilarTerm, [start: number, end: number]>,
  candidates: Int32Array,
  reachedShares: Float64Array,
  floor: number,
  top: TopK,
): void {
  const lengths = index.lengths;
  const averages = stats.averages;
  // Per query term some other note holds, in query order: its cursor, its bound, and its holders in the log ([logAt, logEnd), the first of them `firsts`).
  const terms: SimilarTerm[] = [];
  const termLists: TermPostings[] = [];
  /** Made at a term's first leap (most terms' shares all come from the log). */
  const cursors: (PostingCursor | null)[] = [];
  const bounds: number[] = [];
  const logAt: number[] = [];
  const logEnd: number[] = [];
  const firsts: number[] = [];
  for (const term of stats.query) {
    const list = term.others > 0 ? lists.get(term.term) : undefined;
    if (!list) continue;
    terms.push(term);
    termLists.push(list);
    cursors.push(null);
    bounds.push(term.idf * (BM25F.k1 + 1));
    const [start, end] = logged.get(term) ?? [0, 0];
    logAt.push(start);
    logEnd.push(end);
    firsts.push(start < end ? log.ordinals[start] : Infinity);
  }
  const m = terms.length;
  /** Per term for the note at hand: FROM_LOG, TO_READ (its bound counted), or READ (its share in `shares`). */
  const state = new Uint8Array(m);
  const shares = new Float64Array(m);
  for (let c = 0; c < candidates.length; c++) {
    const ordinal = candidates[c];
    const level = top.full ? Math.max(floor, top.threshold) : floor;
    let upper = reachedShares[c];
    for (let j = 0; j < m; j++) {
      if (ordinal >= firsts[j]) state[j] = FROM_LOG;
      else {
        state[j] = TO_READ;
        upper += bounds[j];
      }
    }
    if (upper * SLACK < level) continue;
    let dropped = false;
    for (let j = 0; j < m && !dropped; j++) {
      if (state[j] !== TO_READ) continue;
      const cursor = (cursors[j] ??= new PostingCursor(termLists[j]));
      let share = 0;
      if (cursor.leap(ordinal)) {
        const o = 3 * ordinal;
        share = terms[j].idf * saturate(weightedFrequencyOf(cursor.title, cursor.tags, cursor.body, lengths[o], lengths[o + 1], lengths[o + 2], averages));
      }
      shares[j] = share;
      state[j] = READ;
      upper = reachedShares[c];
      for (let k = 0; k < m; k++) upper += state[k] === TO_READ ? bounds[k] : state[k] === READ ? shares[k] : 0;
      dropped = upper * SLACK < level;
    }
    if (dropped) continue;
    let score = 0;
    for (let j = 0; j < m; j++) {
      if (state[j] === READ) {
        if (shares[j] > 0) score += shares[j];
        continue;
      }
      // Found in the term's logged holders by binary search from where the last note's search ended (the log is long, the pool short).
      let at = logAt[j];
      let high = logEnd[j];
      while (at < high) {
        const middle = (at + high) >>> 1;
        if (log.ordinals[middle] < ordinal) at = middle + 1;
        else high = middle;
      }
      logAt[j] = at;
      if (at < logEnd[j] && log.ordinals[at] === ordinal) score += log.shares[at];
    }
    if (score >= floor) top.offer(index.keyOf(ordinal), score);
  }
}

const FROM_LOG = 0;
const TO_READ = 1;
const READ = 2;
