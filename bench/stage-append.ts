// What a read pays for the postings staged before it (docs/search-index.md,
// "Adding a note"): postings built from a seeded directory's stored vectors as
// a server builds them, then N new head-heavy notes added (staged), then the
// time of postings() of one head and one tail word (what a search or
// similar-notes lookup appends) and of flush() (everything; what one write
// batch in ~190 notes pays, and what every read paid before reads appended
// only their terms). Medians of 7 repetitions, beside another checkout
// (--repo) in the same run:
//   bun bench/stage-append.ts --dir /tmp/h100k [--notes 190] [--repo /path/to/other/checkout]
import { join } from "node:path";
import { headNote } from "./headheavy.ts";
import { benchArgs } from "./wrk.ts";
import { openCorpus } from "./data-files.ts";

const args = benchArgs();
const dir = args.dir ?? "/tmp/h100k";
const staged = Number(args.notes ?? 190);
const repos = [join(import.meta.dir, ".."), ...(args.repo ? [args.repo] : [])];
const db = openCorpus(dir);
const termSizes = db.query<{ term: string; notes: number }, []>("SELECT term, sum(notes) AS notes FROM search_terms GROUP BY term").all();
const vectors = db.query<{ pk: number; vector: string }, []>("SELECT pk, vector FROM search_vectors ORDER BY pk").all();
// The most common tail word of the corpus (bench/headheavy.ts), and a head word.
const [head, tail] = ["error", "bicaq"];
db.close();
for (const repo of repos) {
  const { MemoryIndex } = await import(join(repo, "src/core/search/memory-index.ts"));
  const { noteVector } = await import(join(repo, "src/core/search/vector.ts"));
  // A stage longer than the notes added, so that nothing is appended before the timed read.
  const index = new MemoryIndex(staged + 1);
  for (const { term, notes } of termSizes) index.reserve(term, notes);
  for (const { pk, vector } of vectors) index.add(pk, vector);
  index.trim();
  let key = vectors[vectors.length - 1].pk + 1;
  const times: Record<string, number[]> = { head: [], tail: [], all: [] };
  for (let rep = 0; rep < 7; rep++) {
    for (const part of ["head", "tail", "all"]) {
      for (let i = 0; i < staged; i++) {
        const note = headNote(`cairn-stage-append-${rep}-${part}`, i);
        index.add(key++, noteVector(note.title, note.tags, note.body).terms);
      }
      const started = performance.now();
      if (part === "all") index.flush();
      else index.postings(part === "head" ? head : tail);
      times[part].push(performance.now() - started);
      index.flush();
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1].toFixed(2);
  console.log(`${repo}: ${staged} notes staged; postings("${head}") ${median(times.head)} ms, postings("${tail}") ${median(times.tail)} ms, flush() ${median(times.all)} ms`);
}
console.log(`medians of 7; load ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}, ${new Date().toISOString()}`);
