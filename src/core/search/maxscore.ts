// Exact top-k over the in-memory postings: term at a time with MaxScore's
// pruning (Turtle & Flood 1995; the accumulator variant of Fontoura et al.
// 2011), the k-th score raised by fully scored seeds, block bounds on the
// candidates' later terms, then an exact rescoring in query order. Why it is exact, and how it
// meets the tie order: docs/design.md, "Search".
import type { Fields } from "./analyzer.ts";
import { BLOCK_SHIFT, PostingCursor, type MemoryIndex, type TermPostings } from "./memory-index.ts";
import { BM25F, idf, saturate, SLACK, TopK, weightedFrequencyOf, type Ranked } from "./ranking.ts";

/**
 * After a pass, the notes of the best partial scores are scored fully (see
 * seed()): at most SEED_MAX, and fewer when the next pass is short (a full
 * score looks a note up in every list, decoding up to a block in each).
 */
const SEED_MAX = 256;
const SEED_COST = 256;

/** The `k` largest values offered (ties included), kept sorted; `floor` is the k-th (-Infinity until k were offered). */
class Best {
  private readonly values: Float64Array;
  private count = 0;
  floor = -Infinity;

  constructor(private readonly k: number) {
    this.values = new Float64Array(k);
  }

  reset(): void {
    this.count = 0;
    this.floor = -Infinity;
  }

  offer(value: number): void {
    const values = this.values;
    const k = this.k;
    let at: number;
    if (this.count === k) {
      if (value <= values[k - 1]) return;
      at = k - 1;
    } else {
      at = this.count++;
    }
    while (at > 0 && values[at - 1] < value) {
      values[at] = values[at - 1];
      at--;
    }
    values[at] = value;
    if (this.count === k) this.floor = values[k - 1];
  }
}

/**
 * The notes of the `size` largest values offered, in a min-heap (any order
 * among them); `floor` is the smallest held once full (-Infinity until then,
 * Infinity when `size` is 0: nothing is taken).
 */
class Leaders {
  private values = new Float64Array(0);
  ordinals = new Int32Array(0);
  count = 0;
  private size = 0;
  floor = Infinity;

  reset(size: number): void {
    this.size = Math.min(size, SEED_MAX);
    if (this.values.length < this.size) {
      this.values = new Float64Array(this.size);
      this.ordinals = new Int32Array(this.size);
    }
    this.count = 0;
    this.floor = this.size > 0 ? -Infinity : Infinity;
  }

  offer(value: number, ordinal: number): void {
    const values = this.values;
    const ordinals = this.ordinals;
    if (this.size === 0) return;
    if (this.count < this.size) {
      let at = this.count++;
      while (at > 0) {
        const parent = (at - 1) >> 1;
        if (values[parent] <= value) break;
        values[at] = values[parent];
        ordinals[at] = ordinals[parent];
        at = parent;
      }
      values[at] = value;
      ordinals[at] = ordinal;
    } else {
      if (!(value > values[0])) return;
      const n = this.count;
      let at = 0;
      for (;;) {
        let child = 2 * at + 1;
        if (child >= n) break;
        if (child + 1 < n && values[child + 1] < values[child]) child++;
        if (values[child] >= value) break;
        values[at] = values[child];
        ordinals[at] = ordinals[child];
        at = child;
      }
      values[at] = value;
      ordinals[at] = ordinal;
    }
    if (this.count === this.size) this.floor = values[0];
  }
}

/**
 * Adds each posting's share of `list` to its note's accumulator (term at a
 * time); notes first touched are listed in `touched` from `count` on. Every
 * live, accepted note's new partial score is offered to `best` and `leaders`.
 * Returns the new count of touched notes.
 */
function accumulate(
  index: MemoryIndex,
  list: TermPostings,
  from: number,
  to: number,
  previous: number,
  weight: number,
  averages: Fields<number>,
  accumulators: Float64Array,
  touched: Int32Array,
  count: number,
  best: Best,
  leaders: Leaders,
  accept: ((ordinal: number) => boolean) | undefined,
): number {
  const data = list.data;
  const end = to;
  const lengths = index.lengths;
  const live = index.liveFlags;
  const { b, weights } = BM25F;
  const bodyWeight = weights[2];
  const bodyB = b[2];
  const bodyAverage = averages[2];
  const k1 = BM25F.k1;
  let at = from;
  let ordinal = previous;
  let n = count;
  let floor = Math.min(best.floor, leaders.floor);
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
    const before = accumulators[ordinal];
    let weighted: number;
    if (code !== 3) {
      // The body-only case inline: the same operations as weightedFrequencyOf with zero title and tags counts.
      weighted = 0 + (bodyWeight * (code + 1)) / (1 - bodyB + (bodyB * lengths[3 * ordinal + 2]) / bodyAverage);
    } else {
      let w = data[at++];
      if (w >= 128) {
        w &= 127;
        let shift = 7;
        let byte: number;
        do {
          byte = data[at++];
          w |= (byte & 127) << shift;
          shift += 7;
        } while (byte >= 128);
      }
      let title = 0;
      let tags = 0;
      if (w & 1) {
        title = data[at++];
        if (title >= 128) {
          title &= 127;
          let shift = 7;
          let byte: number;
          do {
            byte = data[at++];
            title |= (byte & 127) << shift;
            shift += 7;
          } while (byte >= 128);
        }
        tags = data[at++];
        if (tags >= 128) {
          tags &= 127;
          let shift = 7;
          let byte: number;
          do {
            byte = data[at++];
            tags |= (byte & 127) << shift;
            shift += 7;
          } while (byte >= 128);
        }
      }
      const o = 3 * ordinal;
      weighted = weightedFrequencyOf(title, tags, w >>> 1, lengths[o], lengths[o + 1], lengths[o + 2], averages);
    }
    const share = weight * ((weighted * (k1 + 1)) / (weighted + k1));
    const after = before + share;
    accumulators[ordinal] = after;
    if (before === 0) touched[n++] = ordinal;
    if (after > floor && live[ordinal] === 1 && (accept === undefined || accept(ordinal))) {
      best.offer(after);
      leaders.offer(after, ordinal);
      floor = Math.min(best.floor, leaders.floor);
    }
  }
  return n;
}

/**
 * The first term's pass (nothing touched yet): accumulate() block by block,
 * skipping each block whose bound (`blockBound`) plus what the other terms can
 * add (`rest`) cannot reach the k-th partial score seen so far: no note of it
 * can enter (if a later term touches one, its partial score only understates it).
 */
function accumulateFirst(
  index: MemoryIndex,
  list: TermPostings,
  blockBound: (block: number) => number,
  rest: number,
  weight: number,
  averages: Fields<number>,
  accumulators: Float64Array,
  touched: Int32Array,
  best: Best,
  leaders: Leaders,
  threshold: number,
  accept: ((ordinal: number) => boolean) | undefined,
): number {
  const skips = list.skips;
  const complete = list.size >> BLOCK_SHIFT;
  if (!skips || !list.blockMax) return accumulate(index, list, 0, list.length, -1, weight, averages, accumulators, touched, 0, best, leaders, accept);
  let count = 0;
  const blocks = Math.ceil(list.size / (1 << BLOCK_SHIFT));
  for (let block = 0; block < blocks; block++) {
    if (Math.max(threshold, best.floor) >= (blockBound(block) + rest) * SLACK) continue;
    const from = block === 0 ? 0 : skips[2 * block - 1];
    const previous = block === 0 ? -1 : skips[2 * block - 2];
    const to = block < complete ? skips[2 * block + 1] : list.length;
    count = accumulate(index, list, from, to, previous, weight, averages, accumulators, touched, count, best, leaders, accept);
  }
  return count;
}

/** What a term adds to any note of a block at most (its bound when the block has none). */
function blockBounds(list: TermPostings, weight: number, drift: number, bound: number): (block: number) => number {
  const blockMax = list.blockMax;
  return (block) => (blockMax && block < blockMax.length ? weight * saturate(blockMax[block] * drift) : bound);
}

/**
 * Adds the term's share to the partial scores of the candidates (ascending
 * ordinals, `partial` beside them) that hold it, block by block: a block
 * holding no candidate is not decoded, and a candidate that could not reach
 * `threshold` even with the block's bound (`blockBound`) and the terms left
 * (`rest`) is dropped there (its partial set to -Infinity), so a block left
 * with none is not decoded either. The postings and the candidates are walked
 * together, both in order (the partial scores are read in sequence, not
 * through the per-note accumulators).
 */
function addForCandidates(
  index: MemoryIndex,
  list: TermPostings,
  blockBound: (block: number) => number,
  rest: number,
  threshold: number,
  weight: number,
  averages: Fields<number>,
  candidates: Int32Array,
  partial: Float64Array,
): void {
  const data = list.data;
  const skips = list.skips;
  const lengths = index.lengths;
  const { b, weights } = BM25F;
  const bodyWeight = weights[2];
  const bodyB = b[2];
  const bodyAverage = averages[2];
  const k1 = BM25F.k1;
  const complete = list.size >> BLOCK_SHIFT;
  const blocks = Math.ceil(list.size / (1 << BLOCK_SHIFT));
  const n = candidates.length;
  let c = 0;
  for (let block = 0; block < blocks && c < n; block++) {
    const last = block < complete ? skips![2 * block] : list.last;
    if (candidates[c] > last) continue;
    const bound = blockBound(block) + rest;
    const first = c;
    let open = false;
    for (; c < n && candidates[c] <= last; c++) {
      if (threshold < (partial[c] + bound) * SLACK) open = true;
      else partial[c] = -Infinity;
    }
    if (!open) continue;
    const end = c;
    let at = block === 0 ? 0 : skips![2 * block - 1];
    let ordinal = block === 0 ? -1 : skips![2 * block - 2];
    const to = block < complete ? skips![2 * block + 1] : list.length;
    let x = first;
    while (at < to) {
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
      let title = 0;
      let tags = 0;
      let body = code + 1;
      if (code === 3) {
        let w = data[at++];
        if (w >= 128) {
          w &= 127;
          let shift = 7;
          let byte: number;
          do {
            byte = data[at++];
            w |= (byte & 127) << shift;
            shift += 7;
          } while (byte >= 128);
        }
        body = w >>> 1;
        if (w & 1) {
          title = data[at++];
          if (title >= 128) {
            title &= 127;
            let shift = 7;
            let byte: number;
            do {
              byte = data[at++];
              title |= (byte & 127) << shift;
              shift += 7;
            } while (byte >= 128);
          }
          tags = data[at++];
          if (tags >= 128) {
            tags &= 127;
            let shift = 7;
            let byte: number;
            do {
              byte = data[at++];
              tags |= (byte & 127) << shift;
              shift += 7;
            } while (byte >= 128);
          }
        }
      }
      while (x < end && candidates[x] < ordinal) x++;
      if (x === end) break;
      if (candidates[x] !== ordinal || !(partial[x] > -Infinity)) continue;
      const o = 3 * ordinal;
      const weighted =
        code !== 3
          ? 0 + (bodyWeight * body) / (1 - bodyB + (bodyB * lengths[o + 2]) / bodyAverage)
          : weightedFrequencyOf(title, tags, body, lengths[o], lengths[o + 1], lengths[o + 2], averages);
      partial[x] += weight * ((weighted * (k1 + 1)) / (weighted + k1));
    }
  }
}

/**
 * The top `k` notes by BM25F among all notes holding any of `terms` (index
 * terms, distinct), exactly as if every such note were scored; more than `k`
 * when notes tie with the k-th. `accept`, when given, limits the notes that
 * may be returned (by ordinal: see MemoryIndex.keyOf); the statistics stay
 * those of the whole corpus.
 *
 * Each term has a bound, the most it adds to any note. Terms are taken largest
 * bound first, each one's postings added to per-note accumulators in one tight
 * pass over its compressed bytes, while the k-th best partial score seen (a
 * lower bound of the final k-th score) is kept. After each pass the notes of
 * the best partial scores are scored fully (seed()): the k-th of those full
 * scores is a lower bound of the final k-th too, and usually a far higher
 * one. Once the bounds of the terms left cannot lift a note never touched to
 * the k-th score known, only the touched notes that still can (partial +
 * bounds left) remain candidates, and the terms left are added for them
 * alone, block by block (addForCandidates); candidates drop out as the bounds
 * left shrink, and their best are seeded again. Partial scores sum in bound
 * order; the candidates whose sum is within the slack of the k-th are scored
 * again in query order (every scorer's float) and cut to the top k.
 */
export function rankInMemory(index: MemoryIndex, terms: string[], k: number, accept?: (ordinal: number) => boolean): Ranked[] {
  if (terms.length === 0 || k <= 0 || index.notes <= 0) return [];
  const averages = index.lengthSums.map((sum) => Math.max(sum / index.notes, 1e-9)) as Fields<number>;
  const lists: TermPostings[] = [];
  const weights: number[] = [];
  for (const term of terms) {
    const postings = index.postings(term);
    if (!postings) continue;
    lists.push(postings);
    weights.push(idf(index.notes, postings.notes));
  }
  const m = lists.length;
  if (m === 0) return [];
  const drifts = lists.map((postings) => index.bounds(postings, averages));
  const bounds = lists.map((postings, i) => weights[i] * saturate(postings.maxWeighted * drifts[i]));
  const order = lists.map((_, i) => i).sort((a, b) => bounds[b] - bounds[a] || a - b);
  // left[j]: the bounds of the terms after order[j], summed (0 after the last).
  const left = new Float64Array(m);
  for (let j = m - 2; j >= 0; j--) left[j] = left[j + 1] + bounds[order[j + 1]];

  const { accumulators, touched, candidates: room } = index.scratch();
  const best = new Best(k);
  const leaders = new Leaders();
  const seeded = new Best(k);
  const scored = new Set<number>();
  let threshold = -Infinity;
  let count = 0;
  try {
    // Term at a time while a note not yet touched could still enter.
    let j = 0;
    for (;;) {
      const i = order[j];
      best.reset();
      leaders.reset(j < m - 1 ? Math.floor(lists[order[j + 1]].size / (m * SEED_COST)) : 0);
      const list = lists[i];
      if (j === 0) {
        count = accumulateFirst(index, list, blockBounds(list, weights[i], drifts[i], bounds[i]), left[0], weights[i], averages, accumulators, touched, best, leaders, threshold, accept);
      } else {
        count = accumulate(index, list, 0, list.length, -1, weights[i], averages, accumulators, touched, count, best, leaders, accept);
      }
      threshold = Math.max(threshold, best.floor);
      // The best partial scores so far are likely among the best full ones:
      // scoring them fully gives a k-th score that often ends the passes early.
      threshold = Math.max(threshold, seed(index, lists, weights, averages, leaders, scored, seeded));
      if (j === m - 1 || threshold >= left[j] * SLACK) break;
      j++;
    }
    // The touched notes that can still enter (j: the last term added whole), by ordinal;
    // the others' accumulators are set to -Infinity (never added to again).
    let candidates = canEnter(index, touched, count, j === 0, accumulators, threshold, left[j], accept, room);
    // Their partial scores, beside them from here on (read in order).
    let partial = new Float64Array(candidates.length);
    for (let c = 0; c < candidates.length; c++) partial[c] = accumulators[candidates[c]];
    // The terms left, added for the candidates alone (blocks without one are not decoded).
    for (j++; j < m && candidates.length > 0; j++) {
      const i = order[j];
      addForCandidates(index, lists[i], blockBounds(lists[i], weights[i], drifts[i], bounds[i]), left[j], threshold, weights[i], averages, candidates, partial);
      best.reset();
      leaders.reset(j < m - 1 ? Math.min(candidates.length >> 4, Math.floor(lists[order[j + 1]].size / (m * SEED_COST))) : 0);
      for (let c = 0; c < candidates.length; c++) {
        const value = partial[c];
        if (value > best.floor) best.offer(value);
        if (value > leaders.floor) leaders.offer(value, candidates[c]);
      }
      threshold = Math.max(threshold, best.floor, seed(index, lists, weights, averages, leaders, scored, seeded));
      // Drop those the bounds left cannot lift to the k-th score.
      const floor = left[j];
      let kept = 0;
      for (let c = 0; c < candidates.length; c++) {
        if (!(threshold < (partial[c] + floor) * SLACK)) continue;
        candidates[kept] = candidates[c];
        partial[kept++] = partial[c];
      }
      candidates = candidates.subarray(0, kept);
      partial = partial.subarray(0, kept);
    }
    return rescore(index, lists, weights, averages, candidates, partial, threshold, k);
  } finally {
    for (let t = 0; t < count; t++) accumulators[touched[t]] = 0;
  }
}

/**
 * The live, accepted notes among the `count` touched that can still reach
 * `threshold` with `left` more, in ascending ordinal order (as touched when
 * `ascending`: one pass touched them all; else sorted when few, else found by
 * one scan over the accumulators); the others' accumulators become -Infinity.
 */
function canEnter(
  index: MemoryIndex,
  touched: Int32Array,
  count: number,
  ascending: boolean,
  accumulators: Float64Array,
  threshold: number,
  left: number,
  accept: ((ordinal: number) => boolean) | undefined,
  room: Int32Array,
): Int32Array {
  const live = index.liveFlags;
  let kept = 0;
  if (ascending) {
    for (let t = 0; t < count; t++) {
      const ordinal = touched[t];
      if (threshold < (accumulators[ordinal] + left) * SLACK && live[ordinal] === 1 && (accept === undefined || accept(ordinal))) room[kept++] = ordinal;
      else accumulators[ordinal] = -Infinity;
    }
    return room.subarray(0, kept);
  }
  for (let t = 0; t < count; t++) {
    const ordinal = touched[t];
    if (threshold < (accumulators[ordinal] + left) * SLACK && live[ordinal] === 1 && (accept === undefined || accept(ordinal))) kept++;
    else accumulators[ordinal] = -Infinity;
  }
  const pool = room.subarray(0, kept);
  kept = 0;
  if (pool.length * 16 < index.ordinals) {
    for (let t = 0; t < count; t++) {
      const ordinal = touched[t];
      if (accumulators[ordinal] > 0) pool[kept++] = ordinal;
    }
    return pool.sort();
  }
  for (let ordinal = 0, end = index.ordinals; ordinal < end; ordinal++) if (accumulators[ordinal] > 0) pool[kept++] = ordinal;
  return pool;
}

/** A term's share in the note at the cursor (its current posting). */
function sharer(index: MemoryIndex, weight: number, averages: Fields<number>, cursor: PostingCursor): (ordinal: number) => number {
  const lengths = index.lengths;
  return (ordinal) => {
    const o = 3 * ordinal;
    return weight * saturate(weightedFrequencyOf(cursor.title, cursor.tags, cursor.body, lengths[o], lengths[o + 1], lengths[o + 2], averages));
  };
}

/**
 * The exact top k among `candidates` (ascending ordinals, `partial` beside
 * them: every term's share summed in bound order): those whose sum is within the slack of the k-th are scored
 * again with the shares summed in query-term order, as every scorer sums.
 */
function rescore(
  index: MemoryIndex,
  lists: TermPostings[],
  weights: number[],
  averages: Fields<number>,
  candidates: Int32Array,
  partial: Float64Array,
  threshold: number,
  k: number,
): Ranked[] {
  const best = new Best(k);
  for (let c = 0; c < candidates.length; c++) best.offer(partial[c]);
  const cut = Math.max(best.floor, threshold) / (SLACK * SLACK);
  const finalists: number[] = [];
  for (let c = 0; c < candidates.length; c++) if (partial[c] >= cut) finalists.push(candidates[c]);
  const scores = scoreFully(index, lists, weights, averages, finalists);
  const top = new TopK(k);
  for (let f = 0; f < finalists.length; f++) top.offer(index.keyOf(finalists[f]), scores[f]);
  return top.items;
}

/** The full scores of `ordinals` (ascending), the shares summed in query-term order (every scorer's float). */
function scoreFully(index: MemoryIndex, lists: TermPostings[], weights: number[], averages: Fields<number>, ordinals: ArrayLike<number>): Float64Array {
  const scores = new Float64Array(ordinals.length);
  for (let i = 0; i < lists.length; i++) {
    const cursor = new PostingCursor(lists[i]);
    const share = sharer(index, weights[i], averages, cursor);
    for (let f = 0; f < ordinals.length; f++) if (cursor.seek(ordinals[f])) scores[f] += share(ordinals[f]);
  }
  return scores;
}

/**
 * Scores fully the notes of `leaders` (live, accepted: the best partial
 * scores of the last pass) not scored before, into `seeded`; returns its k-th
 * score over the slack (a lower bound of the final k-th: k distinct notes
 * score at least that), -Infinity until k notes were scored.
 */
function seed(
  index: MemoryIndex,
  lists: TermPostings[],
  weights: number[],
  averages: Fields<number>,
  leaders: Leaders,
  scored: Set<number>,
  seeded: Best,
): number {
  const picked: number[] = [];
  for (let s = 0; s < leaders.count; s++) {
    const ordinal = leaders.ordinals[s];
    if (scored.has(ordinal)) continue;
    scored.add(ordinal);
    picked.push(ordinal);
  }
  if (picked.length > 0) {
    picked.sort((a, b) => a - b);
    const scores = scoreFully(index, lists, weights, averages, picked);
    for (let p = 0; p < picked.length; p++) seeded.offer(scores[p]);
  }
  return seeded.floor / SLACK;
}
