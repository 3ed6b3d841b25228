// What the similar-notes lookup and the secret scan cost a note creation, in
// CPU time per note, in process (no HTTP, no load tool: the figure the
// machine's noise disturbs least):
//   bun bench/hint-cost.ts [--from /tmp/wt20-seed-100k] [--notes bench|webmasters] [--variant both|hints|scan] [--rounds 3] [--seconds 4]
// On a copy of a seeded directory (bench/seed.ts), with the postings in
// memory, 16 concurrent writers create notes through Cairn.createNote for
// --seconds with the variant on, then as long with both off, --rounds times
// in turn; each round prints CPU µs per note (process.cpuUsage, all threads)
// and what the variant leaves of the rate (off / on). Notes: the bench notes
// of bench/run.ts (every one a near-duplicate of the others, the worst case
// for hints) or webmasters questions (title + 600 body characters).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config.ts";
import { Cairn } from "../src/core/service.ts";
import { SqliteStore } from "../src/store/sqlite/store.ts";
import { EVAL_DIR } from "./quality/collection.ts";
import { benchArgs } from "./wrk.ts";
import { copyDatabase } from "./data-files.ts";

const args = benchArgs();
const from = args.from ?? "/tmp/wt20-seed-100k";
const kind = args.notes ?? "bench";
const variant = args.variant ?? "both";
const rounds = Number(args.rounds ?? 3);
const seconds = Number(args.seconds ?? 4);
const dir = mkdtempSync(join(tmpdir(), "cairn-hint-cost-"));
copyDatabase(from, dir);
const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: 2 ** 31 });
await store.migrate();
await store.searchMemoryBuilt();
const authors: number[] = [];
for (let i = 0; i < 64; i++) {
  authors.push((await store.createContributor({ email: `hint-cost-${i}@example.org`, keyPrefix: `cairn_hc${i}`, keyDigest: new Uint8Array(32), createdAt: 0 })).contributorNo);
}
const off = { POSTS_PER_HOUR: "0", SIMILAR_NOTES: "0", SECRET_SCAN: "0" };
const on = { POSTS_PER_HOUR: "0", ...(variant === "hints" ? { SECRET_SCAN: "0" } : variant === "scan" ? { SIMILAR_NOTES: "0" } : {}) };
const cairnOn = new Cairn(store, loadConfig(on));
const cairnOff = new Cairn(store, loadConfig(off));
const questions =
  kind === "bench"
    ? []
    : readFileSync(join(EVAL_DIR, "cqadupstack-webmasters/corpus.jsonl"), "utf8").split("\n").filter(Boolean).slice(0, 2000).map((line) => JSON.parse(line) as { title: string; body: string });
const note = (i: number) =>
  kind === "bench"
    ? { title: `bench note ${i % 4}-${i}`, body: `a body of words about sqlite and wal mode, number ${i} ${Math.floor(Date.now() / 1000)}`, tags: ["bench"] }
    : { title: `${(questions[i % questions.length].title || "untitled").slice(0, 190)} ${i}`, body: questions[i % questions.length].body.slice(0, 600) || "empty", tags: ["webmasters"] };

let next = 0;
/** CPU µs per note while 16 writers create notes for `ms`. */
async function cpuPerNote(cairn: Cairn, ms: number): Promise<number> {
  const first = next;
  const end = performance.now() + ms;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: 16 }, async (_, writer) => {
      while (performance.now() < end) {
        const i = next++;
        await cairn.createNote(authors[(i * 7 + writer) % authors.length], note(i));
      }
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / (next - first);
}

await cpuPerNote(cairnOff, 2000); // warm-up, uncounted
const lines: string[] = [];
for (let round = 0; round < rounds; round++) {
  const withIt = await cpuPerNote(cairnOn, seconds * 1000);
  const without = await cpuPerNote(cairnOff, seconds * 1000);
  lines.push(`${withIt.toFixed(0)} / ${without.toFixed(0)} µs (${((100 * without) / withIt).toFixed(0)}% of the rate)`);
}
console.log(`${kind} notes, ${variant} on / both off, CPU per note by round: ${lines.join("; ")}; load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
await store.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
