// Adding stored vectors (the build at start, another process's or replica's
// notes) to the in-memory postings alone, in process, beside another
// checkout's MemoryIndex in the same run: terms sized from search_terms as a
// build does, then every vector added and appended; least of 5 rounds, the
// two checkouts' order alternating by round (the first of a round ran slower):
//   bun bench/vector-add.ts /tmp/h100k /path/to/other/checkout
import { Database } from "bun:sqlite";
const A = await import(`${import.meta.dir}/../src/core/search/memory-index.ts`);
const B = await import(`${process.argv[3]}/src/core/search/memory-index.ts`);
const db = new Database(process.argv[2] + "/cairn.db", { readonly: true });
const rows = db.query<{ pk: number; vector: string }, []>("SELECT pk, vector FROM search_vectors ORDER BY pk LIMIT 100000").all();
const termSizes = db.query<{ term: string; notes: number }, []>("SELECT term, sum(notes) AS notes FROM search_terms GROUP BY term").all();
console.log("rows", rows.length);
const best = [Infinity, Infinity];
for (let r = 0; r < 5; r++) {
  const order: [number, typeof A][] = r % 2 === 0 ? [[0, A], [1, B]] : [[1, B], [0, A]];
  for (const [k, M] of order) {
    const index = new M.MemoryIndex();
    const t = performance.now();
    for (const { term, notes } of termSizes) index.reserve(term, notes);
    for (const row of rows) index.add(row.pk, row.vector);
    index.flush();
    best[k] = Math.min(best[k], performance.now() - t);
    Bun.gc(true);
  }
}
console.log(`add 100k stored vectors: new ${best[0].toFixed(0)} ms, old ${best[1].toFixed(0)} ms; load ${(await import("node:fs")).readFileSync("/proc/loadavg", "utf8").slice(0, 14)}`);
