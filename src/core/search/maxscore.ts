// Exact top-k over the in-memory postings: document at a time in windows of
// ordinals with block-max MaxScore (Turtle & Flood 1995; per-window bounds as
// in Lucene's MaxScoreBulkScorer, per-block bounds as in Ding & Suel 2011 and
// PISA's block_max_maxscore), then an exact rescoring in query order. Why it
// is exact, and how it meets the tie order: docs/design.md, "Search".
import type { Fields } from "./analyzer.ts";
import { BLOCK_SHIFT, PostingCursor, type MemoryIndex, type TermPostings } from "./memory-index.ts";
import { BM25F, idf, saturate, SLACK, TopK, weightedFrequencyOf, type Ranked } from "./ranking.ts";

/** Ordinals per window: the unit whose bounds decide which terms must be read (docs/search-index.md, "Ranking over them"). */
export const WINDOW_SHIFT = 12;
/** Windows of the largest bounds scored first, before the pass in ordinal order: they raise the k-th score early. */
const SEED_WINDOWS = 4;

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
 * One query term's postings as ranking reads them: a cursor (the next
 * posting starts at byte `at`, is the `read`-th, and follows ordinal
 * `previous`), and the bounds of what the term adds to a note: over the whole
 * list (`bound`) and per block of 2^BLOCK_SHIFT postings.
 */
class Lane {
  readonly data: Uint8Array;
  readonly skips: Int32Array | null;
  readonly blockMax: Float32Array | null;
  readonly size: number;
  readonly length: number;
  readonly last: number;
  /** Complete blocks (each with a skip entry), and all blocks (the last may be partial). */
  readonly complete: number;
  readonly blocks: number;
  at = 0;
  read = 0;
  previous = -1;
  /** Per block, what the term adds at most to a note of it (filled by windowMaxima). */
  bounds: Float64Array = EMPTY;
  /** A second, undecoding walker: the block of the last note whose bound was asked. */
  shallow = 0;

  constructor(
    list: TermPostings,
    readonly weight: number,
    readonly drift: number,
    readonly bound: number,
  ) {
    this.data = list.data;
    this.skips = list.skips;
    this.blockMax = list.blockMax;
    this.size = list.size;
    this.length = list.length;
    this.last = list.last;
    this.complete = list.size >> BLOCK_SHIFT;
    this.blocks = Math.ceil(list.size / (1 << BLOCK_SHIFT));
  }

  /** What the term adds at most to a note of block `block` (computed from the stored block maximum: see `bounds` for the array). */
  blockBound(block: number): number {
    const blockMax = this.blockMax;
    return blockMax !== null && block < blockMax.length ? this.weight * saturate(blockMax[block] * this.drift) : this.bound;
  }

  /** The last ordinal of block `block`. */
  blockLast(block: number): number {
    return block < this.complete ? this.skips![2 * block] : this.last;
  }

  /** The first block, from `from` on, whose last ordinal is at least `target`; `blocks` when none is. */
  findBlock(target: number, from: number): number {
    const skips = this.skips;
    let low = from;
    let high = this.complete;
    if (skips !== null) {
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (skips[2 * middle] < target) low = middle + 1;
        else high = middle;
      }
    }
    if (low < this.complete) return low;
    return target <= this.last ? this.complete : this.blocks;
  }

  /** The bound of the block `ordinal` would be in (0 past the last posting), from the shallow walker (ordinals asked in ascending order). */
  boundAt(ordinal: number): number {
    let block = this.shallow;
    const skips = this.skips;
    while (block < this.complete && skips![2 * block] < ordinal) block++;
    if (block === this.complete && ordinal > this.last) block = this.blocks;
    this.shallow = block;
    return block < this.blocks ? this.bounds[block] : 0;
  }

  /** The largest bound of the blocks holding ordinals in [first, last] (ascending ranges, with boundAt's walker). */
  rangeBound(first: number, last: number): number {
    const skips = this.skips;
    const complete = this.complete;
    let block = this.shallow;
    while (block < complete && skips![2 * block] < first) block++;
    if (block === complete && first > this.last) block = this.blocks;
    this.shallow = block;
    if (block >= this.blocks) return 0;
    let bound = this.bounds[block];
    while (block < complete && skips![2 * block] < last) {
      block++;
      if (block < this.blocks && this.bounds[block] > bound) bound = this.bounds[block];
    }
    return bound;
  }

  /** Moves the cursor to the first posting of block `block`. */
  toBlock(block: number): void {
    if (block === 0) {
      this.at = 0;
      this.previous = -1;
    } else {
      this.at = this.skips![2 * block - 1];
      this.previous = this.skips![2 * block - 2];
    }
    this.read = block << BLOCK_SHIFT;
  }

  /** Moves the cursor to the start of the block holding the first posting at or past `target`, unless it is already in that block before `target`; false when no posting is at or past it. */
  position(target: number): boolean {
    const current = this.read >> BLOCK_SHIFT;
    const block = this.findBlock(target, this.previous < target ? Math.min(current, this.complete) : 0);
    if (block >= this.blocks) return false;
    if (block !== current || this.previous >= target) this.toBlock(block);
    return true;
  }
}

const EMPTY = new Float64Array(0);

/** Ranking's scratch, kept by the index between queries (MemoryIndex.rankingScratch). */
interface Scratch {
  /** Partial scores of the window's notes by ordinal - window start (all zero between windows). */
  scores: Float64Array;
  touched: Int32Array;
  /** The window's candidates (ascending ordinals), their partial sums, and what the terms not yet added give them at most. */
  candidates: Int32Array;
  partial: Float64Array;
  remaining: Float64Array;
  /** The lanes' block bounds, one after the other. */
  bounds: Float64Array;
}

function scratchOf(index: MemoryIndex, window: number, blocks: number): Scratch {
  let scratch = index.rankingScratch as Scratch | null;
  if (!scratch || scratch.scores.length < window) {
    scratch = {
      scores: new Float64Array(window),
      touched: new Int32Array(window),
      candidates: new Int32Array(window),
      partial: new Float64Array(window),
      remaining: new Float64Array(window),
      bounds: scratch?.bounds ?? EMPTY,
    };
  }
  if (scratch.bounds.length < blocks) scratch.bounds = new Float64Array(Math.max(blocks, 2 * scratch.bounds.length));
  index.rankingScratch = scratch;
  return scratch;
}

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

interface Ranking {
  index: MemoryIndex;
  /** Ordinals per window, as a power of two. */
  windowShift: number;
  lanes: Lane[];
  averages: Fields<number>;
  accept: ((ordinal: number) => boolean) | undefined;
  windows: number;
  /** Per term (windows apart), its bound per window. */
  windowBounds: Float64Array;
  /** A lower bound of the final k-th score. */
  threshold: number;
  /** The k-th best partial sum of the notes scored whole. */
  best: Best;
  /** Scratch: the k best partial sums of a window's notes. */
  partials: Best;
  /** Notes scored whole whose sum may reach the final k-th, with their sums. */
  finalOrdinals: number[];
  finalScores: number[];
  /** Scratch: the terms of a window by bound. */
  order: Int32Array;
  scratch: Scratch;
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

/** Scores window `w` (see rankInMemory): its notes that may enter are scored whole and kept. */
function scoreWindow(state: Ranking, w: number): void {
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
 * The window's candidates when several terms are essential: their postings
 * added up per note (scoreEssential), then the notes that can reach the
 * threshold with the non-essential terms' bounds, first the window's
 * (`below`), then those of the blocks the note falls in. Returns how many.
 */
function candidatesOfMany(state: Ranking, low: number, high: number, essential: number, below: number, above: number): number {
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
function candidatesOfOne(state: Ranking, lane: Lane, low: number, high: number, essential: number, below: number): number {
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
        let f = data[at++];
        if (f >= 128) {
          f &= 127;
          let shift = 7;
          let byte: number;
          do {
            byte = data[at++];
            f |= (byte & 127) << shift;
            shift += 7;
          } while (byte >= 128);
        }
        let title = 0;
        let tags = 0;
        if (f & 1) {
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
        if (ordinal < low) continue;
        const o = 3 * ordinal;
        weighted = weightedFrequencyOf(title, tags, f >>> 1, lengths[o], lengths[o + 1], lengths[o + 2], averages);
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
        let f = data[at++];
        if (f >= 128) {
          f &= 127;
          let shift = 7;
          let byte: number;
          do {
            byte = data[at++];
            f |= (byte & 127) << shift;
            shift += 7;
          } while (byte >= 128);
        }
        let title = 0;
        let tags = 0;
        if (f & 1) {
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
        if (ordinal < low) continue;
        const o = 3 * ordinal;
        weighted = weightedFrequencyOf(title, tags, f >>> 1, lengths[o], lengths[o + 1], lengths[o + 2], averages);
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
  const skips = lane.skips;
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
        let title = 0;
        let tags = 0;
        let body = code + 1;
        if (code === 3) {
          let f = data[at++];
          if (f >= 128) {
            f &= 127;
            let shift = 7;
            let byte: number;
            do {
              byte = data[at++];
              f |= (byte & 127) << shift;
              shift += 7;
            } while (byte >= 128);
          }
          body = f >>> 1;
          if (f & 1) {
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
        if (ordinal < target) continue;
        const o = 3 * ordinal;
        const weighted =
          code !== 3
            ? 0 + (bodyWeight * body) / (1 - bodyB + (bodyB * lengths[o + 2]) / bodyAverage)
            : weightedFrequencyOf(title, tags, body, lengths[o], lengths[o + 1], lengths[o + 2], averages);
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
