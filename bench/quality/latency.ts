// Times Cairn's search path (searchPlan + SqliteStore.search, what POST /v1/search
// runs minus HTTP) on an existing data directory, with the 50 queries of bench/run.ts.
//   bun bench/seed.ts --dir /tmp/q100k --notes 100000
//   bun bench/quality/latency.ts --dir /tmp/q100k [--rounds 20] [--runs 5]
// Prints p50/p99 per run and the median of the runs (the machine is shared and noisy).
import { searchPlan } from "../../src/core/search.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";

const args = Object.fromEntries(
  process.argv.slice(2).reduce<[string, string][]>((pairs, arg, i, all) => {
    if (arg.startsWith("--")) pairs.push([arg.slice(2), all[i + 1]]);
    return pairs;
  }, []),
);
const dir = args.dir ?? "/tmp/q100k";
const rounds = Number(args.rounds ?? 20);
const runs = Number(args.runs ?? 5);

/** The fixed 50 queries of bench/run.ts (POST /v1/search load). */
export const BENCH_QUERIES = ["sqlite deadlock", "wal checkpoint", "memory leak", "rust borrow checker", "tokio runtime panic", "git rebase conflict",
  "postgres replication slot", "kubernetes pod", "tls certificate proxy", "connection pooler", "typescript bundler", "vacuum bloat",
  "systemd unit", "file descriptor", "epoll", "cgroup namespace", "async await", "heap profile", "retry backoff timeout", "index btree",
  "query planner", "foreign key constraint", "transaction isolation", "snapshot", "pip wheel", "webpack module", "cherry pick", "ssh agent",
  "logical slot", "partition sharding", "journal", "socket activation", "ulimit", "io_uring", "container image registry", "cache eviction",
  "flamegraph latency", "throughput", "migration schema", "column", "error handling result", "option unwrap", "virtualenv", "dependency resolver",
  "esbuild", "stash worktree", "submodule signing", "gpg", "pgbouncer", "kernel"];

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

if (import.meta.main) {
  const store = new SqliteStore({ dataDir: dir });
  const queries = (args.queries ? (JSON.parse(await Bun.file(args.queries).text()) as { query: string }[]).map((q) => q.query) : BENCH_QUERIES);
  for (const q of queries) await store.search(searchPlan(q, 10)); // warm the page cache and statements
  const p50s: number[] = [];
  const p99s: number[] = [];
  const cpu50s: number[] = [];
  const cpu99s: number[] = [];
  for (let run = 0; run < runs; run++) {
    const times: number[] = [];
    // CPU time of this process per search: steadier than wall time when other jobs share the cores.
    const cpu: number[] = [];
    for (let r = 0; r < rounds; r++) {
      for (const q of queries) {
        const c = process.cpuUsage();
        const t = performance.now();
        const plan = searchPlan(q, 10);
        if (plan.expressions.length > 0) await store.search(plan);
        times.push(performance.now() - t);
        const used = process.cpuUsage(c);
        cpu.push((used.user + used.system) / 1000);
      }
    }
    times.sort((a, b) => a - b);
    cpu.sort((a, b) => a - b);
    p50s.push(percentile(times, 50));
    p99s.push(percentile(times, 99));
    cpu50s.push(percentile(cpu, 50));
    cpu99s.push(percentile(cpu, 99));
    console.log(
      `run ${run + 1}: ${times.length} searches, p50 ${percentile(times, 50).toFixed(3)} ms, p99 ${percentile(times, 99).toFixed(3)} ms, ` +
        `max ${times[times.length - 1].toFixed(2)} ms; CPU p50 ${percentile(cpu, 50).toFixed(3)} ms, p99 ${percentile(cpu, 99).toFixed(3)} ms`,
    );
  }
  console.log(
    `median of ${runs} runs: p50 ${median(p50s).toFixed(3)} ms, p99 ${median(p99s).toFixed(3)} ms; ` +
      `CPU p50 ${median(cpu50s).toFixed(3)} ms, p99 ${median(cpu99s).toFixed(3)} ms (${queries.length} queries × ${rounds} rounds per run, ${dir})`,
  );
  await store.close();
}
