// Issue 19, point 3: POST /v1/me/key, looped over every engine with two
// servers on one database (SQLite: one DATA_DIR, where each server remembers
// keys until the key generation moves; PostgreSQL: replicas that read keys
// every time). Tested the way `admin revoke` is: the old key is refused on
// the very next request at both servers.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { API_KEY, call, createNote, expectError, expectStatus, keysOf, NO_BREAKERS, register, TIMESTAMP } from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { startServer, tempDir, type RunningServer } from "../helpers/server.ts";

forEachEngine((engine) => {
  let dataDir: string;
  let a: RunningServer;
  let b: RunningServer;

  beforeAll(async () => {
    dataDir = tempDir();
    const env = { ...NO_BREAKERS, ...(engine === "postgres" ? { DATABASE_URL: await freshDatabase("rotate") } : {}) };
    a = await startServer({ engine, dataDir, env });
    b = await startServer({ engine, dataDir, env });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const me = (server: RunningServer, key: string) => call(server.url, "GET", "/v1/me", { key });

  test("after a rotation the old key is 401 on the next request at both servers; the new key works at both, and notes stay", async () => {
    const who = await register(a.url);
    const note = await createNote(a.url, who.key);
    // Both servers have found the old key valid (and SQLite's remember it).
    for (const server of [a, b]) for (let i = 0; i < 3; i++) expectStatus(await me(server, who.key), 200);

    const rotated = await call(a.url, "POST", "/v1/me/key", { key: who.key });
    expectStatus(rotated, 201);
    expect(keysOf(rotated.data)).toEqual(["api_key", "contributor_no", "created_at"]);
    expect(rotated.data.contributor_no).toBe(who.no);
    expect(rotated.data.api_key).toMatch(API_KEY);
    expect(rotated.data.api_key).not.toBe(who.key);
    expect(rotated.data.created_at).toMatch(TIMESTAMP);

    for (const server of [b, a]) expectError(await me(server, who.key), 401, "unauthorized");
    for (const server of [a, b]) {
      const mine = await me(server, rotated.data.api_key);
      expectStatus(mine, 200);
      expect(mine.data.contributor_no).toBe(who.no);
      expect(mine.data.recent_posts[0].id).toBe(note.id);
    }
    // The note is still the caller's: the new key deletes it.
    expectStatus(await call(b.url, "DELETE", `/v1/posts/${note.id}`, { key: rotated.data.api_key }), 200);
    // The old key can no longer rotate either.
    expectError(await call(b.url, "POST", "/v1/me/key", { key: who.key }), 401, "unauthorized");
  });

  test("a rotation through the other server, twice in a row: only the newest key works anywhere", async () => {
    const who = await register(b.url);
    const first = (await call(b.url, "POST", "/v1/me/key", { key: who.key })).data.api_key as string;
    expectStatus(await me(a, first), 200);
    const second = (await call(a.url, "POST", "/v1/me/key", { key: first })).data.api_key as string;
    for (const server of [a, b]) {
      expectError(await me(server, who.key), 401, "unauthorized");
      expectError(await me(server, first), 401, "unauthorized");
      expectStatus(await me(server, second), 200);
    }
  });

  test("a revoked contributor cannot rotate; no key is 401", async () => {
    const who = await register(a.url);
    await a.admin("revoke", String(who.no));
    expectError(await call(a.url, "POST", "/v1/me/key", { key: who.key }), 401, "unauthorized");
    expectError(await call(a.url, "POST", "/v1/me/key"), 401, "unauthorized");
  });

  test("rotations count against REGISTRATIONS_PER_HOUR per contributor", async () => {
    const limited = await startServer({ engine, dataDir, env: { ...NO_BREAKERS, REGISTRATIONS_PER_HOUR: "2", ...(engine === "postgres" ? { DATABASE_URL: a.databaseUrl! } : {}) } });
    try {
      let key = (await register(limited.url)).key;
      for (let i = 0; i < 2; i++) {
        const rotated = await call(limited.url, "POST", "/v1/me/key", { key });
        expectStatus(rotated, 201);
        key = rotated.data.api_key;
      }
      const refused = await call(limited.url, "POST", "/v1/me/key", { key });
      expectError(refused, 429, "rate_limited");
      expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
      // The refused rotation changed nothing: the current key still works.
      expectStatus(await me(limited, key), 200);
    } finally {
      await limited.stop();
    }
  });
});
