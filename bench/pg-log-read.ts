// One replica's read of the PostgreSQL search log (PostgresSearchLog.changesSince)
// as a follower makes it: a log of --notes rows, --new of them committed since
// the reader's snapshot (another replica's writes, so their vectors come
// back), the read timed in process over --reads reads, and PostgreSQL's own
// time for it from pg_stat_statements (execution + planning, per read).
//   bun bench/pg-log-read.ts [--notes 20000] [--new 300] [--reads 20]
// The PostgreSQL is the tests' throwaway cluster (test/helpers/postgres.ts). Figures: docs/benchmarks.md.
import { PostgresSearchLog } from "../src/store/postgres/search-log.ts";
import { PostgresStore } from "../src/store/postgres/store.ts";
import { freshDatabase } from "../test/helpers/postgres.ts";
import { benchArgs } from "./wrk.ts";

process.env.CAIRN_TEST_PG_SETTINGS = "shared_preload_libraries=pg_stat_statements";
const args = benchArgs();
const notes = Number(args.notes ?? 20_000);
const fresh = Number(args.new ?? 300);
const reads = Number(args.reads ?? 20);

const url = await freshDatabase("log_read");
const store = new PostgresStore({ url, poolSize: 4 });
await store.migrate();
const sql = new Bun.SQL(url, { max: 4 });
await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
await sql`INSERT INTO contributors (email, key_prefix, key_digest, created_at) VALUES ('bench@example.com', 'bench', '\\x00'::bytea, 0)`;
const [{ contributor_no: author }] = (await sql`SELECT contributor_no FROM contributors LIMIT 1`) as { contributor_no: number }[];
const vector = "3,1,9 bench:0,1,0 bodi:1 word:1 about:1 replica:1 postgr:1 number:1 123:1 456:1 cpu:1,0,0 title:1,0,0";

/** n notes with their vectors and log rows, 100 to a transaction. */
async function write(n: number): Promise<void> {
  for (let i = 0; i < n; i += 100) {
    await sql.begin(async (tx) => {
      const rows = (await tx`
        INSERT INTO posts (id, contributor_no, title, body, created_at)
        SELECT gen_random_uuid()::text, ${author}, 't', 'b', 0 FROM generate_series(1, ${Math.min(100, n - i)}) RETURNING pk`) as { pk: string }[];
      const pks = `{${rows.map((row) => row.pk).join(",")}}`;
      await tx`INSERT INTO search_vectors (pk, vector) SELECT pk, ${vector} FROM unnest(${pks}::bigint[]) pk`;
      await tx`INSERT INTO search_log (pk) SELECT unnest(${pks}::bigint[])`;
    });
  }
}

await write(notes);
await sql`ANALYZE`;
const log = new PostgresSearchLog(sql);
const [{ snap }] = (await sql`SELECT pg_current_snapshot()::text AS snap`) as { snap: string }[];
await write(fresh);
for (let i = 0; i < 5; i++) await log.changesSince(snap, new Map()); // past PostgreSQL's custom plans, as a long-running replica
await sql`SELECT pg_stat_statements_reset()`;
const before = process.cpuUsage();
const started = performance.now();
let changes = 0;
for (let i = 0; i < reads; i++) changes = (await log.changesSince(snap, new Map()))?.changes.length ?? -1;
const wallMs = (performance.now() - started) / reads;
const cpu = process.cpuUsage(before);
const [server] = (await sql`
  SELECT sum(calls)::float8 AS calls, sum(total_exec_time + total_plan_time)::float8 AS ms FROM pg_stat_statements
   WHERE query LIKE '%pg_visible_in_snapshot%'`) as { calls: number; ms: number }[];
console.log(
  `log read of ${changes} new rows in a log of ${notes + fresh}: ${wallMs.toFixed(2)} ms wall, ` +
    `${((cpu.user + cpu.system) / 1000 / reads).toFixed(2)} ms CPU in process, ` +
    `PostgreSQL ${(server.ms / Math.max(1, server.calls)).toFixed(2)} ms a read (pg_stat_statements, ${server.calls} calls)`,
);
await sql.close();
await store.close();
process.exit(0);
