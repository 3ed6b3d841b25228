// Where the CPU of a note creation goes, thread by thread, under wrk
// (docs/benchmarks.md, "Twelfth round"): for each variant in turn, a copy of a
// seeded directory, `serve` started and measured once its postings are in
// memory, 2 s of warm-up, then `--seconds` of creates; printed per run: notes/s,
// each thread's CPU a note (from /proc/<pid>/task, threads under 0.5 µs left
// out), the whole server's and wrk's, and how idle the machine was.
//   bun run build && bun bench/thread-cpu.ts --from /tmp/seed100k [--notes bench|webmasters] [--connections 50] [--seconds 8] [--rounds 2]
//     [--variants "|SIMILAR_NOTES=0 SECRET_SCAN=0"] [--binaries "dist/cairn|/tmp/other-cairn"]
// A variant is a space-separated list of environment settings; every binary
// runs every variant, in alternating rounds. Notes: bench/run.ts's bench notes
// (near-duplicates of each other, the worst case for hints) or the first 1,999
// webmasters questions (title and 600 body characters), as bench/run.ts sends them.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { copyDatabase } from "./data-files.ts";
import { EVAL_DIR } from "./quality/collection.ts";
import { BREAKERS_OFF, benchArgs, keyListLua, parseWrk, webmastersPostsLua, wrkArgv } from "./wrk.ts";

const args = benchArgs();
const from = args.from ?? "/tmp/seed100k";
const kind = args.notes ?? "bench";
const connections = Number(args.connections ?? 50);
const seconds = Number(args.seconds ?? 8);
const rounds = Number(args.rounds ?? 2);
const variants = (args.variants ?? "|SIMILAR_NOTES=0 SECRET_SCAN=0").split("|");
const binaries = (args.binaries ?? join(import.meta.dir, "../dist/cairn")).split("|").map((path) => resolve(path));
for (const binary of binaries) if (!existsSync(binary)) throw new Error(`no ${binary}: bun run build`);
const work = mkdtempSync(join(tmpdir(), "cairn-thread-cpu-"));

const { keys } = JSON.parse(readFileSync(join(from, "keys.json"), "utf8")) as { keys: string[] };
const keyList = keyListLua(keys, 2);
const webmastersCorpus = kind === "bench" ? "" : readFileSync(join(EVAL_DIR, "cqadupstack-webmasters/corpus.jsonl"), "utf8");
const post = (body: string) => `wrk.format("POST", "/v1/posts", {["Authorization"] = "Bearer " .. key(n), ["Content-Type"] = "application/json"}, ${body})`;
/** The wrk script of a run: the warm-up is pass 0, the measured run pass 1 (webmastersPostsLua). */
const script = (pass: number) =>
  kind === "bench"
    ? `${keyList}\nlocal n = 0\nrequest = function()\n n = n + 1\n return ${post(`'{"title":"bench note ' .. tid .. '-' .. n .. '","body":"a body of words about sqlite and wal mode, number ' .. n .. ' ' .. os.time() .. '","tags":["bench"]}'`)}\nend`
    : webmastersPostsLua(keyList, webmastersCorpus, pass);

/** CPU µs (utime + stime) of each thread of `pid`, by name and id. */
function threadCpu(pid: number): Map<string, number> {
  const cpu = new Map<string, number>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${task}/comm`, "utf8").trim();
      const fields = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8").split(") ")[1].split(" ");
      cpu.set(`${name}#${task}`, (Number(fields[11]) + Number(fields[12])) * 10_000);
    } catch {}
  }
  return cpu;
}
const machineTicks = () => readFileSync("/proc/stat", "utf8").split("\n")[0].split(/\s+/).slice(1).map(Number);

async function measure(binary: string, variant: string): Promise<string> {
  const dir = mkdtempSync(join(work, "d-"));
  copyDatabase(from, dir);
  const env: Record<string, string> = { ...(process.env as Record<string, string>), PORT: "18795", HOST: "127.0.0.1", DATA_DIR: dir, LOG_LEVEL: "info", ...BREAKERS_OFF };
  for (const setting of variant.split(" ").filter(Boolean)) {
    const [name, value] = setting.split("=");
    env[name] = value;
  }
  const server = Bun.spawn([binary, "serve"], { env, stdout: "pipe", stderr: "inherit" });
  let log = "";
  const decoder = new TextDecoder();
  await new Promise<void>((ready) => {
    void (async () => {
      for await (const chunk of server.stdout as ReadableStream<Uint8Array>) {
        if (log.length < 100_000) log += decoder.decode(chunk, { stream: true });
        if (/search postings are in memory|search stays on the database index/.test(log)) ready();
      }
      ready();
    })();
  });
  Bun.spawnSync(wrkArgv(work, "http://127.0.0.1:18795/", script(0), connections, 2));
  const before = threadCpu(server.pid);
  const ticksBefore = machineTicks();
  const argv = wrkArgv(work, "http://127.0.0.1:18795/", script(1), connections, seconds);
  const run = Bun.spawnSync(["/usr/bin/time", "-f", "%U %S", ...argv]);
  const after = threadCpu(server.pid);
  const ticks = machineTicks().map((tick, i) => tick - ticksBefore[i]);
  server.kill("SIGTERM");
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
  const figures = parseWrk(run.stdout.toString());
  const notes = figures.rps * seconds;
  const [user, system] = run.stderr.toString().trim().split("\n").pop()!.split(" ").map(Number);
  let serverCpu = 0;
  const threads: string[] = [];
  for (const [thread, used] of after) {
    const spent = used - (before.get(thread) ?? 0);
    serverCpu += spent;
    if (spent / notes >= 0.5) threads.push(`${thread.replace(/#\d+$/, "")} ${(spent / notes).toFixed(1)}`);
  }
  const idle = (100 * (ticks[3] + ticks[4])) / ticks.reduce((sum, tick) => sum + tick, 0);
  return `${figures.rps.toFixed(0)} notes/s (${figures.non2xx} not 201); µs a note: server ${(serverCpu / notes).toFixed(1)} [${threads.join(", ")}], wrk ${(((user + system) * 1e6) / notes).toFixed(1)}; machine idle ${idle.toFixed(1)}%`;
}

console.log(`${kind} notes on ${from}, ${connections} connections, ${seconds} s a run`);
for (let round = 1; round <= rounds; round++) {
  for (const binary of binaries) {
    for (const variant of variants) console.log(`round ${round} ${binaries.length > 1 ? `${binary} ` : ""}[${variant || "defaults"}]: ${await measure(binary, variant)}`);
  }
}
rmSync(work, { recursive: true, force: true });
