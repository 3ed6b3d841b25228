// After `bun test` (test/run.ts): is a PostgreSQL cluster the run started
// (test/helpers/postgres.ts, directories `cairn-pg-<run>-…`) still running?
// The watchdog stops a cluster within a second of its test process ending, so
// this waits a few seconds first; survivors are stopped and reported.
// Clusters of other runs (other worktrees, other users) are not touched.
import { readdirSync, readFileSync } from "node:fs";
import { clusterDirPrefix } from "./postgres.ts";

/** Running processes whose command line names one of this run's cluster directories. */
function survivors(marker: string): { pid: number; args: string }[] {
  const found: { pid: number; args: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ");
      if (args.includes(marker) && !args.includes("cairn-pg-watchdog")) found.push({ pid: Number(entry), args: args.trim() });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The postmasters of this run's clusters running now. */
export const runningClusters = (run: string) => survivors(`/${clusterDirPrefix(run)}`);

/** This run's cluster processes still running after a grace period (each sent SIGQUIT); empty when none outlived it. */
export async function leftoverClusters(run: string, graceMs = 5_000): Promise<{ pid: number; args: string }[]> {
  const marker = `/${clusterDirPrefix(run)}`;
  const deadline = Date.now() + graceMs;
  let left = survivors(marker);
  while (left.length > 0 && Date.now() < deadline) {
    await Bun.sleep(200);
    left = survivors(marker);
  }
  for (const { pid } of left) {
    try {
      process.kill(pid, "SIGQUIT");
    } catch {
      // already gone
    }
  }
  return left;
}
