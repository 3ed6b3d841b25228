// The key read's statement with the note log riding along (src/store/postgres/note-log.ts):
// its plan and its cost with an empty log and with a log of NOTE_LOG_KEEP rows, in-process,
// against the key read alone. Figures: docs/benchmarks.md, "Issue 20: note views".
//   bun bench/pg-note-log.ts [--rows 10000] [--reads 5000]
import { SQL } from "bun";
import { PostgresStore } from "../src/store/postgres/store.ts";
import { textArray } from "../src/store/postgres/coalesced-reads.ts";
import { keysAndChanges } from "../src/store/postgres/note-log.ts";
import { freshDatabase } from "../test/helpers/postgres.ts";
import { benchArgs } from "./wrk.ts";

const args = benchArgs();
const logRows = Number(args.rows ?? 10_000);
const reads = Number(args.reads ?? 2_000);
const url = await freshDatabase("note_log");
const store = new PostgresStore({ url, poolSize: 2 });
await store.migrate();
const sql = new SQL(url, { max: 1 });
await sql`INSERT INTO contributors (email, key_prefix, key_digest, created_at) SELECT 'a' || i || '@x', 'cairn_' || lpad(i::text, 6, '0'), '\\x00', 0 FROM generate_series(1, 2000) i`;
await sql`ANALYZE`;
const prefixes = Array.from({ length: 32 }, (_, i) => `cairn_${String(i * 50 + 1).padStart(6, "0")}`);

/** The variants in turn, five rounds (a shared host is noisy); the least of each: µs a statement, wall (sequential) and this process's CPU. */
async function timed(variants: [string, () => Promise<unknown>][]) {
  const best = new Map(variants.map(([label]) => [label, { wall: Infinity, cpu: Infinity }]));
  for (const [, run] of variants) for (let i = 0; i < 200; i++) await run();
  for (let round = 0; round < 5; round++) {
    for (const [label, run] of variants) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < reads; i++) await run();
      const wall = ((performance.now() - started) * 1000) / reads;
      const used = process.cpuUsage(cpu);
      const b = best.get(label)!;
      b.wall = Math.min(b.wall, wall);
      b.cpu = Math.min(b.cpu, (used.user + used.system) / reads);
    }
  }
  for (const [label, b] of best) console.log(`${label}: ${b.wall.toFixed(1)} µs a statement (wall, sequential), this process ${b.cpu.toFixed(1)} µs CPU`);
}

const keysOnly = () => sql`SELECT key_prefix, contributor_no, key_digest, active FROM contributors WHERE key_prefix = ANY(${textArray(prefixes)}::text[])`;
const [{ snap }] = (await sql`SELECT pg_current_snapshot()::text AS snap`) as { snap: string }[];
const withLog = (from: string) => keysAndChanges(sql, prefixes, from);

await timed([
  ["key read alone", keysOnly],
  ["key read + note log, empty log", () => withLog(snap)],
]);
// A full log of older transactions (one row each, as votes write them), then a read from a place after them.
for (let i = 0; i < logRows; i += 500) await sql.begin(async (tx) => { for (let j = 0; j < 500; j++) await tx`INSERT INTO note_log (id) VALUES (${`note-${i + j}`})`; });
await sql`ANALYZE note_log`;
const [{ snap: after }] = (await sql`SELECT pg_current_snapshot()::text AS snap`) as { snap: string }[];
await timed([
  ["key read alone", keysOnly],
  [`key read + note log, ${logRows} older rows, nothing new`, () => withLog(after)],
]);
console.log((await sql.unsafe(`EXPLAIN ANALYZE SELECT array_agg(DISTINCT l.id), max(l.seq) FROM (SELECT '${after}'::pg_snapshot AS snapshot OFFSET 0) f, note_log l WHERE l.xid >= pg_snapshot_xmin(f.snapshot) AND NOT pg_visible_in_snapshot(l.xid, f.snapshot)`)).map((r: { "QUERY PLAN": string }) => r["QUERY PLAN"]).join("\n"));
await store.close();
await sql.close();
process.exit(0);
