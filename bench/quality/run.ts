// Search quality on the judged set: Cairn's ranking against a plain FTS5 bm25() baseline.
//   bun run bench:quality [--verbose] [--rounds 20]
// Loads the generated corpus (corpus.ts) into a temporary Cairn database through
// the real store, runs every query of queries.json through exactly what
// POST /v1/search runs (searchPlan + SqliteStore.search), and through
//   SELECT rowid FROM posts_fts WHERE posts_fts MATCH '"w1" OR "w2" …' ORDER BY bm25(posts_fts) LIMIT 10
// over the same index, then prints nDCG@10 and recall@10 for both and the
// latency of Cairn's path. Judgments: qrels.json (regenerate with generate.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { uuidv7 } from "../../src/core/ids.ts";
import { searchPlan } from "../../src/core/search.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { buildCorpus, hash32, qrels, type JudgedQuery } from "./corpus.ts";

const argv = process.argv.slice(2);
const verbose = argv.includes("--verbose");
const roundsAt = argv.indexOf("--rounds");
const rounds = roundsAt >= 0 ? Number(argv[roundsAt + 1]) : 20;
const scaleAt = argv.indexOf("--scale");
/** --scale N: N times as many notes (a stress test; the judged set proper is scale 1). */
const scale = scaleAt >= 0 ? Number(argv[scaleAt + 1]) : 1;
const K = 10;

const here = import.meta.dir;
const queries = (await Bun.file(join(here, "queries.json")).json()) as JudgedQuery[];
const notes = buildCorpus(scale);
const judgments = qrels(notes, queries);
const stored = (await Bun.file(join(here, "qrels.json")).json().catch(() => null)) as Record<string, Record<string, number>> | null;
if (scale === 1 && (!stored || JSON.stringify(stored) !== JSON.stringify(judgments))) {
  console.error("qrels.json does not match the generated corpus and queries.json: run `bun bench/quality/generate.ts` and review the diff.");
  process.exit(1);
}

// --- load the corpus through the real store ------------------------------------
const dir = mkdtempSync(join(tmpdir(), "cairn-quality-"));
const store = new SqliteStore({ dataDir: dir });
await store.migrate();
const keyById = new Map<string, string>();
const keyByPk = new Map<number, string>();
const loadStarted = performance.now();
store.sqlite.transaction(() => {
  store.sqlite
    .query("INSERT INTO contributors (email, key_prefix, key_digest, active, created_at) VALUES ('quality@example.org', 'cairn_qualit', x'00', 1, 0)")
    .run();
  const insert = store.sqlite.query<{ pk: number }, [string, string, string, string, number, number]>(
    "INSERT INTO posts (id, contributor_no, title, body, tags, score, comment_count, created_at) VALUES (?, 1, ?, ?, ?, ?, 0, ?) RETURNING pk",
  );
  const start = Date.UTC(2026, 0, 1);
  notes.forEach((note, i) => {
    const id = uuidv7();
    // Net scores and times are deterministic and unrelated to relevance: they only break ties.
    const score = (hash32(`score:${note.key}`) % 9) - 2;
    const { pk } = insert.get(id, note.title, note.body, JSON.stringify(note.tags), score, start + i * 60_000)!;
    keyById.set(id, note.key);
    keyByPk.set(pk, note.key);
  });
})();
const loadMs = performance.now() - loadStarted;

// --- the two rankings ------------------------------------------------------------
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** The baseline: the query's words, each quoted, OR'ed; bm25 with equal column weights. */
function baselineExpression(query: string): string | null {
  const words = [...new Set([...query.toLowerCase().matchAll(WORD)].map((m) => m[0]))];
  return words.length === 0 ? null : words.map((w) => `"${w.replaceAll('"', '""')}"`).join(" OR ");
}
const baselineQuery = store.sqlite.query<{ rowid: number }, [string]>(
  `SELECT rowid FROM posts_fts WHERE posts_fts MATCH ? ORDER BY bm25(posts_fts) LIMIT ${K}`,
);
function baseline(query: string): string[] {
  const expression = baselineExpression(query);
  return expression ? baselineQuery.all(expression).map((row) => keyByPk.get(row.rowid)!) : [];
}
/** Exactly what POST /v1/search runs, minus HTTP. */
async function cairn(query: string): Promise<string[]> {
  const plan = searchPlan(query, K);
  const found = plan.expressions.length > 0 ? await store.search(plan) : [];
  return found.map((note) => keyById.get(note.id)!);
}

// --- metrics ---------------------------------------------------------------------
function ndcg(ranked: string[], judged: Record<string, number>): number {
  const gain = (g: number) => 2 ** g - 1;
  const dcg = ranked.slice(0, K).reduce((sum, key, i) => sum + gain(judged[key] ?? 0) / Math.log2(i + 2), 0);
  const ideal = Object.values(judged).sort((a, b) => b - a).slice(0, K);
  const idcg = ideal.reduce((sum, g, i) => sum + gain(g) / Math.log2(i + 2), 0);
  return idcg === 0 ? 0 : dcg / idcg;
}
function recall(ranked: string[], judged: Record<string, number>): number {
  const relevant = Object.keys(judged).length;
  return relevant === 0 ? 0 : ranked.slice(0, K).filter((key) => (judged[key] ?? 0) > 0).length / relevant;
}
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

interface Row { query: JudgedQuery; cairn: string[]; baseline: string[] }
const rows: Row[] = [];
for (const query of queries) rows.push({ query, cairn: await cairn(query.query), baseline: baseline(query.query) });

// --- latency of Cairn's path -----------------------------------------------------
const cairnTimes: number[] = [];
const baselineTimes: number[] = [];
for (let r = 0; r < rounds; r++) {
  for (const { query } of rows) {
    let t = performance.now();
    await cairn(query.query);
    cairnTimes.push(performance.now() - t);
    t = performance.now();
    baseline(query.query);
    baselineTimes.push(performance.now() - t);
  }
}
cairnTimes.sort((a, b) => a - b);
baselineTimes.sort((a, b) => a - b);

// --- report ----------------------------------------------------------------------
const score = (pick: (row: Row) => string[], rowsOf: Row[]) => ({
  ndcg: mean(rowsOf.map((row) => ndcg(pick(row), judgments[row.query.id]))),
  recall: mean(rowsOf.map((row) => recall(pick(row), judgments[row.query.id]))),
});
const fmt = (x: number) => x.toFixed(3);
const relevantCounts = Object.values(judgments).map((j) => Object.keys(j).length);
console.log(
  `judged set: ${notes.length} notes, ${queries.length} queries, ${relevantCounts.reduce((a, b) => a + b, 0)} judgments ` +
    `(${Math.min(...relevantCounts)}-${Math.max(...relevantCounts)} relevant per query); loaded in ${(loadMs / 1000).toFixed(1)} s`,
);
console.log("\n| ranking | nDCG@10 | recall@10 |\n|---|---|---|");
const total = { cairn: score((r) => r.cairn, rows), baseline: score((r) => r.baseline, rows) };
console.log(`| Cairn (searchPlan + store.search) | ${fmt(total.cairn.ndcg)} | ${fmt(total.cairn.recall)} |`);
console.log(`| FTS5 bm25() baseline, words OR'ed | ${fmt(total.baseline.ndcg)} | ${fmt(total.baseline.recall)} |`);

console.log("\n| query kind | queries | Cairn nDCG@10 | baseline nDCG@10 | Cairn recall@10 | baseline recall@10 |\n|---|---|---|---|---|---|");
for (const kind of [...new Set(queries.map((q) => q.kind))]) {
  const subset = rows.filter((row) => row.query.kind === kind);
  const c = score((r) => r.cairn, subset);
  const b = score((r) => r.baseline, subset);
  console.log(`| ${kind} | ${subset.length} | ${fmt(c.ndcg)} | ${fmt(b.ndcg)} | ${fmt(c.recall)} | ${fmt(b.recall)} |`);
}
const wins = rows.filter((row) => ndcg(row.cairn, judgments[row.query.id]) > ndcg(row.baseline, judgments[row.query.id]) + 1e-9).length;
const losses = rows.filter((row) => ndcg(row.cairn, judgments[row.query.id]) + 1e-9 < ndcg(row.baseline, judgments[row.query.id])).length;
console.log(`\nper query nDCG@10: Cairn better on ${wins}, worse on ${losses}, equal on ${rows.length - wins - losses}`);
console.log(
  `latency over ${cairnTimes.length} searches (${rounds} rounds × ${rows.length} queries, ${notes.length} notes): ` +
    `Cairn p50 ${percentile(cairnTimes, 50).toFixed(3)} ms, p99 ${percentile(cairnTimes, 99).toFixed(3)} ms; ` +
    `baseline p50 ${percentile(baselineTimes, 50).toFixed(3)} ms, p99 ${percentile(baselineTimes, 99).toFixed(3)} ms`,
);

if (verbose) {
  console.log("\nper query (nDCG@10 Cairn / baseline, recall@10 Cairn / baseline):");
  for (const row of rows) {
    const j = judgments[row.query.id];
    const mark = (keys: string[]) => keys.map((k) => (j[k] ? `${k}*${j[k]}` : k)).join(" ");
    console.log(
      `${row.query.id} [${row.query.kind}] ${JSON.stringify(row.query.query)}  ` +
        `${fmt(ndcg(row.cairn, j))}/${fmt(ndcg(row.baseline, j))}  ${fmt(recall(row.cairn, j))}/${fmt(recall(row.baseline, j))}  (${Object.keys(j).length} relevant)`,
    );
    console.log(`    cairn:    ${mark(row.cairn)}`);
    console.log(`    baseline: ${mark(row.baseline)}`);
  }
}

await store.close();
rmSync(dir, { recursive: true, force: true });
