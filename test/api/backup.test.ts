// `cairn admin backup` while writes are running, restored into a new data
// directory: a server on the copy serves every note acknowledged before the
// backup began.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { NO_BREAKERS, createNote, register } from "../helpers/api.ts";
import { call, startServer, tempDir, type RunningServer } from "../helpers/server.ts";

const scratch = tempDir();
let source: RunningServer | undefined;
let restored: RunningServer | undefined;
afterAll(async () => {
  await restored?.stop();
  await source?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

test("online backup during writes, restore into a new directory, every earlier note served", async () => {
  source = await startServer({ env: { ...NO_BREAKERS } });
  const writers = await Promise.all(Array.from({ length: 6 }, () => register(source!.url)));
  const before: { id: string; title: string; body: string }[] = [];
  for (let i = 0; i < 120; i++) {
    const note = await createNote(source.url, writers[i % writers.length].key, { title: `before ${i}`, body: `acknowledged before the backup ${i}` });
    before.push(note);
  }

  // Keep writing while the backup runs.
  let writing = true;
  let during = 0;
  const load = Promise.all(
    writers.map(async (writer, w) => {
      for (let i = 0; writing; i++) {
        const res = await call(source!.url, "POST", "/v1/posts", { key: writer.key, json: { title: `during ${w}-${i}`, body: `written while backing up ${i}` } });
        if (res.status === 201) during++;
      }
    }),
  );
  await Bun.sleep(50);
  const file = join(scratch, "backup.db");
  const backup = await source.admin("backup", file);
  writing = false;
  await load;
  expect(backup.code).toBe(0);
  expect(JSON.parse(backup.stdout).bytes).toBeGreaterThan(0);
  expect(during).toBeGreaterThan(0);

  const copy = new Database(file, { readonly: true });
  expect(copy.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  copy.close();

  // A second backup to the same file is refused: backups never overwrite.
  expect((await source.admin("backup", file)).code).toBe(2);

  const newDir = join(scratch, "restored");
  const restore = Bun.spawnSync([process.execPath, join(import.meta.dir, "../../src/main.ts"), "admin", "restore", file, "--data-dir", newDir]);
  expect(restore.exitCode).toBe(0);
  // Never over an existing database.
  const again = Bun.spawnSync([process.execPath, join(import.meta.dir, "../../src/main.ts"), "admin", "restore", file, "--data-dir", newDir]);
  expect(again.exitCode).toBe(1);

  restored = await startServer({ dataDir: newDir });
  const reader = await register(restored.url);
  for (const note of before) {
    const res = await call(restored.url, "GET", `/v1/posts/${note.id}`, { key: reader.key });
    expect(res.status).toBe(200);
    expect(res.data.title).toBe(note.title);
    expect(res.data.body).toBe(note.body);
  }
  // The restored instance is fully usable: search index and writes work.
  const found = await call(restored.url, "POST", "/v1/search", { key: reader.key, json: { query: "acknowledged before the backup 7" } });
  expect(found.status).toBe(200);
  expect(found.data.results.map((r: { title: string }) => r.title)).toContain("before 7");
  expect((await call(restored.url, "POST", "/v1/posts", { key: reader.key, json: { title: "after restore", body: "works" } })).status).toBe(201);
}, 60_000);

test("a backup killed mid-way leaves no file under the backup's name; a restore that cannot finish leaves no cairn.db, and a retry works", async () => {
  const server = await startServer({ env: { ...NO_BREAKERS } });
  try {
    const writer = await register(server.url);
    // Some megabytes, so that VACUUM INTO runs long enough to be killed in it.
    for (let i = 0; i < 40; i++) {
      await Promise.all(
        Array.from({ length: 10 }, (_, j) => createNote(server.url, writer.key, { title: `bulk ${i}-${j}`, body: `bulk note ${i} ${j} `.repeat(400).slice(0, 4000) })),
      );
    }
    const main = join(import.meta.dir, "../../src/main.ts");
    const file = join(scratch, "killed.db");
    const child = Bun.spawn([process.execPath, main, "admin", "backup", file, "--data-dir", server.dataDir], { stdout: "ignore", stderr: "ignore" });
    const deadline = Date.now() + 20_000;
    while (!existsSync(file) && !existsSync(`${file}.partial`) && Date.now() < deadline) Bun.sleepSync(0.2);
    child.kill("SIGKILL");
    await child.exited;
    // Whatever the moment of the kill, a file under the backup's name is a whole backup.
    if (existsSync(file)) {
      const restored = Bun.spawnSync([process.execPath, main, "admin", "restore", file, "--data-dir", join(scratch, "from-killed")]);
      expect(restored.exitCode).toBe(0);
    }
    expect(existsSync(file)).toBe(false);

    // A restore that runs out of room (here a file-size limit) leaves no database behind, and a retry is accepted.
    const whole = join(scratch, "whole.db");
    expect((await server.admin("backup", whole)).code).toBe(0);
    const target = join(scratch, "restore-limited");
    const limited = Bun.spawnSync(["sh", "-c", 'ulimit -f 200; exec "$@"', "sh", process.execPath, main, "admin", "restore", whole, "--data-dir", target]);
    expect(limited.exitCode).not.toBe(0);
    expect(existsSync(join(target, "cairn.db"))).toBe(false);
    const retry = Bun.spawnSync([process.execPath, main, "admin", "restore", whole, "--data-dir", target]);
    expect(retry.stderr.toString()).toBe("");
    expect(retry.exitCode).toBe(0);
    expect(existsSync(join(target, "cairn.db.partial"))).toBe(false);
  } finally {
    await server.stop();
  }
}, 90_000);
