// Tag words' cost beside plain search, in one run on one seeded data directory:
//   bun bench/seed.ts --dir /tmp/cairn-bench --notes 100000
//   bun bench/tag-words.ts --dir /tmp/cairn-bench
// For each search path (in-memory postings; FTS5 alone) it times the seeded
// queries alone, with a common, a middling and a rare tag, and tag words
// alone, and prints each median and 95th percentile and its ratio to the
// plain queries' median (the baseline of the same run).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { searchRequest } from "../src/core/search/query.ts";
import { SqliteStore } from "../src/store/sqlite/store.ts";

const args = process.argv.slice(2);
const dir = args[args.indexOf("--dir") + 1];
if (!dir || args.indexOf("--dir") < 0) throw new Error("usage: bun bench/tag-words.ts --dir DATA_DIR");
const ROUNDS = 5;

const { queries } = JSON.parse(readFileSync(join(dir, "keys.json"), "utf8")) as { queries: string[] };

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

async function time(store: SqliteStore, texts: string[]): Promise<{ median: number; p95: number; results: number }> {
  const samples: number[] = [];
  let results = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const text of texts) {
      const started = performance.now();
      const found = await store.search(searchRequest(text, 10));
      samples.push(performance.now() - started);
      if (round === 0) results += found.length;
    }
  }
  samples.sort((a, b) => a - b);
  return { median: percentile(samples, 0.5), p95: percentile(samples, 0.95), results: results / texts.length };
}

for (const [path, memoryBytes] of [
  ["in-memory postings", 2048 * 1024 * 1024],
  ["FTS5 alone", 0],
] as const) {
  const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: memoryBytes });
  await store.migrate();
  await store.searchMemoryBuilt();
  const notes = (store.sqlite.query("SELECT count(*) AS n FROM posts").get() as { n: number }).n;
  const tagCounts = store.sqlite.query("SELECT tag, count(*) AS n FROM note_tags GROUP BY tag ORDER BY n DESC").all() as { tag: string; n: number }[];
  const common = tagCounts[0];
  const middling = tagCounts[Math.floor(tagCounts.length / 4)];
  const rare = tagCounts.findLast((t) => t.n >= 20) ?? tagCounts[tagCounts.length - 1];
  const second = tagCounts[1];
  console.log(`\n${path}: ${notes} notes, ${tagCounts.length} tags; common "${common.tag}" (${common.n} notes), middling "${middling.tag}" (${middling.n}), rare "${rare.tag}" (${rare.n})`);
  const base = await time(store, queries);
  const rows: [string, string[]][] = [
    ["words alone (baseline)", queries],
    [`words + tag:${common.tag}`, queries.map((q) => `${q} tag:${common.tag}`)],
    [`words + tag:${middling.tag}`, queries.map((q) => `${q} tag:${middling.tag}`)],
    [`words + tag:${rare.tag}`, queries.map((q) => `${q} tag:${rare.tag}`)],
    [`tag:${common.tag} alone`, [`tag:${common.tag}`]],
    [`tag:${rare.tag} alone`, [`tag:${rare.tag}`]],
    [`tag:${common.tag} tag:${second.tag} alone`, [`tag:${common.tag} tag:${second.tag}`]],
  ];
  for (const [name, texts] of rows) {
    const t = name.startsWith("words alone") ? base : await time(store, texts);
    console.log(
      `  ${name.padEnd(44)} median ${t.median.toFixed(2).padStart(7)} ms  p95 ${t.p95.toFixed(2).padStart(7)} ms  ×${(t.median / base.median).toFixed(2)}  (${t.results.toFixed(1)} results)`,
    );
  }
  await store.close();
}
