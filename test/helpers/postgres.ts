// A throwaway PostgreSQL cluster for the tests: Debian's `postgresql` package,
// `initdb` in a temporary directory as a non-root user (postgres refuses to run
// as root), its own port and socket directory, stopped when the test process
// exits. One cluster per test process (started on first use); each suite asks
// for a fresh database in it (`freshDatabase`).
// `bun test` may end without running exit hooks (a crash, a kill, a hung
// worker), so a watchdog child stops the cluster and removes its directory
// once the test process is gone, however it ended. `bun run test` passes
// CAIRN_PG_RUN, which names the directories (`cairn-pg-<run>-…`), and then
// checks that no cluster of that run outlives it (test/helpers/leftover-postgres.ts).
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.ts";

export interface Cluster {
  /** postgres://… URL of the cluster's maintenance database (`postgres`). */
  adminUrl: string;
  port: number;
  dir: string;
  pid: number;
}

/** The newest installed PostgreSQL's bin directory, or null when none is installed. */
export function postgresBinDir(): string | null {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0], "bin") : null;
}

/** Engines the looped suites run on: SQLite always; PostgreSQL when installed (CI installs it). */
export function testEngines(): ("sqlite" | "postgres")[] {
  if (process.env.CAIRN_TEST_ENGINES) return process.env.CAIRN_TEST_ENGINES.split(",") as ("sqlite" | "postgres")[];
  return postgresBinDir() ? ["sqlite", "postgres"] : ["sqlite"];
}

/** As root, run as the `postgres` user (setpriv execs in place, so the pid is postgres's own). */
function asClusterUser(cmd: string[]): string[] {
  if (userInfo().uid !== 0) return cmd;
  return ["setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups", "--", ...cmd];
}

async function run(cmd: string[]): Promise<void> {
  const proc = Bun.spawn(asClusterUser(cmd), { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}:\n${out}\n${err}`);
}

/** More `-c name=value` settings from CAIRN_TEST_PG_SETTINGS (space-separated), e.g. pg_stat_statements for bench/cpu-per-request.ts. */
function extraSettings(): string[] {
  return (process.env.CAIRN_TEST_PG_SETTINGS ?? "").split(/\s+/).filter(Boolean).flatMap((setting) => ["-c", setting]);
}

/**
 * The locale of the tests' clusters unless CAIRN_TEST_PG_LOCALE names another:
 * a language's, as an operator's distribution makes it (docs/deploy.md:
 * `createdb` on that cluster), so that SQL which orders, compares or
 * lower-cases text in the database's collation fails the suites. Turkish:
 * its collation is a language's (case and punctuation second to letters,
 * "ç" after "c") and its lower('I') is dotless "ı". ICU, so no OS locale is
 * needed (PostgreSQL 15 or later; older ones get C). Only under `bun test`:
 * the benchmarks keep the C clusters their figures were measured on.
 */
export const TEST_PG_LOCALE = "icu:tr-TR";

/**
 * initdb's locale arguments: CAIRN_TEST_PG_LOCALE when set, a libc locale
 * ("en_US.UTF-8", "tr_TR.UTF-8": it must be in `locale -a`), an ICU one
 * ("icu:en-US"; LC_CTYPE C.UTF-8) or "C"; else TEST_PG_LOCALE under `bun test`
 * and C elsewhere. Every database the tests create inherits it.
 */
export function clusterLocaleArgs(bin: string, wanted = process.env.CAIRN_TEST_PG_LOCALE): string[] {
  if (wanted === undefined && process.env.NODE_ENV === "test" && Number(bin.split("/").at(-2)) >= 15) wanted = TEST_PG_LOCALE;
  if (!wanted || wanted === "C") return ["--locale=C"];
  if (wanted.startsWith("icu:")) return ["--locale=C.UTF-8", "--locale-provider=icu", `--icu-locale=${wanted.slice(4)}`];
  return [`--locale=${wanted}`];
}

/** Temporary directory prefix of a cluster: `cairn-pg-`, plus the run's id when `bun run test` gave one. */
export const clusterDirPrefix = (run?: string) => (run ? `cairn-pg-${run}-` : "cairn-pg-");

/**
 * Stops the cluster (immediate shutdown) and removes its directory once the
 * test process has gone, by any exit: a detached shell that polls the
 * parent, deaf to the terminal's Ctrl-C and hang-up so it outlives the run.
 */
const WATCHDOG = `
trap '' INT TERM HUP
parent=$1; pg=$2; dir=$3
while kill -0 "$parent" 2>/dev/null; do sleep 0.3; done
kill -QUIT "$pg" 2>/dev/null
i=0
while kill -0 "$pg" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -KILL "$pg" 2>/dev/null
rm -rf "$dir"
`;

function startWatchdog(postgresPid: number, dir: string): void {
  const watchdog = Bun.spawn(["sh", "-c", WATCHDOG, "cairn-pg-watchdog", String(process.pid), String(postgresPid), dir], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
    detached: true,
  });
  watchdog.unref();
}

let started: Promise<Cluster> | null = null;

/** The test process's cluster, started on first use. */
export function cluster(): Promise<Cluster> {
  return (started ??= startCluster());
}

async function startCluster(): Promise<Cluster> {
  const bin = postgresBinDir();
  if (!bin) throw new Error("PostgreSQL is not installed (apt-get install postgresql; .ci/run does it)");
  const dir = mkdtempSync(join(tmpdir(), clusterDirPrefix(process.env.CAIRN_PG_RUN)));
  if (userInfo().uid === 0) chownSync(dir, Number(Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString().trim()), Number(Bun.spawnSync(["id", "-g", "postgres"]).stdout.toString().trim()));
  const data = join(dir, "data");
  await run([join(bin, "initdb"), "-D", data, "-U", "cairn", "-A", "trust", "-E", "UTF8", ...clusterLocaleArgs(bin), "--no-sync"]);
  const port = await freePort();
  // fsync off: the tests kill Cairn, never PostgreSQL, so durability of the cluster itself is not under test.
  const proc = Bun.spawn(
    asClusterUser([
      join(bin, "postgres"), "-D", data, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1",
      "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=300", "-c", "shared_buffers=64MB",
      ...extraSettings(),
    ]),
    { stdout: "ignore", stderr: Bun.file(join(dir, "postgres.log")) },
  );
  proc.unref(); // the cluster must not keep the test process alive; "exit" below stops it
  startWatchdog(proc.pid, dir);
  const stop = () => {
    try {
      process.kill(proc.pid, "SIGQUIT"); // immediate shutdown
    } catch {
      // already gone
    }
    // The cluster exits within a moment of SIGQUIT; wait for it so the directory can go.
    for (let i = 0; i < 200 && existsSync(join(data, "postmaster.pid")); i++) Bun.sleepSync(10);
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", stop);
  const adminUrl = `postgres://cairn@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const sql = new Bun.SQL(adminUrl, { max: 1 });
      await sql`SELECT 1`;
      await sql.close();
      break;
    } catch (error) {
      if (proc.exitCode !== null || Date.now() > deadline) {
        const stderr = await Bun.file(join(dir, "postgres.log")).text().catch(() => "");
        throw new Error(`PostgreSQL did not start: ${(error as Error).message}\n${stderr}`);
      }
      await Bun.sleep(50);
    }
  }
  return { adminUrl, port, dir, pid: proc.pid };
}

let databases = 0;

/**
 * A new, empty database in the test process's cluster; returns its URL. Its
 * collation is the cluster's (clusterLocaleArgs: a language's under `bun
 * test`, C for the benchmarks); `icuLocale` (e.g. "en-US") makes
 * the database's default collation a language's, as `createdb` gives on a
 * cluster made under en_US.UTF-8 (docs/deploy.md).
 */
export async function freshDatabase(prefix = "cairn", options: { icuLocale?: string } = {}): Promise<string> {
  const c = await cluster();
  databases += 1;
  const name = `${prefix}_${process.pid}_${databases}`.replace(/[^a-z0-9_]/gi, "_").toLowerCase();
  const sql = new Bun.SQL(c.adminUrl, { max: 1 });
  try {
    const collation = options.icuLocale ? ` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '${options.icuLocale.replace(/[^A-Za-z0-9_-]/g, "")}'` : "";
    await sql.unsafe(`CREATE DATABASE ${name}${collation}`);
  } finally {
    await sql.close();
  }
  return `postgres://cairn@127.0.0.1:${c.port}/${name}`;
}
