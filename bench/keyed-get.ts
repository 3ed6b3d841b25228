// Keyed GET /v1/posts/{id} on SQLite and on one PostgreSQL replica, in turn
// over several rounds of one run, with the CPU each side spends per request:
// the `serve` process (utime + stime of its threads) and the whole PostgreSQL
// cluster (postmaster, children, reaped children). Optionally a second binary
// on PostgreSQL (--base, e.g. a build of main) beside this build, so a change
// is judged against its baseline in the same run, on the same database.
//   bun run build && bun bench/keyed-get.ts --from /tmp/wt20-seed-100k [--base /tmp/old-cairn[,/tmp/older-cairn]] [--rounds 3] [--duration 5] [--connections 32]
// --from: a seeded data dir (bench/seed.ts, with keys.json); it is copied, never written.
// The PostgreSQL is the tests' throwaway cluster (test/helpers/postgres.ts). Figures: docs/benchmarks.md.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cluster, freshDatabase } from "../test/helpers/postgres.ts";
import { benchArgs, getNoteLua, keyListLua, parseWrk, startServer, wrkArgv } from "./wrk.ts";

const args = benchArgs();
if (!args.from) throw new Error("give --from DIR (a data dir seeded by bench/seed.ts)");
const rounds = Number(args.rounds ?? 3);
const duration = Number(args.duration ?? 5);
const connections = Number(args.connections ?? 32);
const root = join(import.meta.dir, "..");
const binary = join(root, "dist/cairn");
const work = mkdtempSync(join(tmpdir(), "cairn-keyed-get-"));
const dataDir = join(work, "data");
cpSync(args.from, dataDir, { recursive: true });
const { keys, ids } = JSON.parse(readFileSync(join(dataDir, "keys.json"), "utf8")) as { keys: string[]; ids: string[] };
const script = getNoteLua(keyListLua(keys, 4), ids);

const url = await freshDatabase("keyed_get");
const copy = Bun.spawnSync([binary, "admin", "copy", "--to", url], { env: { ...process.env, DATA_DIR: dataDir } });
if (copy.exitCode !== 0) throw new Error(`copy failed: ${copy.stderr.toString()}`);
const postmaster = (await cluster()).pid;

const CLK_TCK = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;
/** CPU ms of a process (own, and its reaped children's) and its parent. */
function stat(pid: number): { own: number; reaped: number; ppid: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const ms = (i: number) => (Number(f[i]) * 1000) / CLK_TCK;
    return { own: ms(11) + ms(12), reaped: ms(13) + ms(14), ppid: Number(f[1]) };
  } catch {
    return null;
  }
}
/** Waits until the process uses under 5% of a core for a whole second. */
async function settled(pid: number): Promise<void> {
  let last = stat(pid)!.own;
  for (let i = 0; i < 600; i++) {
    await Bun.sleep(1000);
    const now = stat(pid)!.own;
    if (now - last < 50) return;
    last = now;
  }
}
function clusterCpu(): number {
  const top = stat(postmaster)!;
  let all = top.own + top.reaped;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const child = stat(Number(entry));
    if (child && child.ppid === postmaster) all += child.own + child.reaped;
  }
  return all;
}

const setups: [string, string, Record<string, string>][] = [
  ["SQLite", binary, {}],
  ...(args.base ?? "").split(",").filter(Boolean).map((bin, i, all): [string, string, Record<string, string>] => [`PostgreSQL (base${all.length > 1 ? ` ${i + 1}` : ""})`, bin, { DATABASE_URL: url }]),
  ["PostgreSQL", binary, { DATABASE_URL: url }],
];
const results = new Map<string, { rps: number; p50: number; p99: number; non2xx: number; serveMs: number; pgMs: number }[]>();
let port = 18950;
for (let round = 0; round < rounds; round++) {
  for (const [name, bin, env] of setups) {
    const { proc } = await startServer(bin, ++port, dataDir, env);
    const target = `http://127.0.0.1:${port}/`;
    await settled(proc.pid); // start-up work (the postings build) out of the way of the figures
    parseWrk(await new Response(Bun.spawn(wrkArgv(work, target, script, connections, 2), { stdout: "pipe" }).stdout).text()); // warm-up
    const serveBefore = stat(proc.pid)!.own;
    const pgBefore = clusterCpu();
    const run = parseWrk(await new Response(Bun.spawn(wrkArgv(work, target, script, connections, duration), { stdout: "pipe" }).stdout).text());
    await Bun.sleep(200);
    const requests = run.rps * duration;
    const row = { ...run, serveMs: (stat(proc.pid)!.own - serveBefore) / requests, pgMs: (clusterCpu() - pgBefore) / requests };
    results.set(name, [...(results.get(name) ?? []), row]);
    console.error(`round ${round + 1} ${name}: ${Math.round(run.rps)} req/s, serve ${row.serveMs.toFixed(3)} ms/req, PostgreSQL ${row.pgMs.toFixed(3)} ms/req`);
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sqliteRps = median(results.get("SQLite")!.map((r) => r.rps));
console.log(`\nkeyed GET: ${args.from}, wrk -c${connections} -d${duration}s, ${rounds} rounds, ${new Date().toISOString()}, load ${readFileSync("/proc/loadavg", "utf8").trim()}`);
console.log("| setup | req/s per round | median | of SQLite's | p50 ms | p99 ms | serve CPU ms/req | PostgreSQL CPU ms/req | non-2xx |\n|---|---|---|---|---|---|---|---|---|");
for (const [name, rows] of results) {
  const rps = median(rows.map((r) => r.rps));
  console.log(
    `| ${name} | ${rows.map((r) => Math.round(r.rps)).join(", ")} | ${Math.round(rps)} | ${((100 * rps) / sqliteRps).toFixed(0)}% | ${median(rows.map((r) => r.p50)).toFixed(2)} | ` +
      `${median(rows.map((r) => r.p99)).toFixed(2)} | ${median(rows.map((r) => r.serveMs)).toFixed(3)} | ${name === "SQLite" ? "" : median(rows.map((r) => r.pgMs)).toFixed(3)} | ${rows.reduce((s, r) => s + r.non2xx, 0)} |`,
  );
}
rmSync(work, { recursive: true, force: true });
process.exit(0);
