// What a PostgreSQL transaction costs through Bun's SQL client, in process:
// one statement, three in a row, three sent at once, BEGIN/statement/COMMIT
// sent at once, Bun's sql.begin() around one statement, and reserve+release.
// Why the engine's transactions use transaction() in
// src/store/postgres/connection.ts (docs/benchmarks.md, "Issue 20").
//   bun bench/pg-transaction.ts
import { freshDatabase } from "../test/helpers/postgres.ts";
const url = await freshDatabase("pipe");
const sql = new Bun.SQL(url, { max: 4 });
await sql`CREATE TABLE t (a int)`;
const N = 300;
const c = await sql.reserve();
let t = performance.now();
for (let i = 0; i < N; i++) await c`SELECT 1`;
const one = (performance.now() - t) / N;
t = performance.now();
for (let i = 0; i < N; i++) { await c`SELECT 1`; await c`SELECT 2`; await c`SELECT 3`; }
const seq3 = (performance.now() - t) / N;
t = performance.now();
for (let i = 0; i < N; i++) await Promise.all([c`SELECT 1`, c`SELECT 2`, c`SELECT 3`]);
const par3 = (performance.now() - t) / N;
t = performance.now();
for (let i = 0; i < N; i++) await Promise.all([c`BEGIN`, c`SELECT 2`, c`COMMIT`]);
const tx3 = (performance.now() - t) / N;
c.release();
t = performance.now();
for (let i = 0; i < N; i++) await sql.begin(async (tx) => { await tx`SELECT 1`; });
const begin1 = (performance.now() - t) / N;
t = performance.now();
for (let i = 0; i < N; i++) { const r = await sql.reserve(); r.release(); }
const reserve = (performance.now() - t) / N;
t = performance.now();
for (let i = 0; i < N; i++) { const r = await sql.reserve(); await r`BEGIN`; await r`SELECT 1`; await r`COMMIT`; r.release(); }
const manual = (performance.now() - t) / N;
t = performance.now();
for (let i = 0; i < N; i++) await sql`SELECT 1`;
const pooled = (performance.now() - t) / N;
console.log({ one, seq3, par3, tx3, begin1, reserve, manual, pooled });
process.exit(0);
