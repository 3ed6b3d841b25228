// Exact top-k over the in-memory postings: term at a time with MaxScore's
// pruning (Turtle & Flood 1995; the accumulator variant of Fontoura et al.
// 2011), then an exact rescoring in query order. Why it is exact, and how it
// meets the tie order: docs/design.md, "Search".
import type { Fields } from "./analyzer.ts";
import { PostingCursor, type MemoryIndex, type TermPostings } from "./memory-index.ts";
import { BM25F, idf, saturate, SLACK, TopK, weightedFrequencyOf, type Ranked } from "./ranking.ts";

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
 * Adds each posting's share of `list` to its note's accumulator (term at a
 * time); notes first touched are listed in `touched` from `count` on. Every
 * live, accepted note's new partial score is offered to `best`. Returns the new
 * count of touched notes.
 */
function accumulate(
  index: MemoryIndex,
  list: TermPostings,
  weight: number,
  averages: Fields<number>,
  accumulators: Float64Array,
  touched: Int32Array,
  count: number,
  best: Best,
  accept: ((ordinal: number) => boolean) | undefined,
): number {
  const data = list.data;
  const end = list.length;
  const lengths = index.lengths;
  const live = index.liveFlags;
  const { b, weights } = BM25F;
  const bodyWeight = weights[2];
  const bodyB = b[2];
  const bodyAverage = averages[2];
  const k1 = BM25F.k1;
  let at = 0;
  let ordinal = -1;
  let n = count;
  let floor = best.floor;
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
    const before = accumulators[ordinal];
    if (before === 0) touched[n++] = ordinal;
    const after = before + share;
    accumulators[ordinal] = after;
    if (after > floor && live[ordinal] === 1 && (accept === undefined || accept(ordinal))) {
      best.offer(after);
      floor = best.floor;
    }
  }
  return n;
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
 * lower bound of the final k-th score) is kept. Once the bounds of the terms
 * left cannot lift a note never touched to that score, only the touched notes
 * that still can (partial + bounds left) remain candidates, and the terms left
 * are looked up for them alone, skipping whole blocks; candidates drop out as
 * the bounds left shrink. The accumulators sum in bound order; the notes
 * whose partial sum is within the slack of the k-th are scored again in query
 * order (every scorer's float) and cut to the top k.
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
  const bounds = lists.map((postings, i) => {
    const drift = index.bounds(postings, averages);
    return weights[i] * saturate(postings.maxWeighted * drift);
  });
  const order = lists.map((_, i) => i).sort((a, b) => bounds[b] - bounds[a] || a - b);
  // left[j]: the bounds of the terms after order[j], summed (0 after the last).
  const left = new Float64Array(m);
  for (let j = m - 2; j >= 0; j--) left[j] = left[j + 1] + bounds[order[j + 1]];

  const { accumulators, touched } = index.scratch();
  const best = new Best(k);
  let threshold = -Infinity;
  const excluded = (bound: number) => threshold >= bound * SLACK;
  let count = 0;
  try {
    // Term at a time while a note not yet touched could still enter.
    let j = 0;
    for (;;) {
      const i = order[j];
      best.reset();
      count = accumulate(index, lists[i], weights[i], averages, accumulators, touched, count, best, accept);
      if (best.floor > threshold) threshold = best.floor;
      if (j === m - 1 || excluded(left[j])) break;
      j++;
    }
    // The touched notes that can still enter (j: the last term added whole), by ordinal.
    let candidates = canEnter(index, touched, count, accumulators, (partial) => !excluded(partial + left[j]), accept);
    // The terms left, looked up for the candidates alone.
    for (j++; j < m && candidates.length > 0; j++) {
      const i = order[j];
      const cursor = new PostingCursor(lists[i]);
      const share = sharer(index, weights[i], averages, cursor);
      best.reset();
      for (let c = 0; c < candidates.length; c++) {
        const ordinal = candidates[c];
        let partial = accumulators[ordinal];
        if (cursor.seek(ordinal)) {
          partial += share(ordinal);
          accumulators[ordinal] = partial;
        }
        best.offer(partial);
      }
      if (best.floor > threshold) threshold = best.floor;
      // Drop those the bounds left cannot lift to the k-th partial score.
      let kept = 0;
      for (let c = 0; c < candidates.length; c++) {
        const ordinal = candidates[c];
        if (!excluded(accumulators[ordinal] + left[j])) candidates[kept++] = ordinal;
      }
      candidates = candidates.subarray(0, kept);
    }
    return rescore(index, lists, weights, averages, candidates, accumulators, threshold, k);
  } finally {
    for (let t = 0; t < count; t++) accumulators[touched[t]] = 0;
  }
}

/**
 * The live, accepted notes among the `count` touched whose partial score
 * passes `keep`, in ascending ordinal order (sorted when few, else found by
 * one scan over the accumulators).
 */
function canEnter(
  index: MemoryIndex,
  touched: Int32Array,
  count: number,
  accumulators: Float64Array,
  keep: (partial: number) => boolean,
  accept: ((ordinal: number) => boolean) | undefined,
): Int32Array {
  const live = index.liveFlags;
  const pool = new Int32Array(count);
  let kept = 0;
  for (let t = 0; t < count; t++) {
    const ordinal = touched[t];
    if (live[ordinal] === 1 && keep(accumulators[ordinal]) && (accept === undefined || accept(ordinal))) pool[kept++] = ordinal;
  }
  if (kept * 16 < index.ordinals) return pool.subarray(0, kept).sort();
  kept = 0;
  for (let ordinal = 0, end = index.ordinals; ordinal < end; ordinal++) {
    const partial = accumulators[ordinal];
    if (partial !== 0 && live[ordinal] === 1 && keep(partial) && (accept === undefined || accept(ordinal))) pool[kept++] = ordinal;
  }
  return pool.subarray(0, kept);
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
 * The exact top k among `candidates` (ascending ordinals, complete
 * accumulators): those whose sum is within the slack of the k-th are scored
 * again with the shares summed in query-term order, as every scorer sums.
 */
function rescore(
  index: MemoryIndex,
  lists: TermPostings[],
  weights: number[],
  averages: Fields<number>,
  candidates: Int32Array,
  accumulators: Float64Array,
  threshold: number,
  k: number,
): Ranked[] {
  const best = new Best(k);
  for (let c = 0; c < candidates.length; c++) best.offer(accumulators[candidates[c]]);
  const cut = Math.max(best.floor, threshold) / (SLACK * SLACK);
  const finalists: number[] = [];
  for (let c = 0; c < candidates.length; c++) if (accumulators[candidates[c]] >= cut) finalists.push(candidates[c]);
  const scores = new Float64Array(finalists.length);
  for (let i = 0; i < lists.length; i++) {
    const cursor = new PostingCursor(lists[i]);
    const share = sharer(index, weights[i], averages, cursor);
    for (let f = 0; f < finalists.length; f++) if (cursor.seek(finalists[f])) scores[f] += share(finalists[f]);
  }
  const top = new TopK(k);
  for (let f = 0; f < finalists.length; f++) top.offer(index.keyOf(finalists[f]), scores[f]);
  return top.items;
}
