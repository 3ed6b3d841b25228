// `cairn admin copy` into PostgreSQL: the time it takes, the copying process's
// peak memory, and the disk the copy takes on PostgreSQL (per table, after the
// copy's VACUUM) beside the SQLite file of the same notes (per table, dbstat).
//   bun run build && bun bench/copy.ts --from /tmp/s100k [--variants with,without] [--batch 5000]
// --from: a seeded data dir (bench/seed.ts); it is copied to a temp dir first
// (the copy opens its source through the engine, which may write beside it).
// Variants: "with" runs the built binary (today's copy, which also writes the
// engine's per-term search tables: src/store/copy-search-tables.ts);
// "without" runs the same copy in a child process with those tables left
// out, which is what the copy writes once the PostgreSQL engine indexes
// notes in memory (issue 20). After that merge, only "with" remains
// meaningful (and it no longer writes them).
// PostgreSQL is the tests' throwaway cluster (test/helpers/postgres.ts:
// Debian's package, fsync off, same host). Figures: docs/benchmarks.md.
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { copySqliteToPostgres } from "../src/store/copy.ts";
import { cluster, freshDatabase } from "../test/helpers/postgres.ts";
import { benchArgs } from "./wrk.ts";

const args = benchArgs();

if (args.child) {
  // The "without" variant, in its own process so its peak memory is its own.
  const report = await copySqliteToPostgres(args.dir, args.url, {
    searchTables: false,
    pageRows: args.batch ? Number(args.batch) : undefined,
    onProgress: (p) => {
      if (p.finished) console.error(`copy: ${p.step} done: ${p.rows} rows in ${(p.stepMs / 1000).toFixed(1)} s; ${(p.elapsedMs / 1000).toFixed(1)} s`);
    },
  });
  console.log(JSON.stringify({ ms: report.ms, tables: report.tables }));
  process.exit(0);
}

if (!args.from) throw new Error("give --from DIR (a data dir seeded by bench/seed.ts)");
const variants = (args.variants ?? "with,without").split(",");
const root = join(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "cairn-copy-bench-"));
const dataDir = join(work, "data");
if (Bun.spawnSync(["cp", "-r", args.from, dataDir]).exitCode !== 0) throw new Error(`cannot copy ${args.from}`);

const mb = (bytes: number) => (bytes / 1e6).toFixed(0);

/** Peak resident memory of a running process, polled (VmHWM, kB) until it exits. */
async function peakRss(pid: number, exited: Promise<unknown>): Promise<number> {
  let peak = 0;
  let done = false;
  void exited.then(() => (done = true));
  while (!done) {
    try {
      const hwm = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmHWM:\s+(\d+) kB/);
      if (hwm) peak = Math.max(peak, Number(hwm[1]) * 1024);
    } catch {}
    await Bun.sleep(100);
  }
  return peak;
}

/** Bytes per table (indexes and TOAST with it) and of the whole database, after the copy's VACUUM (ANALYZE). */
async function postgresSizes(url: string) {
  const sql = new Bun.SQL(url, { max: 1 });
  try {
    const tables = (await sql`
      SELECT c.relname AS name, pg_table_size(c.oid)::float8 AS heap, pg_indexes_size(c.oid)::float8 AS indexes, pg_total_relation_size(c.oid)::float8 AS total
        FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace ORDER BY 4 DESC`) as { name: string; heap: number; indexes: number; total: number }[];
    const [{ bytes }] = (await sql`SELECT pg_database_size(current_database())::float8 AS bytes`) as { bytes: number }[];
    return { tables, database: bytes };
  } finally {
    await sql.close();
  }
}

/** Bytes per table of the SQLite file (its indexes counted with it; FTS5's shadow tables as one), from dbstat. */
function sqliteSizes(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    const owner = new Map((db.query("SELECT name, tbl_name FROM sqlite_master").all() as { name: string; tbl_name: string }[]).map((r) => [r.name, r.tbl_name]));
    const sizes = new Map<string, number>();
    for (const { name, bytes } of db.query("SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name").all() as { name: string; bytes: number }[]) {
      let table = owner.get(name) ?? name;
      if (table.startsWith("search_fts")) table = "search_fts (FTS5)";
      sizes.set(table, (sizes.get(table) ?? 0) + bytes);
    }
    return [...sizes].sort((a, b) => b[1] - a[1]);
  } finally {
    db.close();
  }
}

const sqliteFile = join(dataDir, "cairn.db");
const counts = (() => {
  const db = new Database(sqliteFile, { readonly: true });
  const n = (table: string) => (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  const out = { notes: n("posts"), comments: n("comments"), votes: n("votes"), contributors: n("contributors") };
  db.close();
  return out;
})();
const sqliteBytes = statSync(sqliteFile).size;
const sqliteTables = sqliteSizes(sqliteFile);
const SEARCH = /^search_/;
const sqliteWithoutSearch = sqliteTables.filter(([name]) => !SEARCH.test(name)).reduce((sum, [, b]) => sum + b, 0);

const results: { variant: string; seconds: number; peak: number; sizes: Awaited<ReturnType<typeof postgresSizes>>; stderr: string }[] = [];
for (const variant of variants) {
  const url = await freshDatabase(`copy_${variant}`);
  const batch = args.batch ? ["--batch", args.batch] : [];
  const argv =
    variant === "with"
      ? [join(root, "dist/cairn"), "admin", "copy", "--to", url, ...batch]
      : [process.execPath, import.meta.path, "--child", "1", "--dir", dataDir, "--url", url, ...batch];
  const started = performance.now();
  const proc = Bun.spawn(argv, { env: { ...process.env, DATA_DIR: dataDir }, stdout: "pipe", stderr: "pipe" });
  const [peak, stdout, stderr, code] = await Promise.all([peakRss(proc.pid, proc.exited), new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`${variant}: copy failed (${code}): ${stderr}`);
  process.stderr.write(stderr);
  results.push({ variant, seconds, peak, sizes: await postgresSizes(url), stderr });
  const admin = new Bun.SQL((await cluster()).adminUrl, { max: 1 });
  await admin.unsafe(`DROP DATABASE ${new URL(url).pathname.slice(1)}`); // room for the next variant
  await admin.close();
}

console.log(
  `\ncairn admin copy: ${counts.notes} notes, ${counts.comments} comments, ${counts.votes} votes, ${counts.contributors} contributors; ` +
    `${new Date().toISOString()}, load ${readFileSync("/proc/loadavg", "utf8").trim()}`,
);
console.log(`SQLite file: ${mb(sqliteBytes)} MB (without its search tables: ${mb(sqliteWithoutSearch)} MB)`);
console.log(`SQLite per table (MB): ${sqliteTables.map(([name, b]) => `${name} ${mb(b)}`).join(", ")}`);
for (const r of results) {
  const search = r.sizes.tables.filter((t) => SEARCH.test(t.name)).reduce((sum, t) => sum + t.total, 0);
  console.log(
    `\n${r.variant} the per-term search tables: ${r.seconds.toFixed(1)} s (${Math.round(counts.notes / r.seconds)} notes/s), peak RSS ${mb(r.peak)} MB; ` +
      `PostgreSQL database ${mb(r.sizes.database)} MB = ${(r.sizes.database / sqliteBytes).toFixed(2)}× the SQLite file` +
      (search > 0 ? `; without its search tables ${mb(r.sizes.database - search)} MB = ${((r.sizes.database - search) / sqliteBytes).toFixed(2)}×` : ""),
  );
  console.log("| table | heap+TOAST MB | indexes MB | total MB |\n|---|---|---|---|");
  for (const t of r.sizes.tables.filter((t) => t.total >= 1e5)) console.log(`| ${t.name} | ${mb(t.heap)} | ${mb(t.indexes)} | ${mb(t.total)} |`);
  const steps = r.stderr.split("\n").filter((line) => / done/.test(line));
  console.log(steps.map((line) => `  ${line}`).join("\n"));
}
rmSync(work, { recursive: true, force: true });
process.exit(0);
