// Search quality: Cairn's ranking against a plain FTS5 bm25() baseline on the
// in-repo judged set and on the public collections in ../shared/eval.
//   bun run bench:quality [--only webmasters] [--k1 1.2] [--b 0.75,0.75,0.75] [--weights 3,1,1]
// Notes are loaded through the real store (createNote); queries run through
// exactly what POST /v1/search runs (searchRequest + store.search). The
// baseline is SQLite's own tokenizer over the same notes, the query's words
// OR'ed, every match ranked by bm25(). --k1/--b/--weights set the ranking's
// parameters for this run only (the variants in docs/search-quality.md).
import { readFileSync } from "node:fs";
import { BM25F } from "../../src/core/search/ranking.ts";
import { cairnSearch, loadCollection, measure, plainBaseline, readCollection, type Collection, type Measures } from "./collection.ts";
import { buildCorpus, qrels, type JudgedQuery } from "./corpus.ts";

const argv = process.argv.slice(2);
const option = (name: string) => {
  const at = argv.indexOf(`--${name}`);
  return at >= 0 ? argv[at + 1] : undefined;
};
const triple = (text: string) => text.split(",").map(Number) as [number, number, number];
if (option("k1")) BM25F.k1 = Number(option("k1"));
if (option("b")) BM25F.b = triple(option("b")!);
if (option("weights")) BM25F.weights = triple(option("weights")!);
const only = option("only");

function inRepoSet(): Collection {
  const queries = JSON.parse(readFileSync(`${import.meta.dir}/queries.json`, "utf8")) as JudgedQuery[];
  const notes = buildCorpus(1);
  const judgments = qrels(notes, queries);
  const stored = JSON.parse(readFileSync(`${import.meta.dir}/qrels.json`, "utf8")) as unknown;
  if (JSON.stringify(stored) !== JSON.stringify(judgments)) {
    console.error("qrels.json does not match the generated corpus and queries.json: run `bun bench/quality/generate.ts` and review the diff.");
    process.exit(1);
  }
  return {
    name: "in-repo judged set",
    notes: notes.map((n) => ({ key: n.key, title: n.title, body: n.body, tags: n.tags })),
    queries: queries.map((q) => ({ id: q.id, text: q.query })),
    judgments,
  };
}

const fmt = (x: number) => x.toFixed(3);
const line = (name: string, m: Measures) => `| ${name} | ${fmt(m.ndcg)} | ${fmt(m.recall)} | ${fmt(m.mrr)} |`;

console.log(`ranking: BM25F k1 ${BM25F.k1}, b ${BM25F.b.join("/")}, field weights ${BM25F.weights.join("/")} (title/tags/body)`);
const collections: Collection[] = [];
if (!only || only === "in-repo") collections.push(inRepoSet());
for (const name of ["cqadupstack-webmasters", "cranfield"]) {
  if (only && !name.includes(only)) continue;
  const collection = readCollection(name);
  if (collection) collections.push(collection);
  else console.log(`(${name} not found in ../shared/eval: skipped)`);
}

for (const collection of collections) {
  const loaded = await loadCollection(collection);
  const baseline = plainBaseline(loaded);
  const cairn = new Map<string, string[]>();
  const plain = new Map<string, string[]>();
  for (const query of collection.queries) {
    cairn.set(query.id, await cairnSearch(loaded, query.text));
    plain.set(query.id, baseline(query.text));
  }
  const ids = collection.queries.map((q) => q.id);
  console.log(`\n${collection.name}: ${collection.notes.length} notes, ${ids.length} queries (loaded in ${(loaded.loadMs / 1000).toFixed(1)} s)`);
  console.log("| ranking | nDCG@10 | recall@10 | MRR@10 |\n|---|---|---|---|");
  console.log(line("Cairn", measure(cairn, collection.judgments, ids)));
  console.log(line("plain FTS5 bm25(), words OR'ed", measure(plain, collection.judgments, ids)));
  if (collection.name === "cqadupstack-webmasters") {
    const half = Math.floor(ids.length / 2);
    console.log(line(`Cairn, first ${half} queries (tuning)`, measure(cairn, collection.judgments, ids.slice(0, half))));
    console.log(line(`Cairn, last ${ids.length - half} queries (held out)`, measure(cairn, collection.judgments, ids.slice(half))));
    console.log(line(`plain, first ${half} queries`, measure(plain, collection.judgments, ids.slice(0, half))));
    console.log(line(`plain, last ${ids.length - half} queries`, measure(plain, collection.judgments, ids.slice(half))));
  }
  await loaded.close();
}
