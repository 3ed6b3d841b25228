// Search latency on a data directory, beside exhaustive scoring of the same
// queries on the same database in the same run (docs/benchmarks.md, "Search").
//   bun bench/search-latency.ts --dir /tmp/s100k [--rounds 5]          (the seeder's queries, keys.json)
//   bun bench/search-latency.ts --collection cqadupstack-webmasters     (loaded into a temporary store first)
// For each query, in alternating order within each round:
//   cairn      searchRequest + store.search (what POST /v1/search runs, minus HTTP)
//   fts5       SELECT rowid FROM search_fts WHERE search_fts MATCH '"t1" OR "t2" …'
//              ORDER BY bm25(search_fts) LIMIT 10: FTS5 scoring every match of the
//              same index (its own function, so its top-10 differs)
//   exhaustive BM25F of every note holding a term (the shipped function, no
//              pruning): its top-10 must equal Cairn's
// and prints p50/p99 of each, the ratios, and how many top-10s differ.
// --memory-mb N sets SEARCH_MEMORY_MB (0: the FTS5 path alone, as when the
// in-memory postings are off or still building); the build's time and size are printed.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { queryTerms, resultOrder, searchRequest } from "../src/core/search/query.ts";
import { BM25F, idf, scoreVector, type QueryTerm } from "../src/core/search/ranking.ts";
import { DEFAULT_SEARCH_MEMORY_BYTES } from "../src/store/sqlite/search.ts";
import { SqliteStore } from "../src/store/sqlite/store.ts";
import { loadCollection, readCollection } from "./quality/collection.ts";

const args = Object.fromEntries(
  process.argv.slice(2).reduce<[string, string][]>((pairs, arg, i, all) => {
    if (arg.startsWith("--")) pairs.push([arg.slice(2), all[i + 1]]);
    return pairs;
  }, []),
);
const dir = args.dir ?? "/tmp/s100k";
const rounds = Number(args.rounds ?? 5);
const collectionName = args.collection;

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

const memoryBytes = args["memory-mb"] === undefined ? undefined : Number(args["memory-mb"]) * 1024 * 1024;
const collection = collectionName ? readCollection(collectionName) : null;
if (collectionName && !collection) throw new Error(`collection ${collectionName} not found`);
const loaded = collection ? await loadCollection(collection, { searchMemoryBytes: memoryBytes }) : null;
const queries = collection
  ? collection.queries.map((q) => q.text)
  : (JSON.parse(readFileSync(join(dir, "keys.json"), "utf8")) as { queries: string[] }).queries;
const store = loaded?.store ?? new SqliteStore({ dataDir: dir, searchMemoryBytes: memoryBytes ?? DEFAULT_SEARCH_MEMORY_BYTES });
if (args.mmap) store.sqlite.exec(`PRAGMA mmap_size = ${Number(args.mmap)}`);
const buildStarted = performance.now();
await store.migrate();
await store.searchIndex.memory.loaded();
const memory = store.searchIndex.memory;
console.log(
  memory.offReason === null
    ? `in-memory postings: built in ${((performance.now() - buildStarted) / 1000).toFixed(1)} s (with migrate), ~${Math.round((await memory.current())!.bytes / 1048576)} MB estimated, RSS ${Math.round(process.memoryUsage().rss / 1048576)} MB`
    : `in-memory postings off: ${memory.offReason}`,
);
const index = store.searchIndex;
const db = store.sqlite;
const fts5 = db.query<{ rowid: number }, [string]>("SELECT rowid FROM search_fts WHERE search_fts MATCH ? ORDER BY bm25(search_fts) LIMIT 10");
const allMatches = db.query<[number], [string]>("SELECT rowid FROM search_fts WHERE search_fts MATCH ?");
const rows = db.query<{ pk: number; score: number; createdAt: number; id: string }, [string]>(
  "SELECT pk, score, created_at AS createdAt, id FROM posts WHERE pk IN (SELECT value FROM json_each(?1))",
);

async function cairn(q: string): Promise<string[]> {
  const request = searchRequest(q, 10);
  return request.words.length > 0 ? (await store.search(request)).map((n) => n.id) : [];
}
async function fts(q: string): Promise<number> {
  const terms = await queryTerms(index, searchRequest(q, 10).words);
  return terms.length === 0 ? 0 : fts5.all(terms.map((t) => `"${t}"`).join(" OR ")).length;
}
async function exhaustive(q: string): Promise<string[]> {
  const terms = await queryTerms(index, searchRequest(q, 10).words);
  if (terms.length === 0) return [];
  const corpus = index.corpus();
  const counts = index.tierCounts(terms).map((tiers) => tiers.reduce((a, b) => a + b, 0));
  const averages = corpus.lengthSums.map((s) => Math.max(s / corpus.notes, 1e-9)) as [number, number, number];
  const query: QueryTerm[] = terms.flatMap((term, i) => (counts[i] > 0 ? [{ term, idf: idf(corpus.notes, counts[i]) }] : []));
  const keys = allMatches.values(terms.map((t) => `"${t}"`).join(" OR ")).map((r) => r[0] as number);
  const scored = index.vectors(keys).map(({ key, vector }) => ({ key, score: scoreVector(vector, query, averages) }));
  scored.sort((a, b) => b.score - a.score);
  const cut = scored.length > 10 ? scored[9].score : -Infinity;
  const ranked = scored.filter((s) => s.score >= cut);
  const notes = rows.all(JSON.stringify(ranked.map((r) => r.key)));
  return resultOrder(ranked, notes, 10).map((n) => n.id);
}
void BM25F;

const times = { cairn: [] as number[], fts5: [] as number[], exhaustive: [] as number[] };
let differ = 0;
for (const q of queries) {
  await cairn(q);
  await fts(q);
} // warm-up: page cache, statements
const diffs: string[] = [];
for (let r = 0; r < rounds; r++) {
  for (const q of queries) {
    let t = performance.now();
    const served = await cairn(q);
    times.cairn.push(performance.now() - t);
    t = performance.now();
    await fts(q);
    times.fts5.push(performance.now() - t);
    if (r === 0) {
      t = performance.now();
      const expected = await exhaustive(q);
      times.exhaustive.push(performance.now() - t);
      if (JSON.stringify(expected) !== JSON.stringify(served)) {
        differ++;
        diffs.push(q);
      }
    }
  }
}
for (const list of Object.values(times)) list.sort((a, b) => a - b);
const fmt = (list: number[], p: number) => percentile(list, p).toFixed(2);
const notes = index.corpus().notes;
console.log(`${collectionName ?? dir}: ${notes} notes, ${queries.length} queries × ${rounds} rounds`);
console.log(`| path | p50 ms | p99 ms |\n|---|---|---|`);
console.log(`| Cairn (exact top-k, pruned) | ${fmt(times.cairn, 50)} | ${fmt(times.cairn, 99)} |`);
console.log(`| FTS5 bm25(), every match scored | ${fmt(times.fts5, 50)} | ${fmt(times.fts5, 99)} |`);
console.log(`| BM25F, every match scored (1 round) | ${fmt(times.exhaustive, 50)} | ${fmt(times.exhaustive, 99)} |`);
console.log(
  `ratio FTS5 exhaustive / Cairn: p50 ${(percentile(times.fts5, 50) / percentile(times.cairn, 50)).toFixed(1)}x, ` +
    `p99 ${(percentile(times.fts5, 99) / percentile(times.cairn, 99)).toFixed(1)}x; top-10 differing from exhaustive BM25F: ${differ} of ${queries.length}`,
);
if (diffs.length > 0) console.log("differing:", diffs.slice(0, 5));
if (loaded) await loaded.close();
else await store.close();
