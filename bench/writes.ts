// Note creation of real-length notes (~2 KB, the head-heavy corpus of
// bench/headheavy.ts) through HTTP with wrk, in settings variants run in
// alternating rounds of the same run (by default the in-memory postings on and
// off, SEARCH_MEMORY_MB=0):
//   bun run build && bun bench/writes.ts --dir /tmp/h100k [--connections 16] [--duration 10] [--rounds 2]
//     [--variants "default|SEARCH_MEMORY_MB=0"]   (variants split by |, each a space-separated list of settings;
//      `binary=PATH` runs another build, e.g. main's, beside this one)
//     [--lua FILE]   (only write the wrk script)
//     [--warmup 1]   (seconds of uncounted writes first, other notes: the route's first request compiles its handler, ~0.3-0.9 s)
// A variant's `dir=DIR` copies its database from DIR instead of --dir (the same
// notes and keys in another layout, e.g. the layout before the search file for
// a build from before it, beside --dir's moved copy for this one).
// A variant's `cwd=DIR` runs its server in DIR; by default it runs in a temp
// directory, as a deployed server does: a build that finds a module by a path
// relative to the working directory (the fold thread's worker did, up to
// w18e) would otherwise find the source tree's file when run from the repo.
// For every two variants that differ by one setting, the same-run ratio of
// their rates is printed: what that setting costs a write.
// Each round runs on a fresh copy of the directory's database (so every round
// starts from the same notes), after the server has built its postings.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { headNote } from "./headheavy.ts";
import { benchArgs, keyListLua, lua, parseWrk, wrkArgv, type Figures } from "./wrk.ts";
import { copyDatabase } from "./data-files.ts";

const args = benchArgs();
const dir = args.dir ?? "/tmp/h100k";
const connections = Number(args.connections ?? 16);
const duration = Number(args.duration ?? 10);
const rounds = Number(args.rounds ?? 2);
const warmup = Number(args.warmup ?? 1);
/** Each variant's settings (`default`: none). */
const variants = (args.variants ?? "default|SEARCH_MEMORY_MB=0").split("|").map((spec) => {
  const settings = spec.trim() === "default" ? [] : spec.trim().split(/\s+/).map((pair) => pair.split("=") as [string, string]);
  return { name: spec.trim(), settings: Object.fromEntries(settings) as Record<string, string> };
});
const root = join(import.meta.dir, "..");
const binary = join(root, "dist/cairn");
if (!existsSync(binary)) throw new Error("build first: bun run build");
const { keys } = JSON.parse(readFileSync(join(dir, "keys.json"), "utf8")) as { keys: string[] };

// 2,000 notes of the corpus (drawn past the seeded ones), each sent with a
// unique suffix on its title so no two requests are the same note.
const NOTES = 2000;
const bodies = Array.from({ length: NOTES }, (_, i) => headNote("cairn-writes", i));
const averageBytes = bodies.reduce((sum, note) => sum + JSON.stringify(note).length, 0) / NOTES;
const fragments = bodies.map((note) => {
  const json = JSON.stringify(note);
  const cut = json.indexOf('","body"');
  return [json.slice(0, cut), json.slice(cut)];
});
const scriptFor = (marker: string) => `${keyListLua(keys, 2)}
local heads = {${fragments.map(([head]) => lua(head)).join(",")}}
local tails = {${fragments.map(([, tail]) => lua(tail)).join(",")}}
local n = 0
request = function()
 n = n + 1
 local i = ((n * 7 + tid * 13) % #heads) + 1
 return wrk.format("POST", "/v1/posts", {["Authorization"] = "Bearer " .. key(n), ["Content-Type"] = "application/json"}, heads[i] .. " ${marker}" .. tid .. "-" .. n .. tails[i])
end`;
const script = scriptFor("");
/** The warm-up's notes differ from the counted ones (or the counted ones would be duplicates, 409). */
const warmupScript = scriptFor("w");

// `--lua FILE`: only write the wrk script (to load a server run by hand, e.g. under `bun --cpu-prof`).
if (args.lua) {
  writeFileSync(args.lua, script);
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), "cairn-writes-"));
/** CPU time of a process (all threads), of its main thread and of each of its worker threads (by thread id), in µs, from /proc (ticks of 10 ms). */
function cpuOf(pid: number): { all: number; main: number; workers: Map<string, number> } {
  const ticks = (file: string) => {
    const fields = readFileSync(file, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  };
  const workers = new Map<string, number>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      if (readFileSync(`/proc/${pid}/task/${task}/comm`, "utf8").trim() === "Worker") workers.set(task, ticks(`/proc/${pid}/task/${task}/stat`));
    } catch {
      // the thread ended meanwhile
    }
  }
  return { all: ticks(`/proc/${pid}/stat`), main: ticks(`/proc/${pid}/task/${pid}/stat`), workers };
}

async function round(port: number, variant: Record<string, string>): Promise<Figures & { ms: number; cpuAll: number; cpuMain: number; cpuWorkers: number[] }> {
  const { binary: chosen, cwd, dir: from, ...settings } = variant;
  const copy = join(work, `copy-${port}`);
  rmSync(copy, { recursive: true, force: true });
  mkdirSync(copy, { mode: 0o700 });
  copyDatabase(from ?? dir, copy);
  const env: Record<string, string> = { ...(process.env as Record<string, string>), PORT: String(port), HOST: "127.0.0.1", DATA_DIR: copy, LOG_LEVEL: "info", POSTS_PER_HOUR: "0" };
  Object.assign(env, settings);
  const memoryOff = settings.SEARCH_MEMORY_MB === "0";
  const started = performance.now();
  const server = Bun.spawn([chosen ?? binary, "serve"], { env, cwd: cwd ?? work, stdout: "pipe", stderr: "inherit" });
  let exited = false;
  void server.exited.then(() => (exited = true));
  let log = "";
  const decoder = new TextDecoder();
  void (async () => {
    for await (const chunk of server.stdout) log += decoder.decode(chunk);
  })();
  // Measured once search answers from the postings (or, with them off, once ready).
  for (;;) {
    await Bun.sleep(50);
    if (exited) throw new Error(`the server of ${JSON.stringify(variant)} exited before it was ready (port ${port} taken?)`);
    const ready = await fetch(`http://127.0.0.1:${port}/v1/readyz`).then((r) => r.ok, () => false);
    if (ready && (memoryOff || log.includes("search postings are in memory") || !log.includes("database index for now"))) break;
  }
  const ms = performance.now() - started;
  if (warmup > 0) Bun.spawnSync(wrkArgv(work, `http://127.0.0.1:${port}/`, warmupScript, connections, warmup));
  const before = cpuOf(server.pid);
  const figures = parseWrk(Bun.spawnSync(wrkArgv(work, `http://127.0.0.1:${port}/`, script, connections, duration)).stdout.toString());
  const after = cpuOf(server.pid);
  const notes = Math.max(1, figures.rps * duration);
  server.kill("SIGTERM");
  await server.exited;
  rmSync(copy, { recursive: true, force: true });
  // The worker threads (the fold thread, the checkpointer), busiest first: each one's CPU a note over the counted seconds.
  const cpuWorkers = [...after.workers].map(([task, cpu]) => (cpu - (before.workers.get(task) ?? 0)) / notes).sort((a, b) => b - a);
  return { ...figures, ms, cpuAll: (after.all - before.all) / notes, cpuMain: (after.main - before.main) / notes, cpuWorkers };
}

/**
 * A port nobody listens on now: a fixed range let two runs at once (two
 * agents on one host) start a server on a port the other's held, and the
 * readiness loop then measured the other run's server.
 */
function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const { port } = probe;
  probe.stop(true);
  return port;
}

const figures: (Figures & { cpuAll: number; cpuMain: number; cpuWorkers: number[] })[][] = variants.map(() => []);
for (let r = 0; r < rounds; r++) {
  for (const [v, variant] of variants.entries()) figures[v].push(await round(freePort(), variant.settings));
}
rmSync(work, { recursive: true, force: true });
const list = (values: number[], digits = 0) => values.map((v) => v.toFixed(digits)).join(" ");
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
console.log(`\n${dir}: POST /v1/posts of head-heavy notes (~${Math.round(averageBytes)} bytes of JSON), wrk -t2 -c${connections} -d${duration}s after ${warmup} s of warm-up, ${rounds} rounds alternating, load ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}, ${new Date().toISOString()}`);
console.log("| settings | notes/s by round | median | p50 ms | p99 ms | non-2xx | server CPU µs a note by round (main thread) | worker threads' CPU µs a note by round, busiest first |\n|---|---|---|---|---|---|---|---|");
for (const [v, variant] of variants.entries()) {
  const f = figures[v];
  console.log(`| ${variant.name} | ${list(f.map((x) => x.rps))} | ${median(f.map((x) => x.rps)).toFixed(0)} | ${list(f.map((x) => x.p50), 1)} | ${list(f.map((x) => x.p99), 1)} | ${f.reduce((s, x) => s + x.non2xx, 0)} | ${f.map((x) => `${x.cpuAll.toFixed(0)} (${x.cpuMain.toFixed(0)})`).join(", ")} | ${f.map((x) => x.cpuWorkers.map((w) => w.toFixed(0)).join("+") || "none").join(", ")} |`);
}
// A pair (with, without) where `without` is `with` plus one setting: that setting turns something off.
for (const [a, withIt] of variants.entries()) {
  for (const [b, without] of variants.entries()) {
    const extra = Object.keys(without.settings).filter((key) => withIt.settings[key] !== without.settings[key]);
    const sameRest = Object.keys(withIt.settings).every((key) => without.settings[key] === withIt.settings[key]);
    if (a === b || extra.length !== 1 || !sameRest) continue;
    const ratios = figures[a].map((f, i) => f.rps / figures[b][i].rps);
    const setting = `${extra[0]}=${without.settings[extra[0]]}`;
    if (extra[0] === "binary") {
      console.log(`${withIt.name} / ${without.name} by round: ${list(ratios, 3)} (median ${median(ratios).toFixed(3)}): this build against ${setting}`);
      continue;
    }
    console.log(`${withIt.name} / ${without.name} by round: ${list(ratios, 3)} (median ${median(ratios).toFixed(3)}): what ${setting} turns off costs ${((1 - median(ratios)) * 100).toFixed(1)}% of the write rate`);
  }
}
