// Loads the head-heavy corpus (bench/headheavy.ts) through POST /v1/posts of
// the built server, as agents would write it:
//   bun run build && bun bench/load-http.ts --dir /tmp/h100k --notes 100000 [--connections 16]
// The directory gets its contributors and keys.json (with the corpus's
// queries) from bench/seed.ts --notes 0 --head first; then the server runs on
// it and the notes are posted `--connections` at a time, round-robin over the
// contributors. Prints the rate (the loader shares the machine: wrk figures in
// bench/run.ts are the write rate of record).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { headNote } from "./headheavy.ts";
import { DEFAULT_SEED } from "./seed.ts";
import { benchArgs, startServer } from "./wrk.ts";

const args = benchArgs();
const dir = args.dir ?? "/tmp/h100k";
const notes = Number(args.notes ?? 100_000);
const connections = Number(args.connections ?? 16);
const seed = args.seed ?? DEFAULT_SEED;
const port = Number(args.port ?? 18710);
const root = join(import.meta.dir, "..");
const binary = join(root, "dist/cairn");
if (!existsSync(binary)) throw new Error("build first: bun run build");

if (!existsSync(join(dir, "keys.json"))) {
  const seeded = Bun.spawnSync([process.execPath, join(root, "bench/seed.ts"), "--dir", dir, "--notes", "0", "--head", "--contributors", "2000", "--seed", seed], {
    stdout: "inherit",
    stderr: "inherit",
  });
  if (seeded.exitCode !== 0) throw new Error("seeding the contributors failed");
}
const { keys } = JSON.parse(readFileSync(join(dir, "keys.json"), "utf8")) as { keys: string[] };
const { proc } = await startServer(binary, port, dir);
const started = performance.now();
let next = 0;
let failed = 0;
let lastReport = started;
async function worker(): Promise<void> {
  for (;;) {
    const i = next++;
    if (i >= notes) return;
    const note = headNote(seed, i);
    const response = await fetch(`http://127.0.0.1:${port}/v1/posts`, {
      method: "POST",
      headers: { authorization: `Bearer ${keys[i % keys.length]}`, "content-type": "application/json" },
      body: JSON.stringify(note),
    });
    if (response.status !== 201) {
      failed++;
      if (failed <= 5) console.error(`note ${i}: ${response.status} ${await response.text()}`);
    } else await response.arrayBuffer();
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      console.error(`  ${i} notes, ${Math.round(i / ((lastReport - started) / 1000))} notes/s so far`);
    }
  }
}
await Promise.all(Array.from({ length: connections }, worker));
const seconds = (performance.now() - started) / 1000;
proc.kill("SIGTERM");
await proc.exited;
console.log(`posted ${notes} head-heavy notes through POST /v1/posts in ${seconds.toFixed(1)} s (${Math.round(notes / seconds)} notes/s, ${connections} connections, ${failed} failed) → ${dir}`);
