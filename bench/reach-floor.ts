// The least the similar-notes lookup's step 1 can cost (issue 21): reaching
// holders as own-score.ts's rule does (decode each posting, add its BM25F share
// to the holder's accumulator, log it), over synthetic postings small enough
// to stay in cache, with nothing else running. The lookup reaches up to
// SIMILAR_REACH holders a note, so this times what that many cost at best:
//   bun bench/reach-floor.ts
// docs/benchmarks.md ("What the similar-notes lookup costs at least") sets it
// beside a create's own CPU.
import { readFileSync } from "node:fs";
import { SIMILAR_REACH } from "../src/core/similar.ts";
import { PostingCursor, TermPostings } from "../src/core/search/term-postings.ts";
import { saturate, weightedFrequencyOf } from "../src/core/search/ranking.ts";

const NOTES = 100_000;
const TERMS = 12;
/** Every term is held by the newest notes (a replay loop's commons) and by a share of the older ones. */
const lists = Array.from({ length: TERMS }, (_, t) => {
  const list = new TermPostings(16);
  for (let ordinal = 0; ordinal < NOTES; ordinal++) {
    if (ordinal % (t + 1) === 0 || ordinal > NOTES - 5000) list.push(ordinal, t === 0 ? 1 : 0, 0, 1 + (ordinal % 2));
  }
  return list;
});
const lengths = Int32Array.from({ length: 3 * NOTES }, (_, i) => (i % 3 === 2 ? 20 + (i % 7) : i % 3 === 0 ? 5 : 1));
const live = new Uint8Array(NOTES).fill(1);
const accumulators = new Float64Array(NOTES);
const touched = new Int32Array(NOTES);
const averages: [number, number, number] = [5, 1, 23];
const perTerm = Math.ceil(SIMILAR_REACH / TERMS);
const logOrdinals = new Int32Array(2 * SIMILAR_REACH);
const logShares = new Float64Array(2 * SIMILAR_REACH);

/** One lookup's step 1: each term's newest ~perTerm holders reached; returns how many postings were read. */
function reach(): number {
  let reached = 0;
  let logged = 0;
  for (let t = 0; t < TERMS; t++) {
    const list = lists[t];
    const cursor = new PostingCursor(list);
    cursor.toBlock(Math.max(1, (list.size - perTerm) >> 7));
    const idf = 0.5 + t / 10;
    while (cursor.next()) {
      const ordinal = cursor.ordinal;
      if (live[ordinal] !== 1) continue;
      if (accumulators[ordinal] === 0) touched[reached++] = ordinal;
      const o = 3 * ordinal;
      const share = idf * saturate(weightedFrequencyOf(cursor.title, cursor.tags, cursor.body, lengths[o], lengths[o + 1], lengths[o + 2], averages));
      accumulators[ordinal] += share;
      logOrdinals[logged] = ordinal;
      logShares[logged++] = share;
    }
  }
  for (let i = 0; i < reached; i++) accumulators[touched[i]] = 0;
  return logged;
}

for (let i = 0; i < 2000; i++) reach(); // warm-up: compiled before timing
const passes = 5000;
const start = performance.now();
let read = 0;
for (let i = 0; i < passes; i++) read += reach();
const ms = performance.now() - start;
console.log(
  `postings read a pass: ${read / passes} (SIMILAR_REACH ${SIMILAR_REACH}); µs a pass: ${((ms * 1000) / passes).toFixed(1)}; ns a posting: ${((ms * 1e6) / read).toFixed(1)}; load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
);
