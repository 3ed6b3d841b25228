// One window of block-max MaxScore (maxscore.ts): which terms are essential
// there, their candidates (maxscore-candidates.ts), the non-essential terms
// added to them, and the notes kept for the final rescoring.
import { BLOCK_SHIFT } from "./memory-index.ts";
import { HALF, readFieldCounts } from "./term-postings.ts";
import { BM25F, SLACK, weightedFrequencyOf } from "./ranking.ts";
import { candidatesOfMany, candidatesOfOne } from "./maxscore-candidates.ts";
import type { Lane, Ranking } from "./maxscore-state.ts";

/** Scores window `w` (see rankInMemory): its notes that may enter are scored whole and kept. */
export function scoreWindow(state: Ranking, w: number): void {
  const { lanes, windowBounds, windows, order } = state;
  const m = lanes.length;
  const low = w << state.windowShift;
  const high = low + (1 << state.windowShift);
  // Terms by window bound, smallest first (insertion sort: a query has few terms).
  for (let t = 0; t < m; t++) {
    const bound = windowBounds[t * windows + w];
    let at = t;
    while (at > 0 && windowBounds[order[at - 1] * windows + w] > bound) {
      order[at] = order[at - 1];
      at--;
    }
    order[at] = t;
  }
  // The non-essential terms: order[0 .. essential).
  let essential = 0;
  let below = 0;
  while (essential < m && state.threshold >= (below + windowBounds[order[essential] * windows + w]) * SLACK) below += windowBounds[order[essential++] * windows + w];
  if (essential === m) return;
  let above = 0;
  for (let e = essential; e < m; e++) above += windowBounds[order[e] * windows + w];

  for (let e = 0; e < essential; e++) lanes[order[e]].shallow = lanes[order[e]].findBlock(low, 0);
  const n =
    essential === m - 1
      ? candidatesOfOne(state, lanes[order[essential]], low, high, essential, below)
      : candidatesOfMany(state, low, high, essential, below, above);
  // The non-essential terms, largest bound first, each for the candidates left.
  let kept = n;
  for (let e = essential - 1; e >= 0 && kept > 0; e--) kept = addNonEssential(state, lanes[order[e]], low, kept);
  const { candidates, partial } = state.scratch;
  const best = state.best;
  for (let c = 0; c < kept; c++) {
    const score = partial[c];
    if (score * SLACK * SLACK < state.threshold) continue;
    best.offer(score);
    state.finalOrdinals.push(candidates[c]);
    state.finalScores.push(score);
  }
  const floor = best.floor / SLACK;
  if (floor > state.threshold) state.threshold = floor;
}

/**
 * Adds the lane's share to each candidate (ascending ordinals in the window
 * starting at `low`, partial sums and what the terms not added yet give at
 * most beside them) that holds the term, in place of the bound of the lane's
 * block it falls in, and drops those that can no longer reach the threshold.
 * Returns the candidates kept (moved to the front).
 */
function addNonEssential(state: Ranking, lane: Lane, low: number, count: number): number {
  const threshold = state.threshold;
  const { candidates, partial, remaining } = state.scratch;
  let kept = 0;
  const present = lane.position(low);
  const lengths = state.index.lengths;
  const averages = state.averages;
  const { b, weights } = BM25F;
  const bodyWeight = weights[2];
  const bodyB = b[2];
  const bodyAverage = averages[2];
  const k1 = BM25F.k1;
  const weight = lane.weight;
  const data = lane.data;
  const fields = state.scratch.fields;
  const skips = lane.skips;
  const halves = lane.halves;
  const bounds = lane.bounds;
  const size = lane.size;
  const complete = lane.complete;
  const blocks = lane.blocks;
  let at = lane.at;
  let read = lane.read;
  let previous = lane.previous;
  let block = present ? read >> BLOCK_SHIFT : blocks;
  for (let c = 0; c < count; c++) {
    const target = candidates[c];
    let score = partial[c];
    // The block the target falls in, as boundAt() found it.
    while (block < complete && skips![2 * block] < target) block++;
    if (block === complete && target > lane.last) block = blocks;
    if (block < blocks) {
      const rest = remaining[c] - bounds[block];
      if (read >> BLOCK_SHIFT !== block) {
        at = skips![2 * block - 1];
        previous = skips![2 * block - 2];
        read = block << BLOCK_SHIFT;
      }
      // From the block's half entry when the target is past it (TermPostings.halves).
      const half = (block << BLOCK_SHIFT) + HALF;
      if (halves !== null && half > read && half <= size && halves[2 * block] < target) {
        at = halves[2 * block + 1];
        previous = halves[2 * block];
        read = half;
      }
      // Decode up to the target.
      while (read < size) {
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
        if (ordinal > target) break;
        at = next;
        previous = ordinal;
        read++;
        const code = v & 3;
        if (code === 3) at = readFieldCounts(data, at, fields);
        if (ordinal < target) continue;
        const o = 3 * ordinal;
        const weighted =
          code !== 3
            ? 0 + (bodyWeight * (code + 1)) / (1 - bodyB + (bodyB * lengths[o + 2]) / bodyAverage)
            : weightedFrequencyOf(fields[1], fields[2], fields[0], lengths[o], lengths[o + 1], lengths[o + 2], averages);
        score += weight * ((weighted * (k1 + 1)) / (weighted + k1));
        break;
      }
      if (threshold >= (score + rest) * SLACK) continue;
      remaining[kept] = rest;
    } else {
      remaining[kept] = remaining[c];
    }
    candidates[kept] = target;
    partial[kept++] = score;
  }
  lane.at = at;
  lane.read = read;
  lane.previous = previous;
  return kept;
}
