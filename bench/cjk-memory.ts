// What test/reliability/memory.test.ts's "notes of 20,000 distinct CJK pairs"
// costs, measured (docs/reliability.md, "What holds the memory at its peak"):
// the same 300 notes created through the compiled server, 8 at a time, with
// SEARCH_MEMORY_MB=64 and hints off, the server's RSS read from /proc every
// 100 ms (--timeline prints it); printed per run: RSS before, peak (VmHWM)
// and growth. Another build: run this file from that checkout (the server is
// its dist/cairn, as for the test).
//   bun run build && bun bench/cjk-memory.ts [--runs 5] [--env "NAME=VALUE ..."] [--timeline 1]
//   bun bench/cjk-memory.ts --in-process [--repo PATH]
// --in-process: the same notes analysed and added to a MemoryIndex alone
// (no server): its own count (MemoryIndex.bytes, what SEARCH_MEMORY_MB is
// checked against) beside what the JS heap holds for it after a full
// collection, and the notes' terms and postings.
import { heapStats } from "bun:jsc";
import { join, resolve } from "node:path";
import { inBatches, NO_BREAKERS, register } from "../test/helpers/api.ts";
import { call, startServer } from "../test/helpers/server.ts";
import { cjkBody, procKb } from "../test/reliability/support.ts";
import { benchArgs } from "./wrk.ts";

const args = benchArgs();
const NOTES = 300;
const mb = (bytes: number) => (bytes / 1048576).toFixed(1);

if ("in-process" in args) {
  const repo = resolve(args.repo ?? join(import.meta.dir, ".."));
  const { noteVector } = await import(join(repo, "src/core/search/vector.ts"));
  const { MemoryIndex } = await import(join(repo, "src/core/search/memory-index.ts"));
  const bodies = Array.from({ length: NOTES }, (_, i) => cjkBody(10_000 + i));
  Bun.gc(true);
  const before = heapStats();
  const index = new MemoryIndex();
  let postings = 0;
  for (const [i, body] of bodies.entries()) {
    const vector = noteVector(`cjk postings ${i}`, [], body);
    postings += vector.terms.counts.size;
    index.add(i + 1, vector.terms);
  }
  index.flush();
  Bun.gc(true);
  const after = heapStats();
  const held = after.heapSize - before.heapSize + (after.extraMemorySize - before.extraMemorySize);
  console.log(`${repo}: ${NOTES} notes, ${postings} postings, ${index.termCount} terms`);
  console.log(`own count ${mb(index.bytes)} MB (postings' arrays ${mb(index.postingsBytes)} MB); JS heap held after a full collection ${mb(held)} MB (${((held - index.postingsBytes) / index.termCount).toFixed(0)} bytes a term besides the arrays)`);
  process.exit(0);
}

const runs = Number(args.runs ?? 1);
const extra: Record<string, string> = Object.fromEntries((args.env ?? "").split(/\s+/).filter(Boolean).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]));
const growths: number[] = [];
for (let run = 0; run < runs; run++) {
  const server = await startServer({ binary: true, env: { ...NO_BREAKERS, SEARCH_MEMORY_MB: "64", LOG_LEVEL: "warn", SIMILAR_NOTES: "0", ...extra } });
  try {
    const pid = server.proc.pid;
    const author = await register(server.url);
    const before = procKb(pid, "VmRSS");
    let done = 0;
    const timeline: string[] = [];
    const started = performance.now();
    const timer = setInterval(() => timeline.push(`${((performance.now() - started) / 1000).toFixed(1)}s:${done}:${(procKb(pid, "VmRSS") / 1024).toFixed(0)}`), 100);
    await inBatches(NOTES, 8, async (i) => {
      const res = await call(server.url, "POST", "/v1/posts", { key: author.key, json: { title: `cjk postings ${i}`, body: cjkBody(10_000 + i) } });
      if (res.status !== 201) throw new Error(`create ${i}: ${res.status}`);
      done++;
    });
    clearInterval(timer);
    const peak = procKb(pid, "VmHWM");
    growths.push((peak - before) / 1024);
    console.log(`run ${run + 1}: RSS before ${(before / 1024).toFixed(0)} MB, peak ${(peak / 1024).toFixed(0)} MB, growth ${((peak - before) / 1024).toFixed(0)} MB`);
    if ("timeline" in args) console.log(`  seconds:notes:RSS MB ${timeline.join(" ")}`);
  } finally {
    await server.stop();
  }
}
const sorted = [...growths].sort((a, b) => a - b);
console.log(`growth over ${runs} run(s): ${sorted.map((g) => g.toFixed(0)).join(", ")} MB (the test's bound: 600); settings ${JSON.stringify(extra)}; load ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}`);
