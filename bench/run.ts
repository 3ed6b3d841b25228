// HTTP figures with wrk, side by side with a bare Bun.serve answering a fixed
// 600-byte JSON (the practical ceiling of this machine in the same run).
//   bun run build && bun bench/run.ts [--notes 100000] [--duration 4] [--rounds 5] [--connections 50] [--data DIR]
// The ceiling and the keyed GET run in alternating rounds of --duration
// seconds, and each round's ratio is kept: this host's speed swings by a
// third within a minute, so two back-to-back 10 s runs compared what the
// neighbours were doing as much as what the servers do. Search latency runs
// the same number of rounds; the table shows medians, the notes the spread.
// Each read scenario is warmed up for 2 s first, uncounted.
// --data reuses a directory made by bench/seed.ts (e.g. 1M notes) instead of seeding;
// the write scenarios run on a copy of it, so it stays as seeded.
// Needs wrk (Debian: apt-get install wrk).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EVAL_DIR } from "./quality/collection.ts";
import { benchArgs, getNoteLua, keyListLua, parseWrk, searchLua, startServer, webmastersPostsLua, wrkArgv, type Figures } from "./wrk.ts";
import { copyDatabase, openCorpus } from "./data-files.ts";

const args = benchArgs();
const notes = Number(args.notes ?? 100_000);
const duration = Number(args.duration ?? 4);
const rounds = Number(args.rounds ?? 5);
const connections = Number(args.connections ?? 50);
const root = join(import.meta.dir, "..");
const binary = join(root, "dist/cairn");
if (!existsSync(binary)) throw new Error("build first: bun run build");

const work = mkdtempSync(join(tmpdir(), "cairn-bench-"));
const dataDir = args.data ?? join(work, "data");
if (!args.data) {
  const seed = Bun.spawnSync(
    [process.execPath, join(root, "bench/seed.ts"), "--dir", dataDir, "--notes", String(notes), "--contributors", "5000"],
    { stdout: "inherit", stderr: "inherit" },
  );
  if (seed.exitCode !== 0) throw new Error("seeding failed");
}
const { noteCount, postings } = (() => {
  const db = openCorpus(dataDir);
  const n = (db.query("SELECT count(*) AS n FROM posts").get() as { n: number }).n;
  const p = (db.query("SELECT coalesce(sum(notes), 0) AS p FROM search_terms").get() as { p: number }).p;
  db.close();
  return { noteCount: n, postings: p };
})();
const { keys, ids, queries } = JSON.parse(readFileSync(join(dataDir, "keys.json"), "utf8")) as { keys: string[]; ids: string[]; queries?: string[] };

const payload = JSON.stringify({ id: "0".repeat(36), title: "x".repeat(100), body: "y".repeat(400), tags: ["a"], n: 1 }).slice(0, 600);
const baseline = Bun.spawn([process.execPath, "-e", `Bun.serve({ port: 18700, hostname: "127.0.0.1", fetch: () => new Response(${JSON.stringify(payload)}, { headers: { "content-type": "application/json" } }) }); console.log("up")`], { stdout: "pipe" });

const startCairn = (port: number, extraEnv: Record<string, string> = {}, dir = dataDir) => startServer(binary, port, dir, extraEnv);
const { proc: server, startupMs } = await startCairn(18701);
const serverReadyAt = performance.now();
// A server builds its in-memory search postings in the background once it is
// ready (docs/design.md, "Search"); search and writes are measured after the
// build, waited for generously: 1.5 million postings a second plus 2 s
// (bench/search-latency.ts prints the measured build time).
async function untilPostingsBuilt(readyAt: number): Promise<void> {
  const builtAt = readyAt + (postings / 1_500_000) * 1000 + 2000;
  if (performance.now() < builtAt) await Bun.sleep(builtAt - performance.now());
}
await Bun.sleep(300);
function wrk(url: string, script?: string, c = connections, seconds = duration): Figures {
  return parseWrk(Bun.spawnSync(wrkArgv(work, url, script, c, seconds)).stdout.toString());
}
const keyList = keyListLua(keys, 2);
// The 50 search queries bench/seed.ts drew from its material (keys.json.queries);
// a directory seeded by an older seeder has none: then this fixed list.
const FALLBACK_QUERIES = ["sqlite deadlock", "wal checkpoint", "memory leak", "rust borrow checker", "tokio runtime panic", "git rebase conflict",
  "postgres replication slot", "kubernetes pod", "tls certificate proxy", "connection pooler", "typescript bundler", "vacuum bloat",
  "systemd unit", "file descriptor", "epoll", "cgroup namespace", "async await", "heap profile", "retry backoff timeout", "index btree",
  "query planner", "foreign key constraint", "transaction isolation", "snapshot", "pip wheel", "webpack module", "cherry pick", "ssh agent",
  "logical slot", "partition sharding", "journal", "socket activation", "ulimit", "io_uring", "container image registry", "cache eviction",
  "flamegraph latency", "throughput", "migration schema", "column", "error handling result", "option unwrap", "virtualenv", "dependency resolver",
  "esbuild", "stash worktree", "submodule signing", "gpg", "pgbouncer", "kernel"];
const QUERIES = queries && queries.length > 0 ? queries : FALLBACK_QUERIES;

const results: [string, Figures, string][] = [];
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const medianFigures = (runs: Figures[]): Figures => ({
  rps: median(runs.map((f) => f.rps)),
  p50: median(runs.map((f) => f.p50)),
  p99: median(runs.map((f) => f.p99)),
  non2xx: runs.reduce((total, f) => total + f.non2xx, 0),
});
const spread = (values: number[], digits = 0, unit = "") => values.map((v) => v.toFixed(digits) + unit).join(" ");

const getScript = getNoteLua(keyList, ids);
// A 2-second warm-up of each read scenario first (JIT, caches), not counted.
const WARM_UP_SECONDS = 2;
wrk("http://127.0.0.1:18700/", undefined, connections, WARM_UP_SECONDS);
wrk("http://127.0.0.1:18701/", getScript, connections, WARM_UP_SECONDS);
const ceilingRuns: Figures[] = [];
const getRuns: Figures[] = [];
for (let round = 0; round < rounds; round++) {
  ceilingRuns.push(wrk("http://127.0.0.1:18700/"));
  getRuns.push(wrk("http://127.0.0.1:18701/", getScript));
}
const ratios = getRuns.map((f, i) => (100 * f.rps) / ceilingRuns[i].rps);
results.push(["bare Bun.serve 600-byte JSON (ceiling)", medianFigures(ceilingRuns), `rounds: ${spread(ceilingRuns.map((f) => f.rps))} req/s`]);
results.push([
  "GET /v1/posts/{id} (valid key)",
  medianFigures(getRuns),
  `${median(ratios).toFixed(0)}% of ceiling (median of rounds: ${spread(ratios, 0, "%")}); p99 by round ${spread(getRuns.map((f) => f.p99), 2)} ms`,
]);

await untilPostingsBuilt(serverReadyAt);
const searchScript = searchLua(keyList, QUERIES);
const querySet = `${QUERIES.length} queries${QUERIES === queries ? " from keys.json" : ""}`;
// Latency of one search at a time (the targets are per-query latencies), then throughput.
wrk("http://127.0.0.1:18701/", searchScript, 1, WARM_UP_SECONDS);
const searchRuns = Array.from({ length: rounds }, () => wrk("http://127.0.0.1:18701/", searchScript, 1));
results.push([
  `POST /v1/search, 1 connection (${querySet})`,
  medianFigures(searchRuns),
  `latency; by round p50 ${spread(searchRuns.map((f) => f.p50), 2)} ms, p99 ${spread(searchRuns.map((f) => f.p99), 2)} ms`,
]);
results.push([`POST /v1/search, ${connections} connections`, wrk("http://127.0.0.1:18701/", searchScript), "throughput"]);

const rss = Number(readFileSync(`/proc/${server.pid}/status`, "utf8").match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) / 1024;
server.kill("SIGTERM");
await server.exited;
const dbBytes = statSync(join(dataDir, "cairn.db")).size;

// Writes go to a copy, so the seeded directory stays as seeded for the next run.
const writeDir = join(work, "writes");
mkdirSync(writeDir, { mode: 0o700 });
copyDatabase(dataDir, writeDir);
// Writes run 10 s at least: long enough for checkpoints and index merges to show.
const writeSeconds = Math.max(10, duration);
const createScript = `${keyList}\nlocal n = 0\nrequest = function()\n n = n + 1\n return wrk.format("POST", "/v1/posts", {["Authorization"] = "Bearer " .. key(n), ["Content-Type"] = "application/json"}, '{"title":"bench note ' .. tid .. '-' .. n .. '","body":"a body of words about sqlite and wal mode, number ' .. n .. ' ' .. os.time() .. '","tags":["bench"]}')\nend`;
// Each write server is measured once its postings are built (as search is), and the
// same writes with the postings off (SEARCH_MEMORY_MB=0) on the same copy show what
// following the writes in memory costs.
// The estimate above can fall short on a loaded host, and the similar-note
// lookup on the database index costs far more than on the postings: a write
// server is measured once it logs that its postings are in memory.
const startWriter = async (port: number, extraEnv: Record<string, string>) => {
  if (extraEnv.SEARCH_MEMORY_MB === "0") return (await startCairn(port, extraEnv, writeDir)).proc;
  const proc = Bun.spawn([binary, "serve"], {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: writeDir, LOG_LEVEL: "info", POSTS_PER_HOUR: "0", SEARCHES_PER_HOUR: "0", VOTES_PER_HOUR: "0", COMMENTS_PER_HOUR: "0", ...extraEnv },
    stdout: "pipe",
    stderr: "inherit",
  });
  // One reader for the whole life of the server (it keeps draining, so the server never blocks or breaks on its pipe).
  let log = "";
  const decoder = new TextDecoder();
  const inMemory = new Promise<void>((resolve) => {
    void (async () => {
      for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
        if (log.length < 100_000) log += decoder.decode(chunk, { stream: true });
        if (/search postings are in memory|search stays on the database index/.test(log) || (/"listening"/.test(log) && !/database index for now/.test(log))) resolve();
      }
      resolve();
    })();
  });
  await inMemory;
  await Bun.sleep(300);
  return proc;
};
// Similar-note hints and the secret scan (both on by default) against the same
// writes with both off, in alternating rounds on the same copy: the issue-21
// target is "on" at >= 90% of "off" (docs/benchmarks.md).
const writeOn: Figures[] = [];
const writeOff: Figures[] = [];
for (let round = 0; round < 2; round++) {
  for (const [runs, env] of [[writeOn, {}], [writeOff, { SIMILAR_NOTES: "0", SECRET_SCAN: "0" }]] as [Figures[], Record<string, string>][]) {
    const writer = await startWriter(18702, env);
    runs.push(wrk("http://127.0.0.1:18702/", createScript, connections, writeSeconds));
    writer.kill("SIGTERM");
    await writer.exited;
  }
}
const onOff = writeOn.map((f, i) => (100 * f.rps) / writeOff[i].rps);
// The same comparison with notes of real length and wording: questions of the
// public webmasters collection (../shared/eval, when present), title and the
// first 600 characters of the body, each sent in turn; the bench notes above
// are the worst case for similar hints (every one a near-duplicate of all
// the others).
const webmastersCorpus = join(EVAL_DIR, "cqadupstack-webmasters/corpus.jsonl");
const realOn: Figures[] = [];
const realOff: Figures[] = [];
if (existsSync(webmastersCorpus)) {
  const corpus = readFileSync(webmastersCorpus, "utf8");
  // Every run writes to the same copy, so each is a pass of its own (webmastersPostsLua).
  let pass = 0;
  for (let round = 0; round < 2; round++) {
    for (const [runs, env] of [[realOn, {}], [realOff, { SIMILAR_NOTES: "0", SECRET_SCAN: "0" }]] as [Figures[], Record<string, string>][]) {
      const writer = await startWriter(18702, env);
      runs.push(wrk("http://127.0.0.1:18702/", webmastersPostsLua(keyList, corpus, pass++), connections, writeSeconds));
      writer.kill("SIGTERM");
      await writer.exited;
    }
  }
}
results.push(["POST /v1/posts (distinct contributors)", medianFigures(writeOn), `notes/s = req/s (201s); similar hints and secret scan on; rounds ${spread(writeOn.map((f) => f.rps))}`]);
results.push([
  "POST /v1/posts, SIMILAR_NOTES=0 SECRET_SCAN=0",
  medianFigures(writeOff),
  `rounds ${spread(writeOff.map((f) => f.rps))}; on/off by round ${spread(onOff, 0, "%")}`,
]);
if (realOn.length > 0) {
  const realRatio = realOn.map((f, i) => (100 * f.rps) / realOff[i].rps);
  results.push(["POST /v1/posts, webmasters questions (hints and scan on)", medianFigures(realOn), `rounds ${spread(realOn.map((f) => f.rps))}`]);
  results.push(["POST /v1/posts, webmasters questions, SIMILAR_NOTES=0 SECRET_SCAN=0", medianFigures(realOff), `rounds ${spread(realOff.map((f) => f.rps))}; on/off by round ${spread(realRatio, 0, "%")}`]);
}
// Hints off too: with the postings off, the similar-notes lookup takes the
// database index (a stored vector read per holder reached), and that, not
// following the writes, would be what this row measured.
const unindexedWriter = await startWriter(18704, { SEARCH_MEMORY_MB: "0", SIMILAR_NOTES: "0", SECRET_SCAN: "0" });
results.push([
  "POST /v1/posts, postings off (SEARCH_MEMORY_MB=0), SIMILAR_NOTES=0 SECRET_SCAN=0",
  wrk("http://127.0.0.1:18704/", createScript, connections, writeSeconds),
  "notes/s; the unhinted writes above without following them in memory",
]);
unindexedWriter.kill("SIGTERM");
await unindexedWriter.exited;

// The strictest durability: fsync on every commit.
const strict = await startWriter(18703, { DURABILITY: "full" });
results.push(["POST /v1/posts, DURABILITY=full", wrk("http://127.0.0.1:18703/", createScript, connections, writeSeconds), "fsync per commit"]);
strict.kill("SIGTERM");
await strict.exited;
baseline.kill();

console.log(`\nCairn HTTP bench: ${noteCount} notes, wrk -t2 -c${connections} -d${duration}s, ${rounds} rounds (medians), ${new Date().toISOString()}`);
console.log("| scenario | req/s | p50 ms | p99 ms | non-2xx | note |\n|---|---|---|---|---|---|");
for (const [name, f, note] of results) {
  console.log(`| ${name} | ${f.rps.toFixed(0)} | ${f.p50.toFixed(2)} | ${f.p99.toFixed(2)} | ${f.non2xx} | ${note} |`);
}
console.log(`\nstart-up to ready: ${startupMs.toFixed(0)} ms; server RSS after the read scenarios: ${rss.toFixed(0)} MB; database file: ${(dbBytes / 1e6).toFixed(0)} MB`);
rmSync(work, { recursive: true, force: true });
