// Issue 12, points 1 and 5: several processes on one DATA_DIR. Each server
// caches notes and remembers keys; a change made through one process must be
// seen through every other on the next request.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { call, startServer, type RunningServer } from "../helpers/server.ts";
import { createNote, expectError, NO_BREAKERS, register, type Contributor } from "../helpers/api.ts";

let a: RunningServer;
let b: RunningServer;
let author: Contributor;
let voter: Contributor;

beforeAll(async () => {
  a = await startServer({ env: NO_BREAKERS });
  b = await startServer({ env: NO_BREAKERS, dataDir: a.dataDir });
  author = await register(a.url);
  voter = await register(b.url);
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

const getNote = (server: RunningServer, id: string) => call(server.url, "GET", `/v1/posts/${id}`, { key: voter.key });
const publicNote = (server: RunningServer, id: string) => call(server.url, "GET", `/v1/public/posts/${id}`);

describe("two servers on one data directory", () => {
  test("a vote and a comment through one are seen through the other at once", async () => {
    const note = await createNote(a.url, author.key);
    // Both servers cache the note.
    for (const server of [a, b]) {
      expect((await getNote(server, note.id)).data.score).toBe(0);
      expect((await publicNote(server, note.id)).data.comment_count).toBe(0);
    }
    expect((await call(a.url, "POST", `/v1/posts/${note.id}/vote`, { key: voter.key, json: { vote: "up" } })).status).toBe(200);
    expect((await getNote(b, note.id)).data.score).toBe(1);
    expect((await publicNote(b, note.id)).data.score).toBe(1);

    expect((await call(b.url, "POST", `/v1/posts/${note.id}/comments`, { key: voter.key, json: { body: "seen?" } })).status).toBe(201);
    expect((await getNote(a, note.id)).data.comment_count).toBe(1);
    const comments = await call(a.url, "GET", `/v1/posts/${note.id}/comments`, { key: author.key });
    expect(comments.data.count).toBe(1);

    expect((await call(b.url, "POST", `/v1/posts/${note.id}/vote`, { key: voter.key, json: { vote: "down" } })).status).toBe(200);
    expect((await getNote(a, note.id)).data.score).toBe(-1);
  });

  test("a note deleted through one is gone through the other (keyed and public)", async () => {
    const note = await createNote(a.url, author.key);
    for (const server of [a, b]) {
      expect((await getNote(server, note.id)).status).toBe(200);
      expect((await publicNote(server, note.id)).status).toBe(200);
    }
    expect((await call(a.url, "DELETE", `/v1/posts/${note.id}`, { key: author.key })).status).toBe(200);
    for (const server of [a, b]) {
      expectError(await getNote(server, note.id), 404, "not_found");
      expectError(await publicNote(server, note.id), 404, "not_found");
      expectError(await call(server.url, "GET", `/v1/posts/${note.id}/comments`, { key: voter.key }), 404, "not_found");
    }
  });
});

describe("a signal file removed or replaced while the servers run", () => {
  test("a revoke after `rm key-generation` still takes effect on the next request", async () => {
    const victim = await register(a.url);
    for (const server of [a, b]) expect((await call(server.url, "GET", "/v1/me", { key: victim.key })).status).toBe(200);
    rmSync(join(a.dataDir, "key-generation"));
    const revoke = await a.admin("revoke", String(victim.no));
    expect(revoke.code).toBe(0);
    for (const server of [a, b]) expectError(await call(server.url, "GET", "/v1/me", { key: victim.key }), 401, "unauthorized");
    expect(revoke.stderr).toContain("key-generation was missing or replaced");
    expect(a.logs()).toContain("a change-signal file was removed or replaced");
  });

  test("a revoke right after one server re-made a removed file takes effect at the other too", async () => {
    const victim = await register(a.url);
    for (const server of [a, b]) expect((await call(server.url, "GET", "/v1/me", { key: victim.key })).status).toBe(200);
    const path = join(a.dataDir, "key-generation");
    rmSync(path);
    // The first server to notice makes a new file; the other may still map the old one.
    while (!existsSync(path)) await Bun.sleep(5);
    const revoke = await a.admin("revoke", String(victim.no));
    expect(revoke.code).toBe(0);
    for (const server of [a, b]) expectError(await call(server.url, "GET", "/v1/me", { key: victim.key }), 401, "unauthorized");
  });

  test("a revoke after the file is replaced by a copy takes effect too", async () => {
    const victim = await register(a.url);
    for (const server of [a, b]) expect((await call(server.url, "GET", "/v1/me", { key: victim.key })).status).toBe(200);
    const path = join(a.dataDir, "key-generation");
    writeFileSync(`${path}.new`, new Uint8Array(8), { mode: 0o600 });
    renameSync(`${path}.new`, path);
    // The servers notice within a second, before or after the revoke; either way the revoke wins.
    expect((await a.admin("revoke", String(victim.no))).code).toBe(0);
    await Bun.sleep(2_100);
    for (const server of [a, b]) expectError(await call(server.url, "GET", "/v1/me", { key: victim.key }), 401, "unauthorized");
  });

  test("a note deleted after `rm note-generation` is gone through both", async () => {
    const note = await createNote(a.url, author.key);
    for (const server of [a, b]) expect((await getNote(server, note.id)).status).toBe(200);
    rmSync(join(a.dataDir, "note-generation"));
    await Bun.sleep(2_100);
    expect((await call(a.url, "DELETE", `/v1/posts/${note.id}`, { key: author.key })).status).toBe(200);
    for (const server of [a, b]) expectError(await getNote(server, note.id), 404, "not_found");
  });
});

describe("a note signal that cannot be mapped", () => {
  test("the server warns, caches nothing and still never serves a stale note", async () => {
    const { mkdtempSync, mkdirSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(join(tmpdir(), "cairn-nosignal-"));
    mkdirSync(join(dir, "note-generation"));
    const one = await startServer({ env: NO_BREAKERS, dataDir: dir });
    const two = await startServer({ env: NO_BREAKERS, dataDir: dir });
    try {
      expect(one.logs()).toContain("the note-change signal is unavailable");
      const writer = await register(one.url);
      const note = await createNote(one.url, writer.key);
      expect((await call(two.url, "GET", `/v1/posts/${note.id}`, { key: writer.key })).status).toBe(200);
      expect((await call(one.url, "DELETE", `/v1/posts/${note.id}`, { key: writer.key })).status).toBe(200);
      expectError(await call(two.url, "GET", `/v1/posts/${note.id}`, { key: writer.key }), 404, "not_found");
    } finally {
      await two.stop();
      await one.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
