// Which queries of a seeded directory are slowest on the in-memory postings,
// with each term's note count and bound (what MaxScore can prune on):
//   bun bench/search-slowest.ts /tmp/b100k
// Ranking only (rankInMemory), each query 3 times, the third timed.
import { readFileSync } from "node:fs";
import { queryTerms, searchRequest } from "../src/core/search/query.ts";
import { rankInMemory } from "../src/core/search/maxscore.ts";
import { idf, saturate } from "../src/core/search/ranking.ts";
import { SqliteStore } from "../src/store/sqlite/store.ts";
const dir = process.argv[2];
const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: 4096 * 1048576 });
await store.migrate();
await store.searchIndex.memory.loaded();
const index = (await store.searchIndex.memory.current())!;
const queries = (JSON.parse(readFileSync(`${dir}/keys.json`, "utf8")) as { queries: string[] }).queries;
const src = { tierCounts: (t: string[]) => t.map((x) => [index.notesWith(x)]), vocabulary: (a: string, b: string) => store.searchIndex.vocabulary(a, b) };
const rows: [number, string, string][] = [];
for (let r = 0; r < 3; r++) for (const q of queries) {
  const terms = await queryTerms(src, searchRequest(q, 10).words);
  const t = performance.now();
  rankInMemory(index, terms, 10);
  const ms = performance.now() - t;
  if (r === 2) {
    const averages = index.lengthSums.map((s) => s / index.notes) as [number, number, number];
    rows.push([ms, q, terms.map((x) => { const p = index.postings(x); return p ? `${x}:${p.notes}:${(idf(index.notes, p.notes) * saturate(p.maxWeighted * index.bounds(p, averages))).toFixed(2)}` : `${x}:0`; }).join(" ")]);
  }
}
rows.sort((a, b) => b[0] - a[0]);
for (const [ms, q, t] of rows.slice(0, 12)) console.log(ms.toFixed(2), q, "|", t);
console.log("median", rows[Math.floor(rows.length / 2)][0].toFixed(2));
