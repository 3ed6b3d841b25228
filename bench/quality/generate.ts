// Writes the judgments (qrels.json: query id → note key → grade) from the corpus
// generator and queries.json; with --notes also writes notes.json (the whole
// generated corpus, about 3 MB) for reading or for other tools.
//   bun bench/quality/generate.ts [--notes]
import { join } from "node:path";
import { buildCorpus, qrels, type JudgedQuery } from "./corpus.ts";

const here = import.meta.dir;
const notes = buildCorpus();
const queries = (await Bun.file(join(here, "queries.json")).json()) as JudgedQuery[];
const judged = qrels(notes, queries);
const lines = Object.entries(judged).map(([id, grades]) => `  ${JSON.stringify(id)}: ${JSON.stringify(grades)}`);
await Bun.write(join(here, "qrels.json"), `{\n${lines.join(",\n")}\n}\n`);
console.log(`qrels.json: ${queries.length} queries, ${Object.values(judged).reduce((n, g) => n + Object.keys(g).length, 0)} judged notes`);
if (process.argv.includes("--notes")) {
  await Bun.write(join(here, "notes.json"), JSON.stringify(notes, null, 1) + "\n");
  console.log(`notes.json: ${notes.length} notes`);
}
