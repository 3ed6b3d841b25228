// What an operator meets when something is wrong: a port already in use, an
// unusable data directory, admin verbs given a bad path or file. Each must
// fail with a non-zero exit and say what to do, never a raw library error.
// Also: `admin stats` keys and `admin contributors`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { adminJson, createNote, register, stats, type Contributor } from "../helpers/api.ts";
import { BINARY, call, ROOT, startServer, tempDir, type RunningServer } from "../helpers/server.ts";

let server: RunningServer;
const dirs: string[] = [];
const scratch = () => {
  const dir = tempDir("cairn-operator-");
  dirs.push(dir);
  return dir;
};

async function run(args: string[], env: Record<string, string>) {
  const child = Bun.spawn([BINARY, ...args], { env: { ...process.env, LOG_LEVEL: "info", ...env }, stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => child.kill(), 10_000);
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(timer);
  return { stdout, stderr, code };
}

let ada: Contributor;

beforeAll(async () => {
  server = await startServer({ binary: true });
  ada = await register(server.url, { email: `Ada.${Date.now()}@Example.org` });
  await register(server.url);
  await createNote(server.url, ada.key);
});

afterAll(async () => {
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("cairn serve", () => {
  test("a second server on a port in use fails at start (no reusePort), and the first keeps all requests", async () => {
    const port = new URL(server.url).port;
    const second = await run(["serve"], { PORT: port, HOST: "127.0.0.1", DATA_DIR: scratch() });
    expect(second.code).toBe(1);
    expect(second.stdout).not.toContain("listening");
    expect(second.stderr).toContain("already in use");
    expect(second.stderr).toContain("--port");
    // Every request still reaches the one server (with reusePort some went to the other database).
    const me = await Promise.all(Array.from({ length: 10 }, () => call(server.url, "GET", "/v1/me", { key: ada.key })));
    expect(me.map((res) => res.status)).toEqual(Array(10).fill(200));
  });

  test("the reader of its log going away (a closed stdout pipe) does not stop the server", async () => {
    const proc = Bun.spawn([BINARY, "serve"], { env: { ...process.env, HOST: "127.0.0.1", PORT: "0", DATA_DIR: scratch() }, stdout: "pipe", stderr: "pipe" });
    try {
      const reader = proc.stdout.getReader();
      let text = "";
      while (!text.includes('"listening"')) text += new TextDecoder().decode((await reader.read()).value);
      const url = JSON.parse(text.split("\n").find((line) => line.includes('"listening"'))!).url as string;
      await reader.cancel();
      // Each request writes a log line (flushed within 100 ms) into the closed pipe.
      for (let i = 0; i < 5; i++) {
        expect((await call(url, "GET", "/v1/healthz")).status).toBe(200);
        await Bun.sleep(150);
      }
      expect(proc.exitCode).toBeNull();
    } finally {
      proc.kill();
      await proc.exited;
    }
  });

  test("`cairn serve --help` names every setting the server reads (the hourly breakers as *_PER_HOUR)", async () => {
    const { stdout, code } = await run(["serve", "--help"], {});
    expect(code).toBe(0);
    const read = [...readFileSync(join(ROOT, "src/config.ts"), "utf8").matchAll(/Setting\(env, "([A-Z_]+)"/g)].map((m) => m[1]);
    expect(read.length).toBeGreaterThan(20);
    expect(read.filter((name) => !name.endsWith("_PER_HOUR") && !stdout.includes(name))).toEqual([]);
    expect(stdout).toContain("*_PER_HOUR");
  });

  test("database files an old build left open to other users (0644) are named at start; owner-only ones are not, in a directory of any mode", async () => {
    const dir = scratch();
    const first = await startServer({ binary: true, dataDir: dir });
    await first.stop();
    const warnings = (logs: string) =>
      logs
        .split("\n")
        .filter((line) => line.includes("other users of this machine can read"))
        .map((line) => JSON.parse(line));
    expect(warnings(first.logs())).toEqual([]);
    // Names in the directory reveal nothing: its mode alone is never warned of.
    chmodSync(dir, 0o755);
    const listable = await startServer({ binary: true, dataDir: dir });
    await listable.stop();
    expect(warnings(listable.logs())).toEqual([]);

    chmodSync(join(dir, "cairn.db"), 0o644);
    const again = await startServer({ binary: true, dataDir: dir });
    await again.stop();
    const named = warnings(again.logs());
    const db = join(dir, "cairn.db");
    expect(named[0]).toMatchObject({ path: db, mode: "0644" });
    // SQLite gives its -wal and -shm files the database file's mode; they are named too
    // when they exist at the check (they come and go with the connections).
    for (const line of named.slice(1)) expect([`${db}-wal`, `${db}-shm`]).toContain(line.path);
    for (const line of named) expect(line.mode).toBe("0644");
    expect(named[0].level).toBe("warn");
    // Reported, never changed: the operator decides.
    expect(statSync(join(dir, "cairn.db")).mode & 0o777).toBe(0o644);
  });

  test("a data directory that cannot be created: exit 1 and what to do", async () => {
    const file = join(scratch(), "a-file");
    writeFileSync(file, "not a directory");
    const result = await run(["serve"], { PORT: "0", DATA_DIR: join(file, "data") });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("cannot open the database");
    expect(result.stderr).toContain("--data-dir");
  });
});

describe("cairn admin", () => {
  test("stats keys are snake_case throughout", async () => {
    const s = await stats(server);
    const keys = (value: unknown): string[] =>
      value && typeof value === "object"
        ? Object.entries(value).flatMap(([key, inner]) => [...(Array.isArray(value) ? [] : [key]), ...keys(inner)])
        : [];
    await call(server.url, "POST", "/v1/web/events", { json: { event: "copy_link" } });
    const all = keys(await stats(server));
    expect(all).toContain("active_contributors");
    expect(all).toContain("post_id");
    for (const key of all) expect(key).toMatch(/^[a-z0-9_]+$/);
    expect(s.active_contributors).toBeGreaterThanOrEqual(2);
  });

  test("contributors lists everyone; --email finds one address in any case", async () => {
    const everyone = await adminJson(server, "contributors");
    expect(everyone.length).toBeGreaterThanOrEqual(2);
    expect(Object.keys(everyone[0]).sort()).toEqual(["active", "contributor_no", "created_at", "email", "post_count"]);
    const found = await adminJson(server, "contributors", "--email", ada.email.toUpperCase());
    expect(found).toEqual([{ contributor_no: ada.no, email: ada.email, active: true, created_at: ada.createdAt, post_count: 1 }]);
    expect(await adminJson(server, "contributors", "--email", "nobody@example.org")).toEqual([]);
  });

  test("revoke then activate at once: no word of a missing signal file, and no wait for one", async () => {
    const victim = await register(server.url);
    const signal = join(server.dataDir, "key-generation");
    // Only where the file system keeps birth times: elsewhere a write two seconds ago looks like a file just made.
    const bornMs = statSync(signal).birthtimeMs;
    if (!(bornMs > 0)) return;
    // The server made the file at its start: a file younger than two seconds is rightly waited for.
    await Bun.sleep(Math.max(0, bornMs + 2_100 - Date.now()));
    // The warning and the two-second wait go together (src/admin/main.ts).
    for (const verb of ["revoke", "activate", "revoke", "activate"]) {
      const result = await server.admin(verb, String(victim.no));
      expect(result.code).toBe(0);
      expect(result.stderr).not.toContain("key-generation");
    }
    expect((await call(server.url, "GET", "/v1/me", { key: victim.key })).status).toBe(200);
  });

  test("backup into a missing directory: exit 1, says to create it", async () => {
    const result = await server.admin("backup", join(scratch(), "missing", "cairn.db"));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("does not exist");
    expect(result.stderr).toContain("mkdir -p");
  });

  test("backup and restore never write through a link, even one whose target is missing; a backup is 0600 from its first byte", async () => {
    const dir = scratch();
    const elsewhere = join(dir, "elsewhere.db");
    symlinkSync(elsewhere, join(dir, "link.db"));
    const backup = await server.admin("backup", join(dir, "link.db"));
    expect(backup.code).toBe(2);
    expect(backup.stderr).toContain("exists already");
    expect(existsSync(elsewhere)).toBe(false);

    const made = join(dir, "made.db");
    expect((await server.admin("backup", made)).code).toBe(0);
    expect(statSync(made).mode & 0o777).toBe(0o600);

    const target = join(dir, "restore-here");
    mkdirSync(target, { mode: 0o700 });
    symlinkSync(join(dir, "restored-elsewhere.db"), join(target, "cairn.db"));
    const restore = await run(["admin", "restore", made, "--data-dir", target], {});
    expect(restore.code).toBe(1);
    expect(existsSync(join(dir, "restored-elsewhere.db"))).toBe(false);
  });

  test("restore of a file that is not a database: exit 1, says which file to give", async () => {
    const bogus = join(scratch(), "notes.txt");
    writeFileSync(bogus, "this is not SQLite ".repeat(100));
    const target = join(scratch(), "restored");
    mkdirSync(target);
    const result = await server.admin("restore", bogus, "--data-dir", target);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("is not an SQLite database");
    expect(result.stderr).toContain("cairn admin backup");
  });

  test("a data directory that cannot be opened: exit 1 and what to check", async () => {
    const file = join(scratch(), "a-file");
    writeFileSync(file, "x");
    const result = await run(["admin", "provision", "--email", "x@example.org"], { DATA_DIR: join(file, "data") });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("cannot open the database");
    expect(result.stderr).not.toContain("    at ");
  });
});
