// A genuine 500 (the database closed under the app) answers the contract's
// internal_error with the request id in the body and in X-Request-Id, and
// logs that id; a busy database answers 503 unavailable.
import { expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import { Cairn } from "../../src/core/service.ts";
import { createApp } from "../../src/http/app.ts";
import { createLogger } from "../../src/http/log.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { tempDir } from "../helpers/server.ts";

async function appOn(store: SqliteStore) {
  const config = loadConfig({ DATA_DIR: "unused" });
  const lines: string[] = [];
  const app = createApp({ cairn: new Cairn(store, config), store, config, log: createLogger("info", (t) => lines.push(t)), isAccepting: () => true });
  return { app, lines };
}

test("500 internal_error carries the request id, also logged", async () => {
  const store = new SqliteStore({ dataDir: tempDir() });
  await store.migrate();
  const { app, lines } = await appOn(store);
  const registered = await app.handle(
    new Request("http://localhost/v1/register", { method: "POST", headers: { "content-type": "application/json" }, body: '{"email":"a@b.c"}' }),
  );
  const { api_key } = (await registered.json()) as { api_key: string };
  await store.close();
  const res = await app.handle(new Request("http://localhost/v1/me", { headers: { authorization: `Bearer ${api_key}` } }));
  expect(res.status).toBe(500);
  const id = res.headers.get("x-request-id")!;
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(Object.keys(body.error).sort()).toEqual(["code", "message"]);
  expect(body.error.code).toBe("internal_error");
  expect(body.error.message).toContain(id);
  expect(lines.join("")).toContain(`"requestId":"${id}"`);
  expect(lines.join("")).not.toContain(api_key);
});

test("a busy database answers 503 unavailable, not 500", async () => {
  const dir = tempDir();
  const store = new SqliteStore({ dataDir: dir });
  await store.migrate();
  const { app } = await appOn(store);
  // Another connection holds the write lock past the busy timeout.
  const blocker = new SqliteStore({ dataDir: dir });
  blocker.sqlite.exec("PRAGMA busy_timeout = 0");
  blocker.sqlite.exec("BEGIN IMMEDIATE");
  store.sqlite.exec("PRAGMA busy_timeout = 50");
  const res = await app.handle(
    new Request("http://localhost/v1/register", { method: "POST", headers: { "content-type": "application/json" }, body: '{"email":"a@b.c"}' }),
  );
  blocker.sqlite.exec("ROLLBACK");
  expect(res.status).toBe(503);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unavailable");
});
