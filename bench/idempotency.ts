// Issue 19: what an Idempotency-Key costs a write. POST /v1/posts with and
// without a (fresh) key against one server, in alternating rounds of the same
// run, with --clients requests in flight; on SQLite and on PostgreSQL.
// A keyed write is one more write transaction (the reservation) before the
// write, whose transaction also stores the answer.
//   bun run build && bun bench/idempotency.ts [--requests 3000] [--clients 16] [--engines sqlite,postgres]
import { freshDatabase } from "../test/helpers/postgres.ts";
import { startServer } from "../test/helpers/server.ts";
import { benchArgs } from "./wrk.ts";

const args = benchArgs();
const requests = Number(args.requests ?? 3_000);
const clients = Number(args.clients ?? 16);
const ROUNDS = 4;
const OFF = { POSTS_PER_HOUR: "0", REGISTRATIONS_PER_HOUR: "0", LOG_LEVEL: "warn" };

async function run(base: string, key: string, keyed: boolean, round: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < requests) {
      const i = next++;
      const headers: Record<string, string> = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      if (keyed) headers["idempotency-key"] = crypto.randomUUID();
      const res = await fetch(`${base}/v1/posts`, {
        method: "POST",
        headers,
        body: JSON.stringify({ title: `Bench ${keyed ? "k" : "p"}${round}-${i}`, body: `A note body long enough to look real, number ${i} of round ${round}.`, tags: ["bench"] }),
      });
      if (res.status !== 201) throw new Error(`${res.status} ${await res.text()}`);
    }
  };
  await Promise.all(Array.from({ length: clients }, worker));
  return (requests / (performance.now() - started)) * 1000;
}

const engines = (args.engines ?? "sqlite,postgres").split(",") as ("sqlite" | "postgres")[];
for (const engine of engines) {
  const env = engine === "postgres" ? { ...OFF, DATABASE_URL: await freshDatabase("idembench") } : OFF;
  const server = await startServer({ engine, env, binary: true });
  try {
    const reg = await (await fetch(`${server.url}/v1/register`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"email":"bench@example.org"}' })).json() as { api_key: string };
    const plain: number[] = [];
    const keyed: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      plain.push(await run(server.url, reg.api_key, false, round));
      keyed.push(await run(server.url, reg.api_key, true, round));
    }
    const best = (xs: number[]) => Math.max(...xs);
    console.log(
      JSON.stringify({ engine, requests, clients, rounds: ROUNDS, plainPerSecond: Math.round(best(plain)), keyedPerSecond: Math.round(best(keyed)), keyedOverPlain: +(best(keyed) / best(plain)).toFixed(2) }),
    );
  } finally {
    await server.stop();
  }
}
process.exit(0);
