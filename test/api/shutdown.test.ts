// Graceful shutdown: SIGTERM during a burst of requests. readyz turns 503 at
// once while requests are still served; every request either gets its full
// answer or is never accepted; exit code 0; the database is sound.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { NO_BREAKERS, register, stats } from "../helpers/api.ts";
import { startServer, tempDir } from "../helpers/server.ts";

const dataDir = tempDir();
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("SIGTERM during a burst: full answers or none, readyz 503 while draining, exit 0, integrity ok", async () => {
  const server = await startServer({ binary: true, dataDir, env: { ...NO_BREAKERS, SHUTDOWN_GRACE_MS: "700", LOG_LEVEL: "warn" } });
  const base = server.url;
  const writers = await Promise.all(Array.from({ length: 8 }, () => register(base)));

  let created = 0;
  let createErrors = 0;
  let incomplete = 0;
  let serverErrors = 0;
  const readyzSeen: number[] = [];
  let stop = false;

  // Each worker creates notes back to back until the server stops answering.
  const worker = async (w: number) => {
    for (let i = 0; !stop; i++) {
      try {
        const res = await fetch(`${base}/v1/posts`, {
          method: "POST",
          headers: { authorization: `Bearer ${writers[w % writers.length].key}`, "content-type": "application/json" },
          body: JSON.stringify({ title: `burst ${w}-${i}`, body: `note ${i} of worker ${w}` }),
        });
        const text = await res.text();
        if (res.status >= 500) serverErrors++;
        if (res.status === 201) {
          // A full answer parses and names the note.
          try {
            if (!JSON.parse(text).id) incomplete++;
          } catch {
            incomplete++;
          }
          created++;
        }
      } catch {
        createErrors++; // refused or reset: never accepted
        if (server.proc.exitCode !== null) return;
        await Bun.sleep(5);
      }
    }
  };
  const watchReadyz = async () => {
    while (!stop) {
      try {
        readyzSeen.push((await fetch(`${base}/v1/readyz`)).status);
      } catch {
        return;
      }
      await Bun.sleep(20);
    }
  };

  const workers = Array.from({ length: 16 }, (_, w) => worker(w));
  const watcher = watchReadyz();
  while (created < 200) await Bun.sleep(10);
  const createdBeforeSigterm = created;
  server.proc.kill("SIGTERM");
  const exitCode = await server.proc.exited;
  stop = true;
  await Promise.all([...workers, watcher]);

  expect(exitCode).toBe(0);
  expect(created).toBeGreaterThan(createdBeforeSigterm); // still served while draining
  expect(serverErrors).toBe(0);
  expect(incomplete).toBe(0);
  expect(readyzSeen.slice(0, 3)).toContain(200);
  expect(readyzSeen).toContain(503); // seen while the server still answered
  expect(readyzSeen.lastIndexOf(200)).toBeLessThan(readyzSeen.indexOf(503)); // never ready again once draining
  expect(server.logs()).toContain('"msg":"stopped"');

  const db = new Database(join(dataDir, "cairn.db"), { readonly: true });
  expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  db.close();

  // Nothing was stored that was not acknowledged, and nothing acknowledged was lost.
  const again = await startServer({ dataDir, env: { LOG_LEVEL: "warn" } });
  try {
    expect((await stats(again)).notes).toBe(created);
  } finally {
    await again.stop();
  }
}, 60_000);
