// The soak of bench/soak.ts, shortened for CI: 20 s of the mixed workload
// (70% reads, 15% searches, 10% votes and comments, 5% creates, 1,000
// contributors) against the compiled server. It must end with zero 5xx, zero
// unexpected answers, zero lost writes and flat memory (exit 0). The 5-minute
// run is `bun run soak` (see docs/reliability.md).
import { expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT } from "../helpers/server.ts";
import { ensureBinary } from "./support.ts";

const SECONDS = Number(process.env.SOAK_SECONDS ?? 20);

test(
  `soak: ${SECONDS} s of mixed load, no errors, no lost writes, flat memory`,
  async () => {
    ensureBinary();
    // 20 s is not long enough for the heap to settle (the middle third is still
    // warm-up on a slow shared machine: +14-19 MB seen with no leak), nor for
    // SQLite's 32 MB page cache to fill, which it does faster since issue 13's
    // search doubled the request rate (+25-35 MB seen, docs/reliability.md). On
    // a quiet host the run now does ~9,000-9,600 req/s and the growth from the
    // middle third to the last was 5-39 MB for this code and the code before it
    // alike, and 55 MB once (a CI run with no leak behind it: docs/reliability.md,
    // 2026-11-26). So this short run allows +64 MB, plus what the search postings
    // hold by design for the notes written (bench/soak.ts computes it): it still
    // catches a leak of ~600 bytes per request (~100,000 requests in the last
    // third's span). The 5-minute `bun run soak` keeps the 16 MB margin.
    const child = Bun.spawn([process.execPath, join(ROOT, "bench/soak.ts"), "--duration", String(SECONDS), "--memory-margin-mb", "64"], {
      cwd: ROOT,
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    const resultLine = out.split("\n").find((line) => line.startsWith("SOAK_RESULT "));
    // Print the figures (rate, latencies, memory over time) into the test log.
    console.log(out.split("\n").filter((line) => !line.startsWith("SOAK_RESULT ")).join("\n"));
    if (code !== 0 || !resultLine) throw new Error(`bench/soak.ts exited ${code}:\n${out}\n${err}`);
    const result = JSON.parse(resultLine.slice("SOAK_RESULT ".length));
    expect(result.problems).toEqual([]);
    expect(result.errors).toEqual({ http5xx: 0, unexpected: 0, network: 0, server_lines: 0 });
    expect(result.stats.contributors).toBe(1000);
    expect(result.stats.notes).toBe(500 + result.counts.creates);
    expect(result.stats.comments).toBe(result.counts.comments);
    // Every kind of request ran, in roughly the intended mix.
    const total = result.requests;
    expect(total).toBeGreaterThan(1000);
    expect(result.counts.reads / total).toBeGreaterThan(0.6);
    expect(result.counts.searches / total).toBeGreaterThan(0.1);
    for (const kind of ["votes", "comments", "creates"]) expect(result.counts[kind]).toBeGreaterThan(0);
  },
  (SECONDS + 120) * 1000,
);
