// CPU time per request of each route on each engine: what the sizing model in
// docs/deploy.md rests on. For every route (keyed GET, search, vote, comment,
// create) a wrk run of fixed length at fixed connections against one server;
// the CPU the `serve` process used (utime + stime of all its threads, from
// /proc/<pid>/stat) and, on PostgreSQL, the CPU of the whole cluster (the
// postmaster, its live children and the children it reaped) and of the
// server's backends alone, each divided by the requests wrk completed; and
// PostgreSQL's own account from pg_stat_statements (execution + planning
// time, statements per request, the costliest statements).
//   bun run build && bun bench/cpu-per-request.ts --from /tmp/s100k [--seconds 10] [--connections 8] [--engines sqlite,postgres,sqlite-no-postings,sqlite-no-similar,postgres-no-similar,postgres-no-similar-x2] [--routes create,get]
// An engine name ending in -x2: two replicas on one database, wrk's connections
// split between them (writes from distinct authors per replica), the serve CPU
// summed over both (and printed per replica): what a second replica adds per request.
// -x2idle: two replicas, requests to the first only (the second follows its writes).
// -poolN anywhere in the name: DATABASE_POOL_SIZE=N.
// --routes: only the routes whose name holds one of these words (create: POST /v1/posts).
// --from: a seeded data dir (bench/seed.ts, with keys.json); it is copied,
// never written. The server is measured once its CPU has settled after start
// (in-memory search postings built). Re-run it after a change of the engines
// and refresh the tables of docs/deploy.md ("Sizing") and docs/benchmarks.md.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryIndex } from "../src/core/search/memory-index.ts";
import { copySqliteToPostgres } from "../src/store/copy.ts";
import { cluster, freshDatabase } from "../test/helpers/postgres.ts";
import { Rng, seedComment, seedNote } from "./seed.ts";
import { benchArgs, getNoteLua, keyListLua, lua, searchLua, startServer, wrkArgv } from "./wrk.ts";
import { openCorpus } from "./data-files.ts";

const args = benchArgs();
if (!args.from) throw new Error("give --from DIR (a data dir seeded by bench/seed.ts)");
const seconds = Number(args.seconds ?? 10);
const connections = Number(args.connections ?? 8);
const engines = (args.engines ?? "sqlite,postgres").split(",");
const routeFilter = args.routes ? args.routes.split(",").map((word) => (word === "create" ? "POST /v1/posts" : word === "short" ? "short notes" : word === "get" ? "GET" : word)) : null;
const root = join(import.meta.dir, "..");
// --binary PATH: another executable (e.g. a wrapper running `bun --cpu-prof src/main.ts "$@"` for a profile).
const binary = args.binary ?? join(root, "dist/cairn");
const work = mkdtempSync(join(tmpdir(), "cairn-cpu-"));
const commit = Bun.spawnSync(["git", "-C", root, "log", "-1", "--format=%h %cI"]).stdout.toString().trim();
const dirty = Bun.spawnSync(["git", "-C", root, "status", "--porcelain", "src"]).stdout.toString().trim() !== "";

// pg_stat_statements needs to be loaded at the cluster's start (test/helpers/postgres.ts reads this).
process.env.CAIRN_TEST_PG_SETTINGS = "shared_preload_libraries=pg_stat_statements pg_stat_statements.track_planning=on pg_stat_statements.max=1000";

// --- CPU accounting from /proc --------------------------------------------------

const CLK_TCK = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;

/** utime, stime, cutime, cstime and ppid of a process, in ms (null once it is gone). */
function stat(pid: number): { own: number; reaped: number; ppid: number; name: string } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const ms = (i: number) => (Number(fields[i]) * 1000) / CLK_TCK;
    return { own: ms(11) + ms(12), reaped: ms(13) + ms(14), ppid: Number(fields[1]), name: text.slice(text.indexOf("(") + 1, text.lastIndexOf(")")) };
  } catch {
    return null;
  }
}

const serveCpu = (pid: number) => stat(pid)?.own ?? NaN;

/** utime + stime of a process's main thread alone, in ms. */
function mainThreadCpu(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch {
    return NaN;
  }
}

/** The cluster's CPU: postmaster, live children, reaped children; and the backends of one database alone. */
function clusterCpu(postmaster: number, database: string): { all: number; backends: number } {
  const root = stat(postmaster)!;
  let all = root.own + root.reaped;
  let backends = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const child = stat(Number(entry));
    if (!child || child.ppid !== postmaster) continue;
    all += child.own + child.reaped;
    let cmdline = "";
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
    } catch {}
    if (cmdline.includes(` ${database} `)) backends += child.own;
  }
  return { all, backends };
}

function rssMb(pid: number): number {
  const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Waits until the process uses under 2% of a core for a whole second (start-up work, the postings build, done). */
async function settled(measure: () => number, limitMs = 600_000): Promise<void> {
  const deadline = performance.now() + limitMs;
  let last = measure();
  while (performance.now() < deadline) {
    await Bun.sleep(1000);
    const now = measure();
    if (now - last < 20) return;
    last = now;
  }
}

// --- the routes' wrk scripts ------------------------------------------------------

const { keys, ids, queries } = JSON.parse(readFileSync(join(args.from, "keys.json"), "utf8")) as { keys: string[]; ids: string[]; queries: string[] };
/** The i-th wrk process's keys (two replicas: distinct authors each, as bench/replicas.ts). */
const keyListOf = (index: number) => keyListLua(keys, 4, index * 2);
/** Real-length notes (the seeder's prose, another seed than the corpus), each title made unique per request. */
const newNotes = Array.from({ length: 400 }, (_, i) => {
  const note = seedNote("cpu-per-request", i);
  return JSON.stringify({ title: `${note.title} @N@`, body: note.body, tags: note.tags });
});
const comments = Array.from({ length: 200 }, (_, i) => JSON.stringify({ body: seedComment(new Rng(`cpu-comment:${i}`), seedNote("cpu-per-request", i)) }));
const post = (path: string, body: string) => `wrk.format("POST", ${path}, {["Authorization"] = "Bearer " .. key(n), ["Content-Type"] = "application/json"}, ${body})`;
const idList = `local ids = {${ids.map(lua).join(",")}}`;
/** bench/replicas.ts's create: a one-line note, unique per request. */
const shortCreate = (index: number) =>
  `${keyListOf(index)}\nlocal n = 0\nrequest = function()\n n = n + 1\n return ${post(`"/v1/posts"`, `'{"title":"cpu ${index} ' .. tid .. '-' .. n .. '","body":"a body of words about replicas and postgres, number ' .. n .. ' ' .. os.time() .. '","tags":["bench"]}'`)}\nend`;
const ROUTES: [string, (index: number) => string][] = [
  ["GET /v1/posts/{id}", (i) => getNoteLua(keyListOf(i), ids)],
  ["POST /v1/search", (i) => searchLua(keyListOf(i), queries)],
  // Each (key, note) pair comes back every #ids requests with the other vote: every request changes a vote.
  [
    "POST /v1/posts/{id}/vote",
    (i) => `${keyListOf(i)}\n${idList}\nlocal n = 0\nrequest = function()\n n = n + 1\n local v = (math.floor(n / #ids) % 2 == 0) and "up" or "down"\n return ${post(`"/v1/posts/" .. ids[(n % #ids) + 1] .. "/vote"`, `'{"vote":"' .. v .. '"}'`)}\nend`,
  ],
  [
    "POST /v1/posts/{id}/comments",
    (i) => `${keyListOf(i)}\n${idList}\nlocal c = {${comments.map(lua).join(",")}}\nlocal n = 0\nrequest = function()\n n = n + 1\n return ${post(`"/v1/posts/" .. ids[(n % #ids) + 1] .. "/comments"`, "c[(n % #c) + 1]")}\nend`,
  ],
  [
    "POST /v1/posts",
    (i) => `${keyListOf(i)}\nlocal notes = {${newNotes.map(lua).join(",")}}\nlocal n = 0\nrequest = function()\n n = n + 1\n local body = string.gsub(notes[(n % #notes) + 1], "@N@", tid .. "-" .. n .. "-" .. os.time())\n return ${post(`"/v1/posts"`, "body")}\nend`,
  ],
  ["POST /v1/posts, short notes", shortCreate],
];

/** wrk against each URL at once (the connections split between them; `script(i)` for the i-th); figures summed. */
async function wrk(urls: string[], script: (index: number) => string) {
  const outs = await Promise.all(
    urls.map(async (url, index) => {
      const proc = Bun.spawn(wrkArgv(work, url, script(index), Math.max(1, Math.floor(connections / urls.length)), seconds), { stdout: "pipe" });
      return new Response(proc.stdout).text();
    }),
  );
  const sum = (pattern: RegExp) => outs.reduce((total, out) => total + Number(out.match(pattern)?.[1] ?? 0), 0);
  return { requests: sum(/(\d+) requests in/), rps: sum(/Requests\/sec:\s+([\d.]+)/), non2xx: sum(/Non-2xx or 3xx responses:\s+(\d+)/) };
}

// --- pg_stat_statements -------------------------------------------------------------

interface Statements {
  calls: number;
  ms: number;
  top: { query: string; calls: number; ms: number }[];
}

async function statements(url: string, reset: boolean): Promise<Statements> {
  const sql = new Bun.SQL(url, { max: 1 });
  try {
    if (reset) {
      await sql`SELECT pg_stat_statements_reset()`;
      return { calls: 0, ms: 0, top: [] };
    }
    const rows = (await sql`
      SELECT query, calls::float8 AS calls, (total_exec_time + total_plan_time)::float8 AS ms
        FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'
       ORDER BY ms DESC`) as { query: string; calls: number; ms: number }[];
    return {
      calls: rows.reduce((sum, r) => sum + r.calls, 0),
      ms: rows.reduce((sum, r) => sum + r.ms, 0),
      top: rows.slice(0, 3).map((r) => ({ query: r.query.replace(/\s+/g, " ").slice(0, 110), calls: r.calls, ms: r.ms })),
    };
  } finally {
    await sql.close();
  }
}

// --- the runs -------------------------------------------------------------------------

interface Result {
  engine: string;
  route: string;
  requests: number;
  rps: number;
  non2xx: number;
  serveMs: number;
  /** The serve processes' main threads (JavaScript, the HTTP server's loop) alone. */
  mainMs?: number;
  clusterMs?: number;
  backendsMs?: number;
  statements?: Statements;
}
const results: Result[] = [];
const idle: string[] = [];
const memory: string[] = [];
let port = 18900;

for (const engine of engines) {
  const dataDir = join(work, engine);
  cpSync(args.from, dataDir, { recursive: true });
  // sqlite-no-postings: the SQLite engine without its in-memory postings (SEARCH_MEMORY_MB=0): a create
  // without the index update every replica applies for every note, search on the FTS5 fallback.
  // *-no-similar: without the similar-notes lookup on create (SIMILAR_NOTES=0), what the rest of a create costs.
  let env: Record<string, string> = engine === "sqlite-no-postings" ? { SEARCH_MEMORY_MB: "0" } : {};
  if (engine.includes("-no-similar")) env = { SIMILAR_NOTES: "0" };
  // -poolN: DATABASE_POOL_SIZE=N (each replica's connections).
  const pool = engine.match(/-pool(\d+)/)?.[1];
  if (pool) env = { ...env, DATABASE_POOL_SIZE: pool };
  let pg: { url: string; database: string; postmaster: number } | null = null;
  if (engine.startsWith("postgres")) {
    const url = await freshDatabase("cpu");
    await copySqliteToPostgres(dataDir, url);
    const sql = new Bun.SQL(url, { max: 1 });
    await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
    await sql.close();
    pg = { url, database: new URL(url).pathname.slice(1), postmaster: (await cluster()).pid };
    env = { ...env, DATABASE_URL: url };
  }
  const replicas = /-x2(idle)?\b/.test(engine) ? 2 : 1;
  // -x2idle: the second replica takes no requests; its CPU is what following the first one's writes costs.
  const loaded = engine.includes("-x2idle") ? 1 : replicas;
  const procs: Bun.Subprocess[] = [];
  const urls: string[] = [];
  for (let r = 0; r < replicas; r++) {
    procs.push((await startServer(binary, ++port, dataDir, env)).proc);
    urls.push(`http://127.0.0.1:${port}/`);
  }
  const serveAll = () => procs.reduce((sum, p) => sum + serveCpu(p.pid), 0);
  await settled(serveAll);
  // Idle cost over 5 s (timers, the cluster's background processes).
  const idleServe = serveAll();
  const idleCluster = pg ? clusterCpu(pg.postmaster, pg.database).all : 0;
  await Bun.sleep(5000);
  idle.push(`${engine}: serve ${((serveAll() - idleServe) / 5).toFixed(1)} ms/s` + (pg ? `, PostgreSQL cluster ${((clusterCpu(pg.postmaster, pg.database).all - idleCluster) / 5).toFixed(1)} ms/s` : ""));
  await wrk(urls, ROUTES[0][1]); // warm-up (JIT, page cache, prepared statements), not counted
  for (const [route, script] of ROUTES) {
    if (routeFilter && !routeFilter.some((word) => route.includes(word) && (word !== "POST /v1/posts" || route === word))) continue;
    if (pg) await statements(pg.url, true);
    const serveBefore = procs.map((p) => serveCpu(p.pid));
    const mainBefore = procs.map((p) => mainThreadCpu(p.pid));
    const clusterBefore = pg ? clusterCpu(pg.postmaster, pg.database) : null;
    const run = await wrk(urls.slice(0, loaded), script);
    // Requests still in flight when wrk stops are served after it: their CPU is
    // counted here (not in the next route's), so each figure is high by at most
    // `connections` requests' worth.
    await settled(() => serveAll() + (pg ? clusterCpu(pg.postmaster, pg.database).all : 0));
    const each = procs.map((p, i) => serveCpu(p.pid) - serveBefore[i]);
    const mains = procs.map((p, i) => mainThreadCpu(p.pid) - mainBefore[i]);
    const serveMs = each.reduce((a, b) => a + b, 0);
    const result: Result = { engine, route, ...run, serveMs, mainMs: mains.reduce((a, b) => a + b, 0) };
    if (pg && clusterBefore) {
      const after = clusterCpu(pg.postmaster, pg.database);
      result.clusterMs = after.all - clusterBefore.all;
      result.backendsMs = after.backends - clusterBefore.backends;
      result.statements = await statements(pg.url, false);
    }
    results.push(result);
    console.error(
      `${engine} ${route}: ${run.requests} requests, ${(run.requests / seconds).toFixed(0)}/s, ${(serveMs / run.requests).toFixed(3)} ms serve CPU each` +
        (replicas > 1 ? ` (per replica: ${each.map((ms) => (ms / run.requests).toFixed(3)).join(" + ")})` : "") +
        `, main thread ${(result.mainMs! / run.requests).toFixed(3)}` +
        (result.clusterMs !== undefined ? `, cluster ${(result.clusterMs / run.requests).toFixed(3)}, statements/req ${(result.statements!.calls / run.requests).toFixed(2)}` : ""),
    );
  }
  memory.push(`${engine}: serve RSS ${procs.map((p) => rssMb(p.pid).toFixed(0)).join(" + ")} MB after the runs`);
  for (const p of procs) p.kill("SIGTERM");
  await Promise.all(procs.map((p) => p.exited));
}

// What a replica pays for every note written anywhere once each replica holds
// the in-memory index and follows the change log (docs/deploy.md, "Sizing"):
// adding a stored term vector to the index, in-process, over the seeded notes.
const applied = (() => {
  const db = openCorpus(args.from);
  const rows = db.query("SELECT pk, vector FROM search_vectors ORDER BY pk LIMIT 50000").all() as { pk: number; vector: string }[];
  db.close();
  const index = new MemoryIndex();
  const before = process.cpuUsage();
  for (const row of rows) index.add(row.pk, row.vector);
  const used = process.cpuUsage(before);
  return { notes: rows.length, us: (used.user + used.system) / rows.length };
})();

const per = (ms: number | undefined, r: Result) => (ms === undefined ? "" : (ms / Math.max(1, r.requests)).toFixed(3));
const perCore = (ms: number | undefined, r: Result) => (ms === undefined || ms <= 0 ? "" : String(Math.round((1000 * r.requests) / ms)));
console.log(
  `\nCPU per request: ${args.from}, wrk -c${connections} -d${seconds}s per route, code ${commit}${dirty ? " (+ uncommitted changes in src/)" : ""}, ` +
    `${new Date().toISOString()}, load ${readFileSync("/proc/loadavg", "utf8").trim()}`,
);
console.log(
  "| engine | route | requests | req/s | non-2xx | serve CPU ms/req | PostgreSQL cluster CPU ms/req | its backends ms/req | pg_stat_statements ms/req | statements/req | req/s per core: replica | req/s per core: PostgreSQL |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of results) {
  console.log(
    `| ${r.engine} | ${r.route} | ${r.requests} | ${Math.round(r.rps)} | ${r.non2xx} | ${per(r.serveMs, r)} | ${per(r.clusterMs, r)} | ${per(r.backendsMs, r)} | ` +
      `${r.statements ? (r.statements.ms / r.requests).toFixed(3) : ""} | ${r.statements ? (r.statements.calls / r.requests).toFixed(1) : ""} | ` +
      `${perCore(r.serveMs, r)} | ${perCore(r.clusterMs, r)} |`,
  );
}
console.log(`\nidle: ${idle.join("; ")}\nmemory: ${memory.join("; ")}`);
console.log(`in-memory index, adding a stored note vector (MemoryIndex.add, ${applied.notes} notes of ${args.from}, in-process): ${applied.us.toFixed(1)} µs CPU per note`);
for (const r of results.filter((r) => r.statements)) {
  console.log(`\n${r.route}, costliest statements (pg_stat_statements, ms per request, calls per request):`);
  for (const s of r.statements!.top) console.log(`  ${(s.ms / r.requests).toFixed(3)} ms, ${(s.calls / r.requests).toFixed(2)}×: ${s.query}`);
}
rmSync(work, { recursive: true, force: true });
process.exit(0);
