// The CPU a ~2 KB note's create costs in process, side by side (docs/benchmarks.md,
// "Writes of ~2 KB notes, second round"): each variant creates the same head-heavy
// notes through SqliteStore.createNote, 16 at a time (one group commit each), on a
// fresh copy of the directory's database, in alternating rounds. Printed per round:
// notes/s, the process's CPU a note (every thread) and the main thread's (the one
// that serves requests; from /proc, so a checkpoint worker's CPU is not in it), and
// the wall time a note's MemoryIndex.add took on it (its analysed vector's postings
// staged, and every ~190 notes all appended), between the write's SQLite work as on a server.
//   bun bench/write-cpu.ts --dir /tmp/h100k [--notes 3000] [--rounds 3] [--memory] [--warmup 0]
//     [--variants "src=/path/to/an/export/of/main|src=.|src=. fold=512|src=. pragma=wal_autocheckpoint=0|src=. fts=automerge=16|src=. memory=0"]
// A variant is a space-separated list of: src=DIR (the source tree whose store is
// imported; default this one), fold=ROWS (searchFoldEvery), memory=1|0 (the
// postings on or off for this variant; default: on with --memory),
// pragma=NAME=VALUE[,...] (run on the store's connection after it opened),
// fts=NAME=VALUE[,...] (an FTS5 configuration option of search_fts, e.g.
// automerge=16). --warmup N: N notes created before the counted ones (the
// store's worker threads start after their first batches: 64 batches, 1,024
// notes, for the FTS5 follower; counted from the start, those are in the figure).
// The CPU is robust on a shared
// host where rates are not; compare variants only inside one run.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { headNote } from "./headheavy.ts";
import { benchArgs } from "./wrk.ts";
import { copyDatabase } from "./data-files.ts";

const args = benchArgs();
const dir = args.dir ?? "/tmp/h100k";
const count = Number(args.notes ?? 3000);
const rounds = Number(args.rounds ?? 3);
const batch = 16;
const memory = "memory" in args;
const warmup = Number(args.warmup ?? 0);
const here = resolve(import.meta.dir, "..");
const variants = (args.variants ?? "src=.").split("|").map((spec) => {
  const pairs = spec.trim().split(/\s+/).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]);
  return { name: spec.trim(), settings: Object.fromEntries(pairs) as Record<string, string> };
});
const notes = Array.from({ length: count + warmup + 2 * batch }, (_, i) => headNote("cairn-write-cpu", i));

/** CPU of the main thread, in µs (ticks of 10 ms). */
function mainThreadCpu(): number {
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Wall ms spent in MemoryIndex.add of analysed vectors (a write's own notes) this round. */
let addMs = 0;
// biome-ignore lint: a class of another source tree
function timeAdds(MemoryIndex: any): void {
  const proto = MemoryIndex.prototype;
  if (proto.timedByBench) return;
  const add = proto.add;
  proto.timedByBench = true;
  proto.add = function (key: number, vector: unknown) {
    if (typeof vector === "string") return add.call(this, key, vector);
    const started = performance.now();
    const added = add.call(this, key, vector);
    addMs += performance.now() - started;
    return added;
  };
}
const results = variants.map(() => [] as { rate: number; cpu: number; main: number; add: number }[]);
for (let r = 0; r < rounds; r++) {
  for (const [v, { settings }] of variants.entries()) {
    const src = resolve(here, settings.src ?? ".");
    const { SqliteStore } = await import(join(src, "src/store/sqlite/store.ts"));
    timeAdds((await import(join(src, "src/core/search/memory-index.ts"))).MemoryIndex);
    const work = mkdtempSync(join(tmpdir(), "cairn-write-cpu-"));
    copyDatabase(dir, work);
    const on = settings.memory === undefined ? memory : settings.memory === "1";
    const store = new SqliteStore({ dataDir: work, searchMemoryBytes: on ? 1 << 30 : 0, searchFoldEvery: settings.fold ? Number(settings.fold) : undefined });
    await store.migrate();
    if (on) await store.searchMemoryBuilt();
    for (const pragma of (settings.pragma ?? "").split(",").filter(Boolean)) store.sqlite.exec(`PRAGMA ${pragma}`);
    for (const option of (settings.fts ?? "").split(",").filter(Boolean)) {
      const [name, value] = option.split("=");
      store.sqlite.query("INSERT INTO search_fts(search_fts, rank) VALUES (?, ?)").run(name, Number(value));
    }
    const authors: number[] = [];
    for (let i = 0; i < 64; i++) {
      authors.push((await store.createContributor({ email: `c${i}@write-cpu.example`, keyPrefix: `cairn_wc${i}`, keyDigest: new Uint8Array(32), createdAt: 0 })).contributorNo);
    }
    let n = 0;
    const create = () => {
      const i = n++;
      return store.createNote({ id: crypto.randomUUID(), contributorNo: authors[i % authors.length], ...notes[i], createdAt: Date.now() }, () => false);
    };
    await Promise.all(Array.from({ length: batch }, create)); // prepares every statement
    while (n < batch + warmup) await Promise.all(Array.from({ length: batch }, create));
    addMs = 0;
    const started = performance.now();
    const cpu = process.cpuUsage();
    const main = mainThreadCpu();
    for (let done = 0; done < count; done += batch) await Promise.all(Array.from({ length: batch }, create));
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    results[v].push({ rate: (count / wall) * 1000, cpu: (used.user + used.system) / count, main: (mainThreadCpu() - main) / count, add: (addMs * 1000) / count });
    await store.close();
    rmSync(work, { recursive: true, force: true });
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`${count} head-heavy notes a round (after ${warmup} uncounted) in batches of ${batch}${memory ? ", postings on" : ""}, ${rounds} rounds alternating; load ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}, ${new Date().toISOString()}`);
console.log("| variant | notes/s by round | CPU µs a note by round | main thread µs a note by round | median main thread | MemoryIndex.add µs a note by round (wall) |\n|---|---|---|---|---|---|");
for (const [v, { name }] of variants.entries()) {
  const list = (key: "rate" | "cpu" | "main" | "add") => results[v].map((x) => x[key].toFixed(0)).join(", ");
  console.log(`| ${name} | ${list("rate")} | ${list("cpu")} | ${list("main")} | ${median(results[v].map((x) => x.main)).toFixed(0)} | ${list("add")} |`);
}
