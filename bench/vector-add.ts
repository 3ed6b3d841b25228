// Adding stored vectors (the build at start, another process's or replica's
// notes) to the in-memory postings alone, in process, beside another
// checkout's MemoryIndex in the same run (least of 3 rounds):
//   bun bench/vector-add.ts /tmp/h100k /path/to/other/checkout
import { Database } from "bun:sqlite";
const A = await import(`${import.meta.dir}/../src/core/search/memory-index.ts`);
const B = await import(`${process.argv[3]}/src/core/search/memory-index.ts`);
const db = new Database(process.argv[2] + "/cairn.db", { readonly: true });
const rows = db.query<{ pk: number; vector: string }, []>("SELECT pk, vector FROM search_vectors ORDER BY pk LIMIT 100000").all();
console.log("rows", rows.length);
const best = [Infinity, Infinity];
for (let r = 0; r < 3; r++) for (const [k, M] of [A, B].entries()) {
  const index = new M.MemoryIndex();
  const t = performance.now();
  for (const row of rows) index.add(row.pk, row.vector);
  index.postings("zzzz"); // flush
  best[k] = Math.min(best[k], performance.now() - t);
  Bun.gc(true);
}
console.log(`add 100k stored vectors: new ${best[0].toFixed(0)} ms, old ${best[1].toFixed(0)} ms; load ${(await import("node:fs")).readFileSync("/proc/loadavg", "utf8").slice(0, 14)}`);
