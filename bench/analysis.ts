// A note's analysis alone, in process: analyze() and termVector() of the
// head-heavy corpus's ~1.8 KB bodies (bench/headheavy.ts), the least time of
// several rounds per note, beside another checkout's (`--repo`, e.g. an export
// of main) in the same run, and the terms checked equal:
//   bun bench/analysis.ts [--notes 3000] [--rounds 8] [--repo /path/to/other/checkout]
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { headNote } from "./headheavy.ts";
import { benchArgs } from "./wrk.ts";

const args = benchArgs();
const count = Number(args.notes ?? 3000);
const rounds = Number(args.rounds ?? 8);
const repos = [join(import.meta.dir, ".."), ...(args.repo ? [args.repo] : [])];
const analysers = await Promise.all(repos.map((repo) => import(join(repo, "src/core/search/analyzer.ts"))));
const notes = Array.from({ length: count }, (_, i) => headNote("analysis", i));
const parts = analysers.flatMap((a) => [(body: string) => a.analyze(body), (body: string) => a.termVector("", [], body)]);
const least = parts.map(() => Infinity);
for (let round = 0; round < rounds; round++)
  for (const [p, part] of parts.entries()) {
    const since = performance.now();
    for (const note of notes) part(note.body);
    least[p] = Math.min(least[p], performance.now() - since);
  }
const us = (ms: number) => ((ms * 1000) / count).toFixed(1);
for (const [r, repo] of repos.entries()) console.log(`${repo}: analyze ${us(least[2 * r])} µs a note, termVector ${us(least[2 * r + 1])} µs`);
if (analysers.length === 2)
  for (const note of notes)
    if (JSON.stringify(analysers[0].analyze(note.body)) !== JSON.stringify(analysers[1].analyze(note.body))) throw new Error("the two checkouts' terms differ");
const chars = notes.reduce((sum, n) => sum + n.body.length, 0) / count;
console.log(`${count} bodies of ${chars.toFixed(0)} characters on average, least of ${rounds} rounds; load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
