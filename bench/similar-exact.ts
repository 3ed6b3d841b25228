// The similar-notes lookup (own-score.ts's bounded rule, rankSimilarInMemory)
// beside an exact top-3 over the same terms (rankInMemory: block-max MaxScore,
// no reach bound, no floor), in process on a seeded directory's in-memory
// postings, least of 3 rounds a probe (issue 21: could exact pruning replace
// the reach bound and cost less?):
//   bun bench/similar-exact.ts --dir /tmp/seed100k --notes bench [--stored 2000] [--probes 1000]
//   bun bench/similar-exact.ts --dir /tmp/h100k --notes headheavy --probes 500
//   bun bench/similar-exact.ts --dir /tmp/web --notes webmasters
// --stored N first adds N more notes of the kind to the index (a replay loop's
// near-duplicates). "returns" counts what each gives back, ties included (the
// exact top-3 keeps every note tying with the third). Figures:
// docs/benchmarks.md, "What the similar-notes lookup costs at least".
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { rankInMemory } from "../src/core/search/maxscore.ts";
import { rankSimilarInMemory } from "../src/core/search/similar-memory.ts";
import { noteVector } from "../src/core/search/vector.ts";
import { similarTerms, SIMILAR_LIMIT, SIMILAR_POOL, SIMILAR_REACH, SIMILAR_THRESHOLD } from "../src/core/similar.ts";
import { SqliteStore } from "../src/store/sqlite/store.ts";
import { headNote } from "./headheavy.ts";
import { EVAL_DIR } from "./quality/collection.ts";
import { benchArgs } from "./wrk.ts";
const args = benchArgs();
const store = new SqliteStore({ dataDir: args.dir, searchMemoryBytes: 8192 * 1048576 });
await store.migrate();
await store.searchIndex.memory.loaded();
const index = (await store.searchIndex.memory.current())!;
const kind = args.notes ?? "bench";
const questions = readFileSync(join(EVAL_DIR, "cqadupstack-webmasters/corpus.jsonl"), "utf8").split("\n").filter(Boolean).slice(0, 2000).map((l) => JSON.parse(l));
const make = (i: number) =>
  kind === "bench"
    ? { title: `bench note ${i % 4}-${i}`, body: `a body of words about sqlite and wal mode, number ${i} ${Math.floor(Date.now() / 1000)}`, tags: ["bench"] }
    : kind === "headheavy" ? headNote("cairn-writes", i)
    : { title: `${(questions[i % 2000].title || "untitled").slice(0, 190)} ${i}`, body: questions[i % 2000].body.slice(0, 600) || "empty", tags: ["webmasters"] };
const stored = Number(args.stored ?? 0);
let key = 10_000_000;
for (let i = 0; i < stored; i++) { const n = make(100000 + i); index.add(key++, noteVector(n.title, n.tags, n.body).encoded); }
const N = Number(args.probes ?? 1000);
const probes = Array.from({ length: N }, (_, i) => { const n = make(i); return { terms: similarTerms(n.title, n.body), vector: noteVector(n.title, n.tags, n.body).encoded }; });
const least = { reach: new Float64Array(N).fill(Infinity), exact: new Float64Array(N).fill(Infinity) };
let exactSizes = 0;
let reachSizes = 0;
for (let r = 0; r < 3; r++) for (let i = 0; i < N; i++) {
  const p = probes[i];
  let t = performance.now();
  const a = rankSimilarInMemory(index, { terms: p.terms, vector: p.vector, limit: SIMILAR_LIMIT, minShare: SIMILAR_THRESHOLD, reach: SIMILAR_REACH, pool: SIMILAR_POOL });
  least.reach[i] = Math.min(least.reach[i], performance.now() - t);
  t = performance.now();
  const b = rankInMemory(index, p.terms, 3);
  least.exact[i] = Math.min(least.exact[i], performance.now() - t);
  if (r === 0) {
    exactSizes += b.length;
    reachSizes += a.ranked.length;
  }
}
const sum = (xs: Float64Array) => (xs.reduce((s, x) => s + x, 0) * 1000 / N).toFixed(1);
const sorted = (xs: Float64Array) => [...xs].sort((a, b) => a - b);
const p = (xs: Float64Array, q: number) => (sorted(xs)[Math.floor(q * N)] * 1000).toFixed(0);
console.log(`${kind} stored=${stored}: reach mean ${sum(least.reach)} µs p50 ${p(least.reach, 0.5)} p99 ${p(least.reach, 0.99)}; exact top-3 mean ${sum(least.exact)} µs p50 ${p(least.exact, 0.5)} p99 ${p(least.exact, 0.99)}; exact returns ${(exactSizes / N).toFixed(1)} a probe; reach returns ${(reachSizes / N).toFixed(1)} a probe`);
process.exit(0);
