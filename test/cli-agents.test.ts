// Issue 19's client verbs (dist/cairn) against a live server: `my-posts`,
// `rotate-key` (the config file rewritten atomically, 0600, and the new key
// never lost when it cannot be written) and `--idempotency-key`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { BINARY, call, startServer, tempDir, type RunningServer } from "./helpers/server.ts";
import { NO_BREAKERS, register } from "./helpers/api.ts";

let server: RunningServer;
const dirs: string[] = [];

function scratch(): string {
  const dir = tempDir("cairn-cli19-");
  dirs.push(dir);
  return dir;
}

async function cairn(args: string[], xdg: string, env: Record<string, string> = {}) {
  const base: Record<string, string | undefined> = { ...process.env };
  for (const name of ["CAIRN_URL", "CAIRN_API_KEY", "CAIRN_TIMEOUT_MS"]) delete base[name];
  const child = Bun.spawn([BINARY, ...args], {
    env: { ...base, XDG_CONFIG_HOME: xdg, CAIRN_URL: server.url, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

const configOf = (xdg: string) => JSON.parse(readFileSync(join(xdg, "cairn", "config.json"), "utf8"));

beforeAll(async () => {
  server = await startServer({ binary: true, env: NO_BREAKERS });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("rotate-key", () => {
  test("prints the new key, saves it in place of the old one (0600, url kept), and the old key is refused", async () => {
    const xdg = scratch();
    expect((await cairn(["register", "rotate@example.org"], xdg)).code).toBe(0);
    const before = configOf(xdg);
    const run = await cairn(["rotate-key"], xdg);
    expect(run.code).toBe(0);
    const answer = JSON.parse(run.stdout);
    expect(answer.api_key).toStartWith("cairn_");
    expect(answer.api_key).not.toBe(before.api_key);
    expect(run.stderr).toContain("saved the new api_key");
    const after = configOf(xdg);
    expect(after).toEqual({ ...before, api_key: answer.api_key });
    expect(statSync(join(xdg, "cairn", "config.json")).mode & 0o777).toBe(0o600);
    // No temporary file is left beside it.
    expect(readdirSync(join(xdg, "cairn"))).toEqual(["config.json"]);
    expect((await call(server.url, "GET", "/v1/me", { key: before.api_key })).status).toBe(401);
    expect((await cairn(["me"], xdg)).code).toBe(0);
  });

  test("when the config cannot be written, the new key is shown on stderr and still works", async () => {
    const who = await register(server.url);
    // /proc/self/… cannot hold a directory, even for root: the save must fail.
    const run = await cairn(["rotate-key"], "/proc/self/fdinfo", { CAIRN_API_KEY: who.key });
    expect(run.code).toBe(1);
    const fresh = JSON.parse(run.stdout).api_key as string;
    expect(run.stderr).toContain("could not save the new key");
    expect(run.stderr).toContain(fresh);
    expect((await call(server.url, "GET", "/v1/me", { key: fresh })).status).toBe(200);
    expect((await call(server.url, "GET", "/v1/me", { key: who.key })).status).toBe(401);
  });

  test("a key from CAIRN_API_KEY: saved to the file, and stderr says to update the variable", async () => {
    const who = await register(server.url);
    const xdg = scratch();
    const run = await cairn(["rotate-key"], xdg, { CAIRN_API_KEY: who.key });
    expect(run.code).toBe(0);
    expect(configOf(xdg).api_key).toBe(JSON.parse(run.stdout).api_key);
    expect(run.stderr).toContain("CAIRN_API_KEY still holds the old key");
  });
});

describe("my-posts and --idempotency-key", () => {
  test("post twice with one --idempotency-key makes one note; my-posts lists it and pages with --cursor", async () => {
    const who = await register(server.url);
    const env = { CAIRN_API_KEY: who.key };
    const xdg = scratch();
    const first = await cairn(["post", "--title", "Once", "--body", "Only once.", "--idempotency-key", "cli-key-1"], xdg, env);
    const second = await cairn(["post", "--title", "Once", "--body", "Only once.", "--idempotency-key", "cli-key-1"], xdg, env);
    expect(first.code).toBe(0);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    const reused = await cairn(["post", "--title", "Other", "--body", "Other.", "--idempotency-key", "cli-key-1"], xdg, env);
    expect(reused.code).toBe(1);
    expect(JSON.parse(reused.stdout).error.code).toBe("idempotency_key_reused");
    expect((await cairn(["post", "--title", "x", "--body", "y", "--idempotency-key", ""], xdg, env)).code).toBe(2);

    for (let i = 0; i < 50; i++) await call(server.url, "POST", "/v1/posts", { key: who.key, json: { title: `Filler ${i}`, body: "x" } });
    const page1 = await cairn(["my-posts"], xdg, env);
    expect(page1.code).toBe(0);
    const listed = JSON.parse(page1.stdout);
    expect(listed.posts).toHaveLength(50);
    expect(typeof listed.next).toBe("string");
    const page2 = JSON.parse((await cairn(["my-posts", "--cursor", listed.next], xdg, env)).stdout);
    expect(page2.posts.map((p: { title: string }) => p.title)).toEqual(["Once"]);
    expect(page2.next).toBeNull();
    const bad = await cairn(["my-posts", "--cursor", "nonsense"], xdg, env);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).error.code).toBe("invalid_request");
  });

  test("comment and vote take --idempotency-key; the help names the new verbs", async () => {
    const author = await register(server.url);
    const voter = await register(server.url);
    const note = (await call(server.url, "POST", "/v1/posts", { key: author.key, json: { title: "Target", body: "x" } })).data;
    const xdg = scratch();
    const env = { CAIRN_API_KEY: voter.key };
    for (let i = 0; i < 2; i++) expect((await cairn(["comment", note.id, "--body", "once", "--idempotency-key", "c-1"], xdg, env)).code).toBe(0);
    for (let i = 0; i < 2; i++) expect((await cairn(["vote", note.id, "up", "--idempotency-key", "v-1"], xdg, env)).code).toBe(0);
    const now = (await call(server.url, "GET", `/v1/posts/${note.id}`, { key: author.key })).data;
    expect(now.comment_count).toBe(1);
    expect(now.score).toBe(1);
    const help = await cairn(["--help"], xdg);
    expect(help.stdout).toContain("my-posts");
    expect(help.stdout).toContain("rotate-key");
    expect((await cairn(["post", "--help"], xdg)).stdout).toContain("--idempotency-key");
  });
});
