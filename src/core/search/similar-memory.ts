// The similar-notes lookup (own-score.ts: the rule) over the in-memory
// postings (memory-index.ts): the same holders, pool and scores as the
// database index's path, read from the postings. Not through rankInMemory
// (maxscore.ts): that ranks with the index's own statistics, and the lookup
// counts the new note in before it is stored.
import { BLOCK_SHIFT, PostingCursor, type MemoryIndex, type TermPostings } from "./memory-index.ts";
import { BLOCK, readFieldCounts } from "./term-postings.ts";
import type { Fields } from "./analyzer.ts";
import { ownScore, poolOf, rarestShared, reachPerTerm, similarStats, type SimilarQuery, type SimilarRanking, type SimilarTerm } from "./own-score.ts";
import { BM25F, saturate, SLACK, TopK, weightedFrequencyOf } from "./ranking.ts";

/** The newest live postings of a term, ascending (newestLive fills it): each holder's ordinal and counts per field. */
export class NewestPostings {
  ordinals = new Int32Array(0);
  titles = new Int32Array(0);
  tags = new Int32Array(0);
  bodies = new Int32Array(0);
  /** One block read ahead of taking its postings newest first. */
  private readonly block = { ordinals: new Int32Array(BLOCK), titles: new Int32Array(BLOCK), tags: new Int32Array(BLOCK), bodies: new Int32Array(BLOCK) };

  private hold(take: number): void {
    if (this.ordinals.length >= take) return;
    const size = Math.max(take, 2 * this.ordinals.length);
    this.ordinals = new Int32Array(size);
    this.titles = new Int32Array(size);
    this.tags = new Int32Array(size);
    this.bodies = new Int32Array(size);
  }

  private put(at: number, cursor: PostingCursor): void {
    this.ordinals[at] = cursor.ordinal;
    this.titles[at] = cursor.title;
    this.tags[at] = cursor.tags;
    this.bodies[at] = cursor.body;
  }

  /**
   * The newest `take` live postings of `list` into [start, take) of the
   * arrays, ascending; returns start (above 0 when fewer are live). When
   * every posting is live they are the last `take`, read on from the block
   * holding the first of them. Else (postings of removed notes stay until a
   * compaction) the blocks are read from the last one back, each once, its
   * live postings taken newest first until `take`.
   */
  fill(list: TermPostings, live: Uint8Array, take: number): number {
    this.hold(take);
    const from = (block: number) => {
      const cursor = new PostingCursor(list);
      if (block > 0) cursor.toBlock(block);
      return cursor;
    };
    if (list.notes === list.size) {
      const block = Math.max(0, (list.size - take) >> BLOCK_SHIFT);
      const cursor = from(block);
      for (let skip = list.size - (block << BLOCK_SHIFT) - take; skip > 0; skip--) cursor.next();
      const start = Math.max(0, take - list.size);
      for (let at = start; at < take && cursor.next(); at++) this.put(at, cursor);
      return start;
    }
    const held = this.block;
    let start = take;
    for (let block = (list.size - 1) >> BLOCK_SHIFT; block >= 0 && start > 0; block--) {
      const cursor = from(block);
      let read = 0;
      for (let left = Math.min(BLOCK, list.size - (block << BLOCK_SHIFT)); left > 0 && cursor.next(); left--) {
        held.ordinals[read] = cursor.ordinal;
        held.titles[read] = cursor.title;
        held.tags[read] = cursor.tags;
        held.bodies[read++] = cursor.body;
      }
      for (let r = read - 1; r >= 0 && start > 0; r--) {
        if (live[held.ordinals[r]] !== 1) continue;
        start--;
        this.ordinals[start] = held.ordinals[r];
        this.titles[start] = held.titles[r];
        this.tags[start] = held.tags[r];
        this.bodies[start] = held.bodies[r];
      }
    }
    return start;
  }
}

/**
 * A term's postings are walked whole for the pool when they are at most this
 * many per candidate, else each candidate is leapt to: a leap decodes about
 * half a block of BLOCK postings.
 */
const WALK_PER_CANDIDATE = 48;

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
  /** Step 1's read of one term's newest holders when some are removed notes' (scratch). */
  readonly newest = new NewestPostings();
  /** A posting's counts when it has more than the body's (scratch: readFieldCounts). */
  readonly fields = new Int32Array(3);

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

  push(ordinal: number, share: number): void {
    if (this.size === this.ordinals.length) {
      const ordinals = new Int32Array(2 * this.size + 16);
      const shares = new Float64Array(ordinals.length);
      ordinals.set(this.ordinals);
      shares.set(this.shares);
      this.ordinals = ordinals;
      this.shares = shares;
    }
    this.ordinals[this.size] = ordinal;
    this.shares[this.size++] = share;
  }
}

/** The pool notes (and their partial sums) that may still reach `floor` with `left` more: all of them when none falls short. */
function reachable(candidates: Int32Array, scores: Float64Array, left: number, floor: number): [Int32Array, Float64Array] {
  let kept = 0;
  for (let c = 0; c < candidates.length; c++) if ((scores[c] + left) * SLACK >= floor) kept++;
  if (kept === candidates.length) return [candidates, scores];
  const keptCandidates = new Int32Array(kept);
  const keptScores = new Float64Array(kept);
  for (let c = 0, at = 0; c < candidates.length; c++) {
    if ((scores[c] + left) * SLACK < floor) continue;
    keptCandidates[at] = candidates[c];
    keptScores[at++] = scores[c];
  }
  return [keptCandidates, keptScores];
}

/**
 * Step 1 for a list whose postings are all live (no removed note's left):
 * its newest `take` postings, read on from the block holding the first of
 * them and scored as they are decoded (each holder's share into `accumulators`
 * and the log; a holder new to the lookup into `touched`, from `reached` on).
 * Returns how many holders are touched then. The share is the expression
 * every scorer computes (ranking.ts: idf · saturate(weightedFrequencyOf(…))),
 * written out for a posting in the body only (most are) with the same
 * operations in the same order, so the same float; it is here rather than
 * through NewestPostings because copying each posting out and reading it back
 * cost as much as the rest of step 1 (docs/benchmarks.md, "The similar-notes
 * lookup, step 1 decoded in place").
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
    // weightedFrequencyOf(0, 0, code + 1, …): its body term alone (0 + x is x).
    const weighted =
      code !== 3
        ? (bodyWeight * (code + 1)) / (1 - bodyB + (bodyB * lengths[o + 2]) / bodyAverage)
        : weightedFrequencyOf(fields[1], fields[2], fields[0], lengths[o], lengths[o + 1], lengths[o + 2], averages);
    // saturate(weighted)
    const share = idf * ((weighted * (k1 + 1)) / (weighted + k1));
    if (accumulators[ordinal] === 0) touched[reached++] = ordinal;
    accumulators[ordinal] += share;
    logOrdinals[size] = ordinal;
    logShares[size++] = share;
  }
  log.size = size;
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
    const newest = log.newest;
    const take = takes[i];
    if (list.notes === list.size) {
      reached = reachNewest(list, take, term.idf, stats.averages, lengths, accumulators, touched, reached, log);
      logged.set(term, [start, log.size]);
      continue;
    }
    for (let k = newest.fill(list, live, take); k < take; k++) {
      const ordinal = newest.ordinals[k];
      if (accumulators[ordinal] === 0) touched[reached++] = ordinal;
      const o = 3 * ordinal;
      const share = term.idf * saturate(weightedFrequencyOf(newest.titles[k], newest.tags[k], newest.bodies[k], lengths[o], lengths[o + 1], lengths[o + 2], stats.averages));
      accumulators[ordinal] += share;
      log.push(ordinal, share);
    }
    logged.set(term, [start, log.size]);
  }
  let candidates: Int32Array = poolOf(touched, reached, accumulators, pool, (ordinal) => index.keyOf(ordinal));
  for (let t = 0; t < reached; t++) accumulators[touched[t]] = 0;
  if (candidates.length === 0) return { own, ranked: [] };
  // Step 2: the pool scored exactly, term at a time, summed in query-term order (every scorer's float); terms only the new note holds add nothing.
  let scores: Float64Array = new Float64Array(candidates.length);
  // What each term can add to any note at most (saturate() stays under k1 + 1), and so what the terms after the j-th can.
  const held = stats.query.map((term) => (term.others > 0 ? lists.get(term.term) : undefined));
  const after = new Float64Array(stats.query.length + 1);
  for (let j = stats.query.length - 1; j >= 0; j--) {
    const list = held[j];
    after[j] = after[j + 1] + (list ? stats.query[j].idf * (BM25F.k1 + 1) : 0);
  }
  for (const [j, term] of stats.query.entries()) {
    const list = held[j];
    if (!list) continue;
    // A pool note that cannot reach the floor with every term left at its bound is not read further (nor listed).
    [candidates, scores] = reachable(candidates, scores, after[j], floor);
    if (candidates.length === 0) break;
    const cursor = new PostingCursor(list);
    const add = (c: number) => {
      const o = 3 * candidates[c];
      scores[c] += term.idf * saturate(weightedFrequencyOf(cursor.title, cursor.tags, cursor.body, lengths[o], lengths[o + 1], lengths[o + 2], stats.averages));
    };
    // The pool notes from the first holder step 1 reached by this term on: their shares from the log.
    let readUpTo = candidates.length;
    const range = logged.get(term);
    if (range !== undefined) {
      const [start, end] = range;
      const first = start < end ? log.ordinals[start] : Infinity;
      readUpTo = 0;
      while (readUpTo < candidates.length && candidates[readUpTo] < first) readUpTo++;
      // Each pool note is found in the term's logged holders by binary search, not by walking them: the pool is short and the log long (in a replay loop the pool is the newest holders, at the log's far end).
      for (let c = readUpTo, at = start; c < candidates.length && at < end; c++) {
        const target = candidates[c];
        let high = end;
        while (at < high) {
          const middle = (at + high) >>> 1;
          if (log.ordinals[middle] < target) at = middle + 1;
          else high = middle;
        }
        if (at < end && log.ordinals[at] === target) scores[c] += log.shares[at++];
      }
    }
    if (readUpTo === 0) continue;
    if (list.size <= WALK_PER_CANDIDATE * readUpTo) {
      // A short list (the rarer terms): walked once beside the ascending candidates.
      for (let c = 0; c < readUpTo && cursor.next(); ) {
        while (c < readUpTo && candidates[c] < cursor.ordinal) c++;
        if (c < readUpTo && candidates[c] === cursor.ordinal) add(c++);
      }
    } else for (let c = 0; c < readUpTo; c++) if (cursor.leap(candidates[c])) add(c);
  }
  const top = new TopK(limit);
  for (let c = 0; c < candidates.length; c++) if (scores[c] >= floor) top.offer(index.keyOf(candidates[c]), scores[c]);
  return { own, ranked: top.items };
}
