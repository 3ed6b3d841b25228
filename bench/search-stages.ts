// Where a search's time goes, in process, stage by stage (no HTTP):
//   bun bench/search-stages.ts --collection cqadupstack-webmasters [--rounds 5]
//   bun bench/search-stages.ts --dir /tmp/h100k [--rounds 3] [--memory-mb 4096]
// For each query and round: the query's terms (analysis, typo correction),
// rankInMemory alone, and the whole store.search (catch-up, terms, ranking,
// rows, result order), each timed by wall clock and the whole by CPU
// (process.cpuUsage, robust on a loaded host). Prints p50/p99/max of each and
// the slowest queries with their stage times (is a slow query slow every
// round, or only once: the host's stall or a GC).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { rankInMemory } from "../src/core/search/maxscore.ts";
import { queryTerms, searchRequest } from "../src/core/search/query.ts";
import { DEFAULT_SEARCH_MEMORY_BYTES } from "../src/store/sqlite/search.ts";
import { SqliteStore } from "../src/store/sqlite/store.ts";
import { loadCollection, readCollection } from "./quality/collection.ts";
import { percentile } from "./reference.ts";
import { benchArgs } from "./wrk.ts";

const args = benchArgs();
const rounds = Number(args.rounds ?? 5);
const memoryBytes = args["memory-mb"] === undefined ? DEFAULT_SEARCH_MEMORY_BYTES : Number(args["memory-mb"]) * 1048576;
const collection = args.collection ? readCollection(args.collection) : null;
if (args.collection && !collection) throw new Error(`collection ${args.collection} not found`);
const loaded = collection ? await loadCollection(collection, { searchMemoryBytes: memoryBytes }) : null;
const store = loaded?.store ?? new SqliteStore({ dataDir: args.dir!, searchMemoryBytes: memoryBytes });
const queries = collection ? collection.queries.map((q) => q.text) : (JSON.parse(readFileSync(join(args.dir!, "keys.json"), "utf8")) as { queries: string[] }).queries;
const built = performance.now();
await store.migrate();
await store.searchIndex.memory.loaded();
const memory = (await store.searchIndex.memory.current())!;
if (!memory) throw new Error(`postings off: ${store.searchIndex.memory.offReason}`);
console.log(`postings built in ${((performance.now() - built) / 1000).toFixed(1)} s, ${memory.notes} notes, RSS ${(process.memoryUsage().rss / 1048576).toFixed(0)} MB`);
const source = { tierCounts: (terms: string[]) => terms.map((term) => [memory.notesWith(term)]), vocabulary: (from: string, to: string) => memory.vocabulary(from, to) };

type Row = { q: string; terms: number; analyse: number; rank: number; whole: number; cpu: number };
const rows: Row[][] = queries.map(() => []);
for (let r = 0; r <= rounds; r++) {
  for (let i = 0; i < queries.length; i++) {
    const request = searchRequest(queries[i], 10);
    if (request.words.length === 0) continue;
    let t = performance.now();
    const terms = await queryTerms(source, request.words);
    const analyse = performance.now() - t;
    t = performance.now();
    rankInMemory(memory, terms, 10);
    const rank = performance.now() - t;
    const cpu0 = process.cpuUsage();
    t = performance.now();
    await store.search(request);
    const whole = performance.now() - t;
    const cpu = process.cpuUsage(cpu0);
    if (r > 0) rows[i].push({ q: queries[i], terms: terms.length, analyse, rank, whole, cpu: (cpu.user + cpu.system) / 1000 });
  }
}
const all = rows.flat();
const stat = (pick: (row: Row) => number) => {
  const sorted = all.map(pick).sort((a, b) => a - b);
  return `${percentile(sorted, 50).toFixed(3)} / ${percentile(sorted, 99).toFixed(3)} / ${sorted[sorted.length - 1].toFixed(2)}`;
};
console.log(`${args.collection ?? args.dir}: ${queries.length} queries × ${rounds} rounds, load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
console.log("| stage | p50 / p99 / max ms |\n|---|---|");
console.log(`| terms (analysis, typos) | ${stat((r) => r.analyse)} |`);
console.log(`| rankInMemory | ${stat((r) => r.rank)} |`);
console.log(`| store.search, wall | ${stat((r) => r.whole)} |`);
console.log(`| store.search, CPU | ${stat((r) => r.cpu)} |`);
// Per query: the median over rounds of each stage; the slowest by median whole.
const med = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const perQuery = rows.filter((r) => r.length > 0).map((r) => ({ q: r[0].q, terms: r[0].terms, analyse: med(r.map((x) => x.analyse)), rank: med(r.map((x) => x.rank)), whole: med(r.map((x) => x.whole)), max: Math.max(...r.map((x) => x.whole)) }));
perQuery.sort((a, b) => b.whole - a.whole);
console.log("slowest by median store.search (ms): whole, rank, terms, max over rounds | query");
for (const p of perQuery.slice(0, Number(args.top ?? 12))) console.log(`${p.whole.toFixed(2)} ${p.rank.toFixed(2)} ${p.analyse.toFixed(2)} ${p.max.toFixed(2)} | ${p.terms} terms | ${p.q.slice(0, 90)}`);
if (loaded) await loaded.close();
else await store.close();
