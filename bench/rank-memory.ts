// Ranking alone over in-memory postings built straight from generated notes
// (no database): the head-heavy corpus (bench/headheavy.ts) at sizes a
// seeded directory takes too long to write on a shared host:
//   bun bench/rank-memory.ts --notes 1000000 [--rounds 3] [--check N]
//   bun bench/rank-memory.ts --dir /tmp/h1m --save /tmp/h1m.postings   (postings built from a seeded directory, its keys.json's queries; dumped)
//   bun bench/rank-memory.ts --load /tmp/h1m.postings --queries /tmp/h1m (the dump read back: seconds instead of minutes)
// Prints the build time, the index's own byte count and the process RSS, and
// the latency of rankInMemory (what POST /v1/search runs after analysing the
// query; no HTTP, no SQL) over the corpus's 200 queries, beside an exhaustive
// scorer over the same postings (every posting of every query term decoded and
// summed in query order, no pruning): every top-10 must equal it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { termVector } from "../src/core/search/analyzer.ts";
import { rankInMemory } from "../src/core/search/maxscore.ts";
import { MemoryIndex } from "../src/core/search/memory-index.ts";
import { queryTerms, searchRequest } from "../src/core/search/query.ts";
import { BM25F, idf, saturate, TopK, weightedFrequencyOf, type Ranked } from "../src/core/search/ranking.ts";
import { encodeVector } from "../src/core/search/vector.ts";
import { SqliteStore } from "../src/store/sqlite/store.ts";
import { loadIndex, saveIndex } from "./index-file.ts";
import { headNote, headQueries } from "./headheavy.ts";
import { DEFAULT_SEED } from "./seed.ts";
import { percentile } from "./reference.ts";
import { benchArgs } from "./wrk.ts";

const args = benchArgs();
const notes = Number(args.notes ?? 1_000_000);
const rounds = Number(args.rounds ?? 3);
const seed = args.seed ?? DEFAULT_SEED;
void BM25F;

let index: MemoryIndex;
let postings = 0;
const started = performance.now();
if (args.load) {
  index = loadIndex(args.load);
  for (const [, term] of index.termEntries()) postings += term.size;
} else if (args.dir) {
  const store = new SqliteStore({ dataDir: args.dir, searchMemoryBytes: 8192 * 1048576 });
  await store.migrate();
  await store.searchIndex.memory.loaded();
  index = (await store.searchIndex.memory.current())!;
  for (const [, term] of index.termEntries()) postings += term.size;
  await store.close();
} else {
  index = new MemoryIndex();
  for (let i = 0; i < notes; i++) {
    const note = headNote(seed, i);
    const vector = termVector(note.title, note.tags, note.body);
    postings += vector.counts.size;
    index.add(i + 1, encodeVector(vector));
    if ((i + 1) % 100_000 === 0) console.error(`  ${i + 1} notes indexed`);
  }
  index.trim();
}
Bun.gc(true);
const buildSeconds = (performance.now() - started) / 1000;
if (args.save) saveIndex(index, args.save);
const rss = process.memoryUsage().rss / 1048576;
console.log(
  `${args.load ?? args.dir ?? "head-heavy"}, ${index.notes} notes, ${postings} postings: ${args.load ? "read" : "built"} in ${buildSeconds.toFixed(1)} s; index ${(index.bytes / 1048576).toFixed(0)} MB by its own count ` +
    `(${(index.bytes / postings).toFixed(2)} bytes per posting, ${(index.bytes / index.notes).toFixed(0)} per note), process RSS ${rss.toFixed(0)} MB, load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
);

/**
 * Every posting of every term scored, shares summed in query order (term by
 * term into one accumulator per note: adding the terms in query order gives
 * the float a note's shares summed in that order give).
 */
const sums = new Float64Array(index.ordinals);
const held = new Int32Array(index.ordinals);
function exhaustive(terms: string[], k: number): Ranked[] {
  const averages = index.lengthSums.map((sum) => Math.max(sum / index.notes, 1e-9)) as [number, number, number];
  const lengths = index.lengths;
  let count = 0;
  for (const term of terms) {
    const list = index.postings(term);
    if (!list) continue;
    const weight = idf(index.notes, list.notes);
    list.forEach((ordinal, title, tags, body) => {
      if (!index.isLive(ordinal)) return;
      const o = 3 * ordinal;
      if (sums[ordinal] === 0) held[count++] = ordinal;
      sums[ordinal] += weight * saturate(weightedFrequencyOf(title, tags, body, lengths[o], lengths[o + 1], lengths[o + 2], averages));
    });
  }
  const top = new TopK(k);
  for (let h = 0; h < count; h++) {
    top.offer(index.keyOf(held[h]), sums[held[h]]);
    sums[held[h]] = 0;
  }
  return top.items;
}

const source = { tierCounts: (terms: string[]) => terms.map((term) => [index.notesWith(term)]), vocabulary: (from: string, to: string) => index.vocabulary(from, to) };
const queryTexts = args.queries ? (JSON.parse(readFileSync(join(args.queries, "keys.json"), "utf8")) as { queries: string[] }).queries : args.dir ? (JSON.parse(readFileSync(join(args.dir, "keys.json"), "utf8")) as { queries: string[] }).queries : headQueries(seed);
const queries = await Promise.all(queryTexts.map(async (q) => ({ q, terms: await queryTerms(source, searchRequest(q, 10).words) })));
const byScore = (list: Ranked[]) => [...list].sort((a, b) => b.score - a.score || a.key - b.key);
let identical = 0;
const exhaustiveTimes: number[] = [];
const check = Number(args.check ?? queries.length);
for (const { terms } of queries.slice(0, check)) {
  const t = performance.now();
  const expected = exhaustive(terms, 10);
  exhaustiveTimes.push(performance.now() - t);
  if (JSON.stringify(byScore(rankInMemory(index, terms, 10))) === JSON.stringify(byScore(expected))) identical++;
}
// One uncounted round first: each term's bounds are computed by the first query that needs them (as in a server's first searches).
for (const { terms } of queries) rankInMemory(index, terms, 10);
const times: number[] = [];
const cpuTimes: number[] = [];
for (let r = 0; r < rounds; r++) {
  for (const { terms } of queries) {
    const t = performance.now();
    const cpu = process.cpuUsage();
    rankInMemory(index, terms, 10);
    const used = process.cpuUsage(cpu);
    times.push(performance.now() - t);
    cpuTimes.push((used.user + used.system) / 1000);
  }
}
times.sort((a, b) => a - b);
cpuTimes.sort((a, b) => a - b);
exhaustiveTimes.sort((a, b) => a - b);
console.log(`| path | p50 ms | p99 ms |\n|---|---|---|`);
console.log(`| rankInMemory (exact, pruned), ${queries.length} queries × ${rounds} rounds, wall | ${percentile(times, 50).toFixed(2)} | ${percentile(times, 99).toFixed(2)} |`);
console.log(`| rankInMemory, CPU (process.cpuUsage) | ${percentile(cpuTimes, 50).toFixed(2)} | ${percentile(cpuTimes, 99).toFixed(2)} |`);
if (exhaustiveTimes.length > 0) {
  console.log(`| every posting scored (1 round, ${Math.min(check, queries.length)} queries) | ${percentile(exhaustiveTimes, 50).toFixed(2)} | ${percentile(exhaustiveTimes, 99).toFixed(2)} |`);
  console.log(`top-10 equal to the exhaustive scorer's: ${identical} of ${Math.min(check, queries.length)}`);
}
