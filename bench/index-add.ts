// Adding notes to the in-memory postings alone, in process (docs/benchmarks.md,
// "The in-memory index's cost on a write"): builds the postings of a seeded
// directory's stored vectors as a store's build does (terms sized from
// search_terms, every vector added, trimmed), then adds new head-heavy notes
// (each batch analysed just before, untimed, as a write hands them on) in batches of
// 16, the way a group commit's catch-up does, and prints the CPU per note and
// per term. Variants run side by side, each on its own index, in alternating rounds:
//   bun bench/index-add.ts --dir /tmp/h100k [--notes 1000] [--rounds 3] [--variants "src=/path/to/an/export|src=.|src=. flush=batch"] [--suffix]
// (--suffix: each title ends with " T-N" as bench/writes.ts's requests do, T 0 or 1 and N
// counting up, so about every other note brings a term new to the index, as there);
// (stage=N: notes staged at most; flush=batch: the staged postings appended after every batch, as when a
// search or similar-notes lookup follows each group commit; otherwise at the
// end of a round; vector=stored: the stored vectors added, as the search
// thread added this process's writes before it got their word indexes, instead of the analysed ones;
// vector=worded: the stored vectors with the analyser's word indexes, as the search thread adds them now).
import { join, resolve } from "node:path";
import { headNote } from "./headheavy.ts";
import { benchArgs } from "./wrk.ts";
import { openCorpus } from "./data-files.ts";

const args = benchArgs();
const dir = args.dir ?? "/tmp/h100k";
const count = Number(args.notes ?? 1000);
const rounds = Number(args.rounds ?? 3);
const batch = 16;
const suffix = "suffix" in args;
const here = resolve(import.meta.dir, "..");
const variants = (args.variants ?? "src=.").split("|").map((spec) => {
  const pairs = spec.trim().split(/\s+/).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]);
  return { name: spec.trim(), settings: Object.fromEntries(pairs) as Record<string, string> };
});

const db = openCorpus(dir);
const termSizes = db.query<{ term: string; notes: number }, []>("SELECT term, sum(notes) AS notes FROM search_terms GROUP BY term").all();
const vectors = db.query<{ pk: number; vector: string }, []>("SELECT pk, vector FROM search_vectors ORDER BY pk").all();
db.close();
const firstKey = vectors[vectors.length - 1].pk + 1;

// biome-ignore lint: variants are imported from other source trees
type Loose = any;
const built = await Promise.all(
  variants.map(async ({ settings }) => {
    const src = resolve(here, settings.src ?? ".");
    const { MemoryIndex } = await import(join(src, "src/core/search/memory-index.ts"));
    const { noteVector, wordedVector } = await import(join(src, "src/core/search/vector.ts"));
    const started = performance.now();
    const index: Loose = new MemoryIndex(...(settings.stage ? [Number(settings.stage)] : []));
    for (const { term, notes } of termSizes) index.reserve(term, notes);
    for (const { pk, vector } of vectors) index.add(pk, vector);
    index.trim();
    const buildMs = performance.now() - started;
    return { index, noteVector, wordedVector, buildMs };
  }),
);
Bun.gc(true);

const results = variants.map(() => [] as { cpu: number; perTerm: number }[]);
for (let r = 0; r < rounds; r++) {
  for (const [v, { settings }] of variants.entries()) {
    const { index, noteVector, wordedVector } = built[v];
    const flushEach = settings.flush === "batch";
    let micros = 0;
    let terms = 0;
    for (let at = 0; at < count; at += batch) {
      // Analysed just before, as a write does (its garbage and cache misses included), but not timed.
      const group = new Map<number, Loose>();
      for (let i = at; i < Math.min(at + batch, count); i++) {
        const note = headNote(`cairn-index-add-${r}`, i);
        if (suffix) note.title += ` ${i % 2}-${Math.floor((r * count + i) / 2) + 1}`;
        const analysed = noteVector(note.title, note.tags, note.body);
        const { terms: vector, encoded } = analysed;
        terms += vector.counts.size;
        // Made untimed, as the serving thread makes it (what it costs there is timed apart: docs/benchmarks.md).
        group.set(firstKey + r * count + i, settings.vector === "stored" ? encoded : settings.vector === "worded" ? wordedVector(analysed) : vector);
      }
      const cpu = process.cpuUsage();
      for (const [key, vector] of group) index.add(key, vector);
      if (flushEach || at + batch >= count) index.flush?.();
      const used = process.cpuUsage(cpu);
      micros += used.user + used.system;
    }
    results[v].push({ cpu: micros / count, perTerm: micros / terms });
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`${vectors.length} stored notes, then ${count} head-heavy notes${suffix ? " (titles suffixed)" : ""} a round in batches of ${batch}, ${rounds} rounds alternating; load ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}, ${new Date().toISOString()}`);
console.log("| variant | build s | CPU µs a note by round | µs a term by round | median µs a note |\n|---|---|---|---|---|");
for (const [v, { name }] of variants.entries()) {
  const list = (key: "cpu" | "perTerm") => results[v].map((x) => x[key].toFixed(key === "cpu" ? 0 : 3)).join(", ");
  console.log(`| ${name} | ${(built[v].buildMs / 1000).toFixed(1)} | ${list("cpu")} | ${list("perTerm")} | ${median(results[v].map((x) => x.cpu)).toFixed(0)} |`);
}
