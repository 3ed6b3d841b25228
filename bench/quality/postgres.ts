// Search on PostgreSQL against SQLite on a judged collection (issue 10, point 3):
// the collection is loaded through the SQLite store's write path, moved with
// `cairn admin copy`'s code (copySqliteToPostgres), and every query runs on
// both engines: nDCG@10 and recall@10 of each, how many result lists are
// identical, and per-query latency (in-process, one query at a time).
//   bun bench/quality/postgres.ts [cqadupstack-webmasters]
import { copySqliteToPostgres } from "../../src/store/copy.ts";
import { searchRequest } from "../../src/core/search/query.ts";
import { PostgresStore } from "../../src/store/postgres/store.ts";
import { freshDatabase } from "../../test/helpers/postgres.ts";
import { K, loadCollection, measure, readCollection } from "./collection.ts";

const name = process.argv[2] ?? "cqadupstack-webmasters";
const collection = readCollection(name);
if (!collection) throw new Error(`collection ${name} not found`);
const loaded = await loadCollection(collection);
const url = await freshDatabase("quality");
const copied = await copySqliteToPostgres(loaded.dataDir, url);
const pg = new PostgresStore({ url, poolSize: 2, searchMemoryBytes: 1024 * 1024 * 1024 });
await pg.migrate();
await pg.searchMemoryBuilt();

const run = async (search: (text: string) => Promise<string[]>) => {
  const results = new Map<string, string[]>();
  const times: number[] = [];
  for (const query of collection.queries) {
    const started = performance.now();
    results.set(query.id, await search(query.text));
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { results, p50: times[Math.floor(times.length / 2)], p99: times[Math.floor(times.length * 0.99)] };
};
const via = (store: { search: PostgresStore["search"] }) => async (text: string) => {
  const request = searchRequest(text, K);
  return request.words.length > 0 ? (await store.search(request)).map((note) => loaded.keyById.get(note.id)!) : [];
};
// A warm-up pass for each engine, then the measured one.
await run(via(loaded.store));
await run(via(pg));
const sqlite = await run(via(loaded.store));
const postgres = await run(via(pg));
const ids = collection.queries.map((q) => q.id);
const a = measure(sqlite.results, collection.judgments, ids);
const b = measure(postgres.results, collection.judgments, ids);
const same = ids.filter((id) => JSON.stringify(sqlite.results.get(id)) === JSON.stringify(postgres.results.get(id))).length;
console.log(`${name}: ${collection.notes.length} notes, ${ids.length} queries; copy into PostgreSQL ${(copied.ms / 1000).toFixed(1)} s`);
console.log("| engine | nDCG@10 | recall@10 | p50 ms | p99 ms |\n|---|---|---|---|---|");
console.log(`| SQLite | ${a.ndcg.toFixed(4)} | ${a.recall.toFixed(4)} | ${sqlite.p50.toFixed(2)} | ${sqlite.p99.toFixed(2)} |`);
console.log(`| PostgreSQL | ${b.ndcg.toFixed(4)} | ${b.recall.toFixed(4)} | ${postgres.p50.toFixed(2)} | ${postgres.p99.toFixed(2)} |`);
console.log(`identical top-${K} lists: ${same} of ${ids.length}`);
await pg.close();
await loaded.close();
process.exit(0);
