// Issue 10's figures: keyed GET, create and search on the SQLite engine, on
// PostgreSQL with one replica and with two replicas on one database, in the
// same run, with wrk. Also the cost of reading the key on every request (what
// PostgreSQL pays so that a revoke is refused on the next request at every
// replica) and the time `cairn admin copy` takes to move the seeded instance.
//   bun run build && bun bench/replicas.ts [--notes 20000] [--duration 5] [--connections 32] [--from DIR]
// --from DIR: copy an already seeded data dir (bench/seed.ts output, with its
// keys.json) instead of seeding; DIR itself is only read. Pass its --notes too.
// The PostgreSQL is the tests' throwaway cluster (test/helpers/postgres.ts:
// Debian's package, fsync off). Two replicas on a 2-core host share the cores
// with the database and wrk: the figures show the overhead, not scaling.
// --binaries NAME=PATH,NAME=PATH: compare builds in the same run (e.g. main's
// beside this one): PostgreSQL creates only, 1 and 2 replicas per build, the
// builds alternating in each of --rounds rounds (default 3), so the host's
// mood hits them alike; each round also prints the load average. --env
// "K=V K=V" adds settings to every server (e.g. SIMILAR_NOTES=0).
import { mkdtempSync, rmSync } from "node:fs";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresStore } from "../src/store/postgres/store.ts";
import { SqliteStore } from "../src/store/sqlite/store.ts";
import { freshDatabase } from "../test/helpers/postgres.ts";
import { benchArgs, BREAKERS_OFF, getNoteLua, keyListLua, parseWrk, searchLua, wrkArgv, type Figures } from "./wrk.ts";

const args = benchArgs();
const notes = Number(args.notes ?? 20_000);
const duration = Number(args.duration ?? 5);
const connections = Number(args.connections ?? 32);
const root = join(import.meta.dir, "..");
const binary = join(root, "dist/cairn");
const work = mkdtempSync(join(tmpdir(), "cairn-replicas-"));
const dataDir = join(work, "data");

const seed = args.from
  ? Bun.spawnSync(["cp", "-r", args.from, dataDir], { stdout: "inherit", stderr: "inherit" })
  : Bun.spawnSync([process.execPath, join(root, "bench/seed.ts"), "--dir", dataDir, "--notes", String(notes), "--contributors", "2000"], {
      stdout: "inherit",
      stderr: "inherit",
    });
if (seed.exitCode !== 0) throw new Error("seeding failed");
const { keys, ids, queries } = JSON.parse(readFileSync(join(dataDir, "keys.json"), "utf8")) as { keys: string[]; ids: string[]; queries: string[] };

const extraEnv = Object.fromEntries((args.env ?? "").split(/\s+/).filter(Boolean).map((kv) => kv.split("=", 2) as [string, string]));
const url = await freshDatabase("bench");
const copyStarted = performance.now();
const copy = Bun.spawnSync([binary, "admin", "copy", "--to", url], { env: { ...process.env, DATA_DIR: dataDir } });
if (copy.exitCode !== 0) throw new Error(`copy failed: ${copy.stderr.toString()}`);
const copyMs = performance.now() - copyStarted;

/**
 * A server, returned once its search postings are built (search is measured
 * on them, not on the database's index they are built from): its log is read
 * until it says so, then drained.
 */
async function serve(port: number, env: Record<string, string>, executable = binary) {
  const proc = Bun.spawn([executable, "serve"], {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_LEVEL: "info", ...BREAKERS_OFF, ...extraEnv, ...env },
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let log = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server on ${port} ended before its search postings were built:\n${log}`);
    log += decoder.decode(value);
    if (log.includes('"listening"') && (!log.includes("search answers from the database index") || log.includes("search postings are in memory"))) break;
  }
  void (async () => {
    while (!(await reader.read()).done);
  })();
  return proc;
}

/** wrk against each URL at once (connections split between them); req/s summed, latencies the worst. */
/** `script` may depend on the wrk process's index, so two processes never send the same note (a 409). */
async function wrk(urls: string[], script: string | ((index: number) => string), c = connections, seconds = duration): Promise<Figures> {
  const each = Math.max(1, Math.floor(c / urls.length));
  const runs = await Promise.all(
    urls.map(async (u, index) => {
      const proc = Bun.spawn(wrkArgv(work, u, typeof script === "string" ? script : script(index), each, seconds), { stdout: "pipe" });
      return parseWrk(await new Response(proc.stdout).text());
    }),
  );
  return {
    rps: runs.reduce((sum, r) => sum + r.rps, 0),
    p50: Math.max(...runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
  };
}

const keyList = keyListLua(keys, 4);
const getScript = getNoteLua(keyList, ids);
const searchScript = searchLua(keyList, queries);
const createScript = (run: string) => (index: number) =>
  `${keyListLua(keys, 4, index * 2)}\nlocal n = 0\nrequest = function()\n n = n + 1\n return wrk.format("POST", "/v1/posts", {["Authorization"] = "Bearer " .. key(n), ["Content-Type"] = "application/json"}, '{"title":"bench ${run} ${index} ' .. tid .. '-' .. n .. '","body":"a body of words about replicas and postgres, number ' .. n .. ' ' .. os.time() .. '","tags":["bench"]}')\nend`;

const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
let port = 18800;

if (args.binaries) {
  // Builds side by side: creates only, on PostgreSQL, 1 and 2 replicas per build, alternating.
  const builds = args.binaries.split(",").map((pair) => pair.split("=", 2) as [string, string]);
  const rounds = Number(args.rounds ?? 3);
  const seconds = Math.max(duration, 8);
  const results = new Map<string, number[]>();
  let run = 0;
  console.log(`\nCairn replicas bench, builds compared: ${notes} notes, creates only, wrk -c${connections} -d${seconds}s, env "${args.env ?? ""}", ${new Date().toISOString()}`);
  for (let round = 1; round <= rounds; round++) {
    for (const [name, path] of builds) {
      for (const replicas of [1, 2]) {
        const procs = await Promise.all(Array.from({ length: replicas }, () => serve(++port, { DATABASE_URL: url }, path)));
        const urls = procs.map((_, i) => `http://127.0.0.1:${port - procs.length + 1 + i}/`);
        const before = loadavg();
        const figures = await wrk(urls, createScript(`r${++run}`), connections, seconds);
        for (const proc of procs) proc.kill("SIGTERM");
        await Promise.all(procs.map((proc) => proc.exited));
        const label = `${name}, ${replicas} replica${replicas > 1 ? "s" : ""}`;
        results.set(label, [...(results.get(label) ?? []), figures.rps]);
        console.log(`round ${round} | ${label} | ${Math.round(figures.rps)} creates/s | p50 ${figures.p50.toFixed(2)} ms | p99 ${figures.p99.toFixed(2)} ms | non-2xx ${figures.non2xx} | load before ${before}`);
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log("\n| build | 1 replica, creates/s (rounds) | 2 replicas | 2 ÷ 1 by round | median 2 ÷ 1 |\n|---|---|---|---|---|");
  for (const [name] of builds) {
    const one = results.get(`${name}, 1 replica`)!;
    const two = results.get(`${name}, 2 replicas`)!;
    const ratios = two.map((r, i) => r / one[i]);
    console.log(`| ${name} | ${Math.round(median(one))} (${one.map(Math.round).join(", ")}) | ${Math.round(median(two))} (${two.map(Math.round).join(", ")}) | ${ratios.map((r) => `${(100 * r).toFixed(0)}%`).join(", ")} | ${(100 * median(ratios)).toFixed(0)}% |`);
  }
  console.log(`load at the end: ${loadavg()}`);
  rmSync(work, { recursive: true, force: true });
  process.exit(0);
}

const rows: [string, string, Figures][] = [];
const setups: [string, Record<string, string>[]][] = [
  ["SQLite", [{}]],
  ["PostgreSQL, 1 replica", [{ DATABASE_URL: url }]],
  ["PostgreSQL, 2 replicas", [{ DATABASE_URL: url }, { DATABASE_URL: url }]],
];
for (const [name, envs] of setups) {
  const procs = await Promise.all(envs.map((env) => serve(++port, env)));
  const urls = procs.map((_, i) => `http://127.0.0.1:${port - procs.length + 1 + i}/`);
  await wrk(urls, getScript, connections, 2); // warm-up
  rows.push([name, "GET /v1/posts/{id}, valid key", await wrk(urls, getScript)]);
  rows.push([name, "POST /v1/search, 1 connection", await wrk(urls.slice(0, 1), searchScript, 1)]);
  rows.push([name, `POST /v1/search, ${connections} connections`, await wrk(urls, searchScript)]);
  rows.push([name, "POST /v1/posts", await wrk(urls, createScript(name.replace(/\W/g, "")), connections, Math.max(duration, 8))]);
  for (const proc of procs) proc.kill("SIGTERM");
  await Promise.all(procs.map((proc) => proc.exited));
}

// What a keyed request costs on each engine when the key is not remembered:
// the prefix lookup, sequentially, in-process (PostgreSQL: one round trip).
async function keyLookupMicros(store: SqliteStore | PostgresStore): Promise<number> {
  const prefixes = keys.slice(0, 500).map((key) => key.slice(0, 12));
  for (const prefix of prefixes) await store.keyCandidates(prefix);
  const started = performance.now();
  for (let i = 0; i < 5_000; i++) await store.keyCandidates(prefixes[i % prefixes.length]);
  return ((performance.now() - started) * 1000) / 5_000;
}
const sqlite = new SqliteStore({ dataDir });
const pg = new PostgresStore({ url, poolSize: 4 });
const sqliteKeyUs = await keyLookupMicros(sqlite);
const pgKeyUs = await keyLookupMicros(pg);
await sqlite.close();
await pg.close();

console.log(`\nCairn replicas bench: ${notes} notes, wrk -c${connections} -d${duration}s (creates ${Math.max(duration, 8)}s), ${new Date().toISOString()}, load ${readFileSync("/proc/loadavg", "utf8").trim()}`);
console.log("| engine | scenario | req/s | p50 ms | p99 ms | non-2xx |\n|---|---|---|---|---|---|");
for (const [engine, scenario, f] of rows) console.log(`| ${engine} | ${scenario} | ${Math.round(f.rps)} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} | ${f.non2xx} |`);
console.log(`\nkey lookup by prefix (the per-request key read), in-process, sequential: SQLite ${sqliteKeyUs.toFixed(1)} µs, PostgreSQL ${pgKeyUs.toFixed(1)} µs`);
console.log(`cairn admin copy of ${notes} notes into PostgreSQL: ${(copyMs / 1000).toFixed(1)} s (${copy.stdout.toString().match(/"ms": (\d+)/)?.[1] ?? "?"} ms inside)`);
rmSync(work, { recursive: true, force: true }); // the copied data dir
process.exit(0);
