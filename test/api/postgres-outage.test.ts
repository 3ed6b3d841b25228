// PostgreSQL unreachable (connections closed and refused, as when the
// database host goes down): every route answers the contract's 503
// `unavailable` ("storage unreachable … retry shortly"), never a 500 or a
// 400 that would send an agent to fix a body that was fine; readyz says why;
// everything answers again once the database is back. The server reaches
// PostgreSQL through a TCP proxy the test cuts (test/helpers/tcp-proxy.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, createNote, expectError, NO_BREAKERS, register, type Contributor } from "../helpers/api.ts";
import { cluster, freshDatabase, testEngines } from "../helpers/postgres.ts";
import { startServer, type RunningServer } from "../helpers/server.ts";
import { TcpProxy } from "../helpers/tcp-proxy.ts";

describe.skipIf(!testEngines().includes("postgres"))("postgres: the database unreachable", () => {
  let proxy: TcpProxy;
  let server: RunningServer;
  let author: Contributor;
  let noteId: string;

  beforeAll(async () => {
    const direct = await freshDatabase("outage");
    proxy = TcpProxy.start((await cluster()).port);
    const proxied = direct.replace(/:\d+\//, `:${proxy.port}/`);
    server = await startServer({ engine: "postgres", env: { ...NO_BREAKERS, DATABASE_URL: proxied } });
    author = await register(server.url);
    noteId = (await createNote(server.url, author.key)).id;
  }, 60_000);
  afterAll(async () => {
    proxy?.cut();
    await server?.stop();
  });

  test("every route is 503 unavailable while it lasts, readyz says so, and all answer again after", async () => {
    proxy.cut();
    const json = { "content-type": "application/json" };
    const requests: [string, string, { key?: string; json?: unknown; raw?: string; headers?: Record<string, string> }][] = [
      ["GET", "/v1/me", { key: author.key }],
      ["GET", `/v1/posts/${noteId}`, { key: author.key }],
      ["GET", `/v1/posts/${noteId}/comments`, { key: author.key }],
      ["GET", `/v1/public/posts/${noteId}`, {}],
      ["POST", "/v1/posts", { key: author.key, json: { title: "During the outage", body: "Is it stored?" } }],
      ["POST", "/v1/posts", { key: author.key, raw: '{"title": "Raw", "body": "A body that is fine."}', headers: json }],
      ["POST", "/v1/search", { key: author.key, json: { query: "outage" } }],
      ["POST", `/v1/posts/${noteId}/comments`, { key: author.key, json: { body: "A comment." } }],
      ["POST", "/v1/register", { json: { email: "outage@example.org" } }],
    ];
    const got: Record<string, string> = {};
    const want: Record<string, string> = {};
    for (const [method, path, options] of requests) {
      const answer = await call(server.url, method, path, options);
      const label = `${method} ${path} ${options.raw ? "(raw)" : ""}`;
      got[label] = `${answer.status} ${answer.data?.error?.code}`;
      want[label] = "503 unavailable";
    }
    expect(got).toEqual(want);
    const ready = await call(server.url, "GET", "/v1/readyz");
    expect(ready.status).toBe(503);
    expect(ready.data.status).toBe("not_ready");
    // The log says which request met the outage by its id and route pattern, never the URL with a note id.
    const warnings = server.logs().split("\n").filter((line) => line.includes("storage unavailable"));
    expect(warnings.length).toBeGreaterThan(0);
    for (const line of warnings) {
      expect(JSON.parse(line)).toMatchObject({ requestId: expect.any(String), route: expect.any(String) });
      expect(line).not.toContain(noteId);
    }

    proxy.restore();
    const deadline = Date.now() + 20_000;
    let back = await call(server.url, "GET", "/v1/readyz");
    while (back.status !== 200 && Date.now() < deadline) {
      await Bun.sleep(200);
      back = await call(server.url, "GET", "/v1/readyz");
    }
    expect(back.status).toBe(200);
    expect((await call(server.url, "GET", `/v1/posts/${noteId}`, { key: author.key })).status).toBe(200);
    expect((await call(server.url, "POST", "/v1/posts", { key: author.key, json: { title: "After the outage", body: "Stored." } })).status).toBe(201);
  }, 60_000);
});
