// Adding stored vectors (the build at start, another process's or replica's
// notes) to the in-memory postings alone, in process, beside other checkouts'
// MemoryIndex in the same run: terms sized from search_terms as a build does
// (untimed), then every vector added and its postings appended; this
// process's CPU a note (process.cpuUsage), the checkouts' order alternating
// by round (the first of a round ran slower), median and least of the rounds:
//   bun bench/vector-add.ts /tmp/h100k /path/to/other/checkout [more checkouts] [--rounds 6]
// (docs/benchmarks.md, "Adding notes in passes").
import { resolve } from "node:path";
import { openCorpus } from "./data-files.ts";

const positional = process.argv.slice(2).filter((arg, i, all) => !arg.startsWith("--") && !all[i - 1]?.startsWith("--"));
const roundsAt = process.argv.indexOf("--rounds");
const rounds = roundsAt > 0 ? Number(process.argv[roundsAt + 1]) : 6;
const [dir, ...others] = positional;
const trees = [resolve(import.meta.dir, ".."), ...others.map((tree) => resolve(tree))];
const modules = await Promise.all(trees.map((tree) => import(`${tree}/src/core/search/memory-index.ts`)));
const db = openCorpus(dir);
const rows = db.query<{ pk: number; vector: string }, []>("SELECT pk, vector FROM search_vectors ORDER BY pk LIMIT 100000").all();
const termSizes = db.query<{ term: string; notes: number }, []>("SELECT term, sum(notes) AS notes FROM search_terms GROUP BY term").all();
db.close();
const results = trees.map(() => [] as number[]);
for (let r = 0; r < rounds; r++) {
  const order = trees.map((_, i) => i);
  if (r % 2 === 1) order.reverse();
  for (const k of order) {
    const index = new modules[k].MemoryIndex();
    for (const { term, notes } of termSizes) index.reserve(term, notes);
    const before = process.cpuUsage();
    for (const row of rows) index.add(row.pk, row.vector);
    index.flush();
    const used = process.cpuUsage(before);
    results[k].push((used.user + used.system) / rows.length);
    Bun.gc(true);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`${rows.length} stored vectors of ${dir} added, ${rounds} rounds alternating; load ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}, ${new Date().toISOString()}`);
console.log("| checkout | CPU µs a note, median | least | by round |\n|---|---|---|---|");
for (const [k, tree] of trees.entries()) {
  const xs = results[k];
  console.log(`| ${k === 0 ? `this (${tree})` : tree} | ${median(xs).toFixed(1)} | ${Math.min(...xs).toFixed(1)} | ${xs.map((x) => x.toFixed(1)).join(", ")} |`);
}
