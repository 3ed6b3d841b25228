// Exact top-k over in-memory postings: document-at-a-time MaxScore (Turtle &
// Flood 1995, as PISA and Lucene run it). Why it is exact, and how it meets
// the tie order: docs/design.md, "Search".
import type { Fields } from "./analyzer.ts";
import type { MemoryIndex, TermPostings } from "./memory-index.ts";
import { idf, saturate, TopK, weightedFrequencyOf, type Ranked } from "./ranking.ts";

/** First position at or after `from` whose ordinal is at least `target` (galloping, then binary search). */
function seek(ordinals: Int32Array, size: number, from: number, target: number): number {
  if (from >= size || ordinals[from] >= target) return from;
  let low = from;
  let step = 1;
  let high = from + 1;
  while (high < size && ordinals[high] < target) {
    low = high;
    step *= 2;
    high = low + step;
  }
  if (high > size) high = size;
  // ordinals[low] < target; the answer is in (low, high].
  while (low + 1 < high) {
    const middle = (low + high) >>> 1;
    if (ordinals[middle] < target) low = middle;
    else high = middle;
  }
  return high;
}

/**
 * The top `k` notes by BM25F among all notes holding any of `terms` (index
 * terms, distinct), exactly as if every such note were scored; more than `k`
 * when notes tie with the k-th.
 *
 * Terms are ordered by their bound (what they can add to any note at most),
 * smallest first. The longest prefix whose bounds together cannot reach the
 * k-th score is "non-essential": a note holding only those terms cannot enter,
 * so candidates come only from the other terms' postings, walked together in
 * ordinal order; a candidate's non-essential terms are looked up (largest
 * bound first) only while it can still reach the k-th score.
 */
export function rankInMemory(index: MemoryIndex, terms: string[], k: number): Ranked[] {
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
  const bounds = lists.map((postings, i) => weights[i] * saturate(index.maxWeighted(postings, averages)));
  // Terms by bound, smallest first; prefix[j]: the bounds of order[0..j] summed.
  const order = lists.map((_, i) => i).sort((a, b) => bounds[a] - bounds[b] || a - b);
  const prefix: number[] = [];
  order.reduce((sum, i, j) => (prefix[j] = sum + bounds[i]), 0);

  const lengths = index.lengths;
  const positions = new Array<number>(m).fill(0);
  const shares = new Array<number>(m).fill(0);
  const counts: Fields<number> = [0, 0, 0];
  const share = (i: number, at: number, ordinal: number) => {
    lists[i].countsAt(at, counts);
    const o = 3 * ordinal;
    return weights[i] * saturate(weightedFrequencyOf(counts[0], counts[1], counts[2], lengths[o], lengths[o + 1], lengths[o + 2], averages));
  };

  const top = new TopK(k);
  let firstEssential = 0;
  while (firstEssential < m) {
    let candidate = Infinity;
    for (let j = firstEssential; j < m; j++) {
      const i = order[j];
      const list = lists[i];
      if (positions[i] < list.size && list.ordinals[positions[i]] < candidate) candidate = list.ordinals[positions[i]];
    }
    if (candidate === Infinity) break;
    let partial = 0;
    shares.fill(0);
    for (let j = firstEssential; j < m; j++) {
      const i = order[j];
      const list = lists[i];
      const at = positions[i];
      if (at < list.size && list.ordinals[at] === candidate) {
        positions[i] = at + 1;
        shares[i] = share(i, at, candidate);
        partial += shares[i];
      }
    }
    if (!index.isLive(candidate)) continue;
    let reachable = true;
    for (let j = firstEssential - 1; j >= 0; j--) {
      if (top.excludes(partial + prefix[j])) {
        reachable = false;
        break;
      }
      const i = order[j];
      const list = lists[i];
      const at = seek(list.ordinals, list.size, positions[i], candidate);
      positions[i] = at;
      if (at < list.size && list.ordinals[at] === candidate) {
        shares[i] = share(i, at, candidate);
        partial += shares[i];
      }
    }
    if (!reachable) continue;
    // Summed in query-term order, as every other scorer sums (the same float for the same note).
    let score = 0;
    for (let i = 0; i < m; i++) score += shares[i];
    const before = top.threshold;
    top.offer(index.keyOf(candidate), score);
    if (top.threshold !== before) {
      while (firstEssential < m && top.excludes(prefix[firstEssential])) firstEssential++;
    }
  }
  return top.items;
}
