// Exact top-k over the in-memory postings: document at a time in windows of
// ordinals with block-max MaxScore (Turtle & Flood 1995; per-window bounds as
// in Lucene's MaxScoreBulkScorer, per-block bounds as in Ding & Suel 2011 and
// PISA's block_max_maxscore), then an exact rescoring in query order. Why it
// is exact, and how it meets the tie order: docs/design.md, "Search".
import type { Fields } from "./analyzer.ts";
import { PostingCursor, type MemoryIndex, type TermPostings } from "./memory-index.ts";
import { idf, saturate, SLACK, TopK, weightedFrequencyOf, type Ranked } from "./ranking.ts";
import { Best, Lane, scratchOf, type Ranking } from "./maxscore-state.ts";
import { scoreWindow } from "./maxscore-window.ts";

/** Ordinals per window: the unit whose bounds decide which terms must be read (docs/search-index.md, "Ranking over them"). */
export const WINDOW_SHIFT = 12;
/** Windows of the largest bounds scored first, before the pass in ordinal order: they raise the k-th score early. */
const SEED_WINDOWS = 4;

/**
 * The top `k` notes by BM25F among all notes holding any of `terms` (index
 * terms, distinct), exactly as if every such note were scored; more than `k`
 * when notes tie with the k-th. `accept`, when given, limits the notes that
 * may be returned (by ordinal: see MemoryIndex.keyOf); the statistics stay
 * those of the whole corpus.
 *
 * Notes are taken in windows of WINDOW ordinals. Each term has a bound per
 * block of its postings (the most it adds to any note of the block), and so
 * per window (the largest of the blocks overlapping it). In a window, the
 * terms whose window bounds, summed from the smallest, cannot lift a note to
 * the k-th score known are non-essential there (MaxScore): a note holding only
 * those cannot enter. The others' postings in the window are scored (a block
 * whose bound with the other terms' cannot reach the k-th is skipped
 * undecoded); each note they hold is a candidate while its partial score plus
 * the non-essential bounds can reach the k-th, and the non-essential terms
 * are looked up for it largest first, each with the bound of the block the
 * note falls in (a candidate that cannot reach the k-th with it is dropped
 * before its block is decoded). A window whose bounds summed cannot reach the
 * k-th is not read at all. The windows of the largest bounds go first, then
 * the rest in ordinal order. Partial sums are in an arbitrary term order; the
 * notes whose sum is within the slack of the k-th are scored again in query
 * order (every scorer's float) and cut to the top k.
 */
export function rankInMemory(index: MemoryIndex, terms: string[], k: number, accept?: (ordinal: number) => boolean, windowShift = WINDOW_SHIFT): Ranked[] {
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
  const lanes = lists.map((list, i) => {
    const drift = index.bounds(list, averages);
    return new Lane(list, weights[i], drift, weights[i] * saturate(list.maxWeighted * drift));
  });

  const scratch = scratchOf(index, 1 << windowShift, lanes.reduce((sum, lane) => sum + lane.blocks, 0));
  let offset = 0;
  for (const lane of lanes) {
    lane.bounds = scratch.bounds.subarray(offset, offset + lane.blocks);
    offset += lane.blocks;
  }
  // Each term's bound per window, and their sum.
  const windows = Math.ceil(index.ordinals / (1 << windowShift));
  const windowBounds = new Float64Array(m * windows);
  const windowSums = new Float64Array(windows);
  for (let t = 0; t < m; t++) {
    windowMaxima(lanes[t], windowShift, windowBounds, t * windows);
    for (let w = 0; w < windows; w++) windowSums[w] += windowBounds[t * windows + w];
  }

  const state: Ranking = {
    index,
    windowShift,
    lanes,
    averages,
    accept,
    windows,
    windowBounds,
    threshold: -Infinity,
    best: new Best(k),
    partials: new Best(k),
    finalOrdinals: [],
    finalScores: [],
    order: new Int32Array(m),
    scratch,
  };
  // The windows of the largest bounds first, then the others in ordinal order.
  const done = new Uint8Array(windows);
  for (const w of largest(windowSums, SEED_WINDOWS)) {
    done[w] = 1;
    scoreWindow(state, w);
  }
  for (let w = 0; w < windows; w++) {
    if (done[w] === 1 || state.threshold >= windowSums[w] * SLACK) continue;
    scoreWindow(state, w);
  }
  return rescore(index, lists, weights, averages, state, k);
}

/** The lane's block bounds into `lane.bounds`, and into `into` from `offset`: per window, the largest among the blocks overlapping it. */
function windowMaxima(lane: Lane, shift: number, into: Float64Array, offset: number): void {
  const bounds = lane.bounds;
  for (let block = 0; block < lane.blocks; block++) {
    const first = block === 0 ? 0 : lane.skips![2 * block - 2] + 1;
    const last = lane.blockLast(block);
    const bound = lane.blockBound(block);
    bounds[block] = bound;
    const end = offset + (last >> shift);
    for (let w = offset + (first >> shift); w <= end; w++) if (bound > into[w]) into[w] = bound;
  }
}

/** The indexes of the `count` largest values (fewer when there are fewer). */
function largest(values: Float64Array, count: number): number[] {
  const picked: number[] = [];
  for (let i = 0; i < values.length; i++) {
    if (picked.length === count && values[i] <= values[picked[count - 1]]) continue;
    let at = picked.length < count ? picked.length : count - 1;
    if (picked.length < count) picked.push(i);
    while (at > 0 && values[picked[at - 1]] < values[i]) {
      picked[at] = picked[at - 1];
      at--;
    }
    picked[at] = i;
  }
  return picked;
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
 * The exact top k among the notes scored whole: those whose sum is within
 * the slack of the k-th are scored again with the shares summed in query-term
 * order, as every scorer sums.
 */
function rescore(index: MemoryIndex, lists: TermPostings[], weights: number[], averages: Fields<number>, state: Ranking, k: number): Ranked[] {
  const cut = Math.max(state.best.floor, state.threshold) / (SLACK * SLACK);
  let finalists: number[] = [];
  for (let f = 0; f < state.finalOrdinals.length; f++) if (state.finalScores[f] >= cut) finalists.push(state.finalOrdinals[f]);
  finalists.sort((a, b) => a - b);
  finalists = finalists.filter((ordinal, f) => f === 0 || finalists[f - 1] !== ordinal);
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
    for (let f = 0; f < ordinals.length; f++) if (cursor.leap(ordinals[f])) scores[f] += share(ordinals[f]);
  }
  return scores;
}
