// Issue 20, point 6: the tests' PostgreSQL never outlives its test process.
// A child process starts a cluster through test/helpers/postgres.ts and is
// then killed with SIGKILL (no exit hook runs, as when bun test crashes or
// is killed): the watchdog must stop the cluster and remove its directory.
// `bun run test` then checks that none of its run's clusters is left
// (test/run.ts, test/helpers/leftover-postgres.ts).
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { leftoverClusters, runningClusters } from "../helpers/leftover-postgres.ts";
import { postgresBinDir } from "../helpers/postgres.ts";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test.skipIf(!postgresBinDir())("a cluster whose test process is killed (SIGKILL, no exit hook) is stopped and removed by its watchdog", async () => {
  const run = `leak${process.pid}`;
  const child = Bun.spawn(
    [process.execPath, "-e", `const { cluster } = await import(${JSON.stringify(join(import.meta.dir, "../helpers/postgres.ts"))}); const c = await cluster(); console.log(JSON.stringify(c)); setInterval(() => {}, 1000);`],
    { stdout: "pipe", stderr: "inherit", env: { ...process.env, CAIRN_PG_RUN: run } },
  );
  const reader = child.stdout.getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  const started = JSON.parse(out) as { pid: number; dir: string };
  expect(alive(started.pid)).toBe(true);
  expect(started.dir).toContain(`cairn-pg-${run}-`);
  // What `bun run test` looks for afterwards finds it while it runs.
  expect(runningClusters(run).map((p) => p.pid)).toEqual([started.pid]);
  child.kill("SIGKILL");
  await child.exited;
  const deadline = Date.now() + 10_000;
  while ((alive(started.pid) || existsSync(started.dir)) && Date.now() < deadline) await Bun.sleep(100);
  expect(alive(started.pid)).toBe(false);
  expect(existsSync(started.dir)).toBe(false);
  expect(await leftoverClusters(run, 0)).toEqual([]);
}, 60_000);
