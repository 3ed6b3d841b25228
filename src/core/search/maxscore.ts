// Exact top-k over in-memory postings: document-at-a-time MaxScore (Turtle &
// Flood 1995, as PISA and Lucene run it). Why it is exact, and how it meets
// the tie order: docs/design.md, "Search".
import type { Fields } from "./analyzer.ts";
import { BLOCK_SHIFT, type MemoryIndex, type TermPostings } from "./memory-index.ts";
import { BM25F, idf, saturate, SLACK, TopK, weightedFrequencyOf, type Ranked } from "./ranking.ts";

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
 * bound first) only while it can still reach the k-th score. With `floor`,
 * only notes scoring at least that much are wanted: it prunes from the start.
 * With `candidateTerms`, candidates come only from those terms' postings (the
 * others are non-essential from the start): no longer exact, a note holding
 * none of them is never scored; with `maxCandidates`, the walk stops after
 * that many candidates (the similar-notes lookup, docs/design.md "Similar
 * notes").
 */
export function rankInMemory(
  index: MemoryIndex,
  terms: string[],
  k: number,
  floor = -Infinity,
  candidateTerms?: ReadonlySet<string>,
  maxCandidates = Infinity,
): Ranked[] {
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
  // Per term: the factor that makes its cached bounds valid now, and its bound (the most it adds to any note).
  const drifts = lists.map((postings) => index.bounds(postings, averages));
  const bounds = lists.map((postings, i) => weights[i] * saturate(postings.maxWeighted * drifts[i]));
  const blockBound = (i: number, at: number) => weights[i] * saturate(lists[i].blockBound(at) * drifts[i]);
  // Terms by bound, smallest first; prefix[j]: the bounds of order[0..j] summed.
  const listTerms = candidateTerms ? terms.filter((term) => index.postings(term)) : [];
  const forced = (i: number) => (candidateTerms && !candidateTerms.has(listTerms[i]) ? 0 : 1);
  const order = lists.map((_, i) => i).sort((a, b) => forced(a) - forced(b) || bounds[a] - bounds[b] || a - b);
  const prefix: number[] = [];
  order.reduce((sum, i, j) => (prefix[j] = sum + bounds[i]), 0);

  const lengths = index.lengths;
  const positions = new Array<number>(m).fill(0);
  const shares = new Array<number>(m).fill(0);
  const counts: Fields<number> = [0, 0, 0];
  const { b, weights: fieldWeights } = BM25F;
  // The body-only case (most postings) computed inline: the same operations as
  // weightedFrequencyOf with zero title and tags counts, so the same float.
  const bodyWeight = fieldWeights[2];
  const bodyB = b[2];
  const bodyAverage = averages[2];
  const share = (i: number, at: number, ordinal: number) => {
    const list = lists[i];
    const o = 3 * ordinal;
    const packed = list.counts[at];
    if (packed > 0 && packed <= 0xffff) {
      return weights[i] * saturate(0 + (bodyWeight * packed) / (1 - bodyB + (bodyB * lengths[o + 2]) / bodyAverage));
    }
    list.countsAt(at, counts);
    return weights[i] * saturate(weightedFrequencyOf(counts[0], counts[1], counts[2], lengths[o], lengths[o + 1], lengths[o + 2], averages));
  };

  const top = new TopK(k);
  // top.excludes(bound), with the k-th score kept in a local between offers.
  let threshold = floor;
  const excluded = (bound: number) => threshold >= bound * SLACK;
  let firstEssential = candidateTerms ? order.filter((i) => forced(i) === 0).length : 0;
  while (firstEssential < m && excluded(prefix[firstEssential])) firstEssential++;
  // Block-max skipping: the k-th score and ordinal up to which the last check failed (not checked again until either moves).
  let checkedAt = -Infinity;
  let checkedUntil = -1;
  while (firstEssential < m) {
    let candidate = Infinity;
    for (let j = firstEssential; j < m; j++) {
      const i = order[j];
      const list = lists[i];
      if (positions[i] < list.size && list.ordinals[positions[i]] < candidate) candidate = list.ordinals[positions[i]];
    }
    if (candidate === Infinity) break;
    if (threshold > -Infinity && (candidate > checkedUntil || threshold !== checkedAt)) {
      // Every note up to `until` holds, of each essential term, at most a posting of its current
      // block: when those blocks' bounds plus the non-essential terms' cannot reach the k-th
      // score, no such note can enter, and every essential cursor moves past `until`.
      let bound = firstEssential > 0 ? prefix[firstEssential - 1] : 0;
      let until = Infinity;
      for (let j = firstEssential; j < m; j++) {
        const i = order[j];
        const list = lists[i];
        const at = positions[i];
        if (at >= list.size) continue;
        bound += blockBound(i, at);
        const last = list.ordinals[Math.min(list.size, ((at >> BLOCK_SHIFT) + 1) << BLOCK_SHIFT) - 1];
        if (last < until) until = last;
      }
      if (excluded(bound)) {
        for (let j = firstEssential; j < m; j++) {
          const i = order[j];
          const list = lists[i];
          positions[i] = seek(list.ordinals, list.size, positions[i], until + 1);
        }
        continue;
      }
      checkedAt = threshold;
      checkedUntil = until;
    }
    let partial = 0;
    for (let j = firstEssential; j < m; j++) {
      const i = order[j];
      const list = lists[i];
      const at = positions[i];
      if (at < list.size && list.ordinals[at] === candidate) {
        positions[i] = at + 1;
        shares[i] = share(i, at, candidate);
        partial += shares[i];
      } else {
        shares[i] = 0;
      }
    }
    if (!index.isLive(candidate)) continue;
    if (--maxCandidates < 0) break;
    let reachable = true;
    for (let j = firstEssential - 1; j >= 0; j--) {
      const i = order[j];
      shares[i] = 0;
      if (excluded(partial + prefix[j])) {
        reachable = false;
        break;
      }
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
    if ((top.full && score < top.threshold) || score < floor) continue;
    top.offer(index.keyOf(candidate), score);
    if (top.full && Math.max(floor, top.threshold) !== threshold) {
      threshold = Math.max(floor, top.threshold);
      while (firstEssential < m && excluded(prefix[firstEssential])) firstEssential++;
    }
  }
  return top.items;
}
