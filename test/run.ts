// `bun run test`: `bun test` with the given arguments, then a check that no
// PostgreSQL cluster started by this run's suites is still running
// (test/helpers/leftover-postgres.ts). The run's id (CAIRN_PG_RUN) names the
// clusters' directories, so only this run's are looked for. Exits with bun
// test's status, or 1 when a cluster outlived the run.
import { leftoverClusters } from "./helpers/leftover-postgres.ts";

const run = `${process.pid}`;
const tests = Bun.spawn([process.execPath, "test", ...process.argv.slice(2)], {
  stdio: ["inherit", "inherit", "inherit"],
  env: { ...process.env, CAIRN_PG_RUN: run },
});
// Ctrl-C reaches bun test too (same process group): wait for it, then check.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => {});
const status = await tests.exited;
const left = await leftoverClusters(run);
if (left.length > 0) {
  console.error(`\n${left.length} process(es) of the tests' PostgreSQL outlived the run (now stopped):`);
  for (const { pid, args } of left) console.error(`  ${pid} ${args}`);
  process.exit(1);
}
process.exit(status);
