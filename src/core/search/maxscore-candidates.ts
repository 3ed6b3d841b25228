// A window's candidates under block-max MaxScore (maxscore.ts): the notes the
// essential terms hold that can still reach the threshold, with their partial sums.
import { BLOCK_SHIFT } from "./memory-index.ts";
import { readFieldCounts } from "./term-postings.ts";
import { BM25F, SLACK, weightedFrequencyOf } from "./ranking.ts";
import type { Lane, Ranking } from "./maxscore-state.ts";

/**
 * The window's candidates when several terms are essential: their postings
 * added up per note (scoreEssential), then the notes that can reach the
 * threshold with the non-essential terms' bounds, first the window's
 * (`below`), then those of the blocks the note falls in. Returns how many.
 */
export function candidatesOfMany(state: Ranking, low: number, high: number, essential: number, below: number, above: number): number {
  const { lanes, order, windowBounds, windows } = state;
  const { scores, touched, candidates, partial, remaining } = state.scratch;
  const w = low >> state.windowShift;
  let count = 0;
  for (let e = essential; e < lanes.length; e++) {
    const t = order[e];
    count = scoreEssential(state, lanes[t], low, high, below + above - windowBounds[t * windows + w], count);
  }
  touched.subarray(0, count).sort();
  const live = state.index.liveFlags;
  const accept = state.accept;
  // A partial sum is at most the note's score: the k-th best of the window's is a lower bound of the final k-th.
  const partials = state.partials;
  partials.reset();
  for (let c = 0; c < count; c++) {
    const ordinal = touched[c];
    if (live[ordinal] === 1 && (accept === undefined || accept(ordinal))) partials.offer(scores[ordinal - low]);
  }
  if (partials.floor / SLACK > state.threshold) state.threshold = partials.floor / SLACK;
  const threshold = state.threshold;
  let n = 0;
  for (let c = 0; c < count; c++) {
    const ordinal = touched[c];
    const score = scores[ordinal - low];
    scores[ordinal - low] = 0;
    if (threshold >= (score + below) * SLACK || live[ordinal] !== 1 || (accept !== undefined && !accept(ordinal))) continue;
    let rest = 0;
    for (let e = 0; e < essential; e++) rest += lanes[order[e]].boundAt(ordinal);
    if (threshold >= (score + rest) * SLACK) continue;
    candidates[n] = ordinal;
    partial[n] = score;
    remaining[n++] = rest;
  }
  return n;
}

/**
 * The window's candidates when one term is essential: its notes in [low,
 * high) whose share can reach the threshold with the non-essential terms'
 * bounds, first those of the blocks overlapping its block (a block that
 * cannot is not decoded; a posting whose frequency is too small for it is
 * dismissed before its share is computed), then those of the blocks the note
 * falls in. Returns how many.
 */
export function candidatesOfOne(state: Ranking, lane: Lane, low: number, high: number, essential: number, below: number): number {
  if (!lane.position(low)) return 0;
  const { lanes, order } = state;
  const { candidates, partial, remaining } = state.scratch;
  const live = state.index.liveFlags;
  const accept = state.accept;
  const lengths = state.index.lengths;
  const averages = state.averages;
  const threshold = state.threshold;
  const { b, weights } = BM25F;
  const bodyWeight = weights[2];
  const bodyB = b[2];
  const bodyAverage = averages[2];
  // The body's length normalisation as a product (for dismissing, not scoring).
  const bodyBase = 1 - bodyB;
  const bodyPerTerm = bodyB / bodyAverage;
  const k1 = BM25F.k1;
  const weight = lane.weight;
  const data = lane.data;
  const fields = state.scratch.fields;
  const size = lane.size;
  const bounds = lane.bounds;
  let at = lane.at;
  let read = lane.read;
  let previous = lane.previous;
  let n = 0;
  blocks: while (read < size) {
    const block = read >> BLOCK_SHIFT;
    const blockLast = lane.blockLast(block);
    const blockEnd = Math.min((block + 1) << BLOCK_SHIFT, size);
    const first = Math.max(low, (block === 0 ? -1 : lane.skips![2 * block - 2]) + 1);
    let others = 0;
    for (let e = 0; e < essential; e++) others += lanes[order[e]].rangeBound(first, Math.min(blockLast, high - 1));
    if (others > below) others = below;
    if (threshold >= (bounds[block] + others) * SLACK) {
      // No note of this block can enter: skip it whole, or stop at the window's end.
      if (blockLast >= high || block >= lane.complete) break;
      at = lane.skips![2 * block + 1];
      previous = blockLast;
      read = blockEnd;
      continue;
    }
    // The frequency a body-only posting needs (below it, its share cannot lift the note to the threshold; a margin of the slack squared).
    const needed = (threshold / (SLACK * SLACK) - others) / weight;
    const frequency = needed <= 0 ? 0 : (k1 * needed) / (k1 + 1 - needed);
    while (read < blockEnd) {
      let v = data[at];
      let next = at + 1;
      if (v >= 128) {
        v &= 127;
        let shift = 7;
        let byte: number;
        do {
          byte = data[next++];
          v |= (byte & 127) << shift;
          shift += 7;
        } while (byte >= 128);
      }
      const ordinal = previous + (v >>> 2);
      if (ordinal >= high) break blocks;
      at = next;
      previous = ordinal;
      read++;
      const code = v & 3;
      let weighted: number;
      if (code !== 3) {
        if (ordinal < low) continue;
        const length = lengths[3 * ordinal + 2];
        if (bodyWeight * (code + 1) < frequency * (bodyBase + bodyPerTerm * length)) continue;
        weighted = 0 + (bodyWeight * (code + 1)) / (1 - bodyB + (bodyB * length) / bodyAverage);
      } else {
        at = readFieldCounts(data, at, fields);
        if (ordinal < low) continue;
        const o = 3 * ordinal;
        weighted = weightedFrequencyOf(fields[1], fields[2], fields[0], lengths[o], lengths[o + 1], lengths[o + 2], averages);
      }
      const score = weight * ((weighted * (k1 + 1)) / (weighted + k1));
      if (threshold >= (score + others) * SLACK) continue;
      let rest = 0;
      for (let e = 0; e < essential; e++) rest += lanes[order[e]].boundAt(ordinal);
      if (threshold >= (score + rest) * SLACK || live[ordinal] !== 1 || (accept !== undefined && !accept(ordinal))) continue;
      candidates[n] = ordinal;
      partial[n] = score;
      remaining[n++] = rest;
    }
  }
  lane.at = at;
  lane.read = read;
  lane.previous = previous;
  return n;
}

/**
 * Adds the lane's share of each of its notes in [low, high) to the window's
 * partial scores, listing the notes first touched; a block whose bound plus
 * `others` (what the other terms add at most) cannot reach the threshold is
 * not decoded. Returns the new count of touched notes.
 */
function scoreEssential(state: Ranking, lane: Lane, low: number, high: number, others: number, count: number): number {
  if (!lane.position(low)) return count;
  const { scores, touched } = state.scratch;
  const lengths = state.index.lengths;
  const averages = state.averages;
  const threshold = state.threshold;
  const { b, weights } = BM25F;
  const bodyWeight = weights[2];
  const bodyB = b[2];
  const bodyAverage = averages[2];
  const k1 = BM25F.k1;
  const weight = lane.weight;
  const data = lane.data;
  const fields = state.scratch.fields;
  const size = lane.size;
  let at = lane.at;
  let read = lane.read;
  let previous = lane.previous;
  let n = count;
  blocks: while (read < size) {
    const block = read >> BLOCK_SHIFT;
    const blockLast = lane.blockLast(block);
    const blockEnd = Math.min((block + 1) << BLOCK_SHIFT, size);
    if (threshold >= (lane.blockBound(block) + others) * SLACK) {
      // No note of this block can enter: skip it whole, or stop at the window's end.
      if (blockLast >= high || block >= lane.complete) break;
      at = lane.skips![2 * block + 1];
      previous = blockLast;
      read = blockEnd;
      continue;
    }
    while (read < blockEnd) {
      let v = data[at];
      let next = at + 1;
      if (v >= 128) {
        v &= 127;
        let shift = 7;
        let byte: number;
        do {
          byte = data[next++];
          v |= (byte & 127) << shift;
          shift += 7;
        } while (byte >= 128);
      }
      const ordinal = previous + (v >>> 2);
      if (ordinal >= high) break blocks;
      at = next;
      previous = ordinal;
      read++;
      const code = v & 3;
      let weighted: number;
      if (code !== 3) {
        if (ordinal < low) continue;
        // The body-only case inline: the same operations as weightedFrequencyOf with zero title and tags counts.
        weighted = 0 + (bodyWeight * (code + 1)) / (1 - bodyB + (bodyB * lengths[3 * ordinal + 2]) / bodyAverage);
      } else {
        at = readFieldCounts(data, at, fields);
        if (ordinal < low) continue;
        const o = 3 * ordinal;
        weighted = weightedFrequencyOf(fields[1], fields[2], fields[0], lengths[o], lengths[o + 1], lengths[o + 2], averages);
      }
      const slot = ordinal - low;
      const before = scores[slot];
      if (before === 0) touched[n++] = ordinal;
      scores[slot] = before + weight * ((weighted * (k1 + 1)) / (weighted + k1));
    }
  }
  lane.at = at;
  lane.read = read;
  lane.previous = previous;
  return n;
}
