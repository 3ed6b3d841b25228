// Note creates in process, 32 at once for 5 s, on SQLite, on PostgreSQL with
// the in-memory postings following the log, and with them off: creates/s and
// this process's CPU per create (docs/benchmarks.md, "Issue 20").
//   bun bench/pg-creates.ts
import { mkdtempSync, readFileSync } from "node:fs";
import { freshDatabase } from "../test/helpers/postgres.ts";
import { PostgresStore } from "../src/store/postgres/store.ts";
import { SqliteStore } from "../src/store/sqlite/store.ts";
const body = "a body of words about replicas and postgres ".repeat(20);
async function run(name: string, store: any) {
  await store.migrate();
  const authors: number[] = [];
  for (let i = 0; i < 64; i++) authors.push((await store.createContributor({ email: `c${i}@x.org`, keyPrefix: `cairn_${i}`, keyDigest: new Uint8Array(32), createdAt: 0 })).contributorNo);
  let n = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + 5000;
  await Promise.all(Array.from({ length: 32 }, async (_, w) => {
    while (performance.now() < end) {
      const i = n++;
      await store.createNote({ id: crypto.randomUUID(), contributorNo: authors[(w * 2 + (i % 2))], title: `note ${i} on ${name}`, body: `${body} number ${i} ${Date.now()}`, tags: ["bench"], createdAt: Date.now() }, () => false);
    }
  }));
  const cpu = process.cpuUsage(cpu0);
  console.log(`${name}: ${(n / 5).toFixed(0)} creates/s, Bun CPU per create ${((cpu.user + cpu.system) / n).toFixed(0)} µs`, readFileSync("/proc/loadavg", "utf8").trim());
  await store.close();
}
await run("sqlite", new SqliteStore({ dataDir: mkdtempSync("/tmp/wt20-cpu-"), searchMemoryBytes: 2 ** 30 }));
await run("postgres", new PostgresStore({ url: await freshDatabase("cpu"), poolSize: 10, searchMemoryBytes: 2 ** 30 }));
await run("postgres, no memory", new PostgresStore({ url: await freshDatabase("cpu"), poolSize: 10, searchMemoryBytes: 0 }));
process.exit(0);
