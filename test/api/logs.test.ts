// Request logs: one JSON line per request with request id, method, route,
// status and duration; the id is the X-Request-Id header; no key, no
// Authorization header, no e-mail in any line.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createNote, register } from "../helpers/api.ts";
import { call, startServer, type RunningServer } from "../helpers/server.ts";
import { forEachEngine } from "../helpers/engines.ts";

forEachEngine((engine) => {

  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ engine });
  });
  afterAll(() => server.stop());

  const requestLines = () =>
    server
      .logs()
      .split("\n")
      .filter((line) => line.includes('"msg":"request"'))
      .map((line) => JSON.parse(line));

  test("one line per request, matching X-Request-Id, and no secrets", async () => {
    const email = "log-check-person@example.org";
    const author = await register(server.url, { email });
    const note = await createNote(server.url, author.key, { title: "logged", body: "a note" });
    const get = await call(server.url, "GET", `/v1/posts/${note.id}`, { key: author.key });
    const missing = await call(server.url, "GET", "/v1/nowhere");
    const traced = await call(server.url, "GET", "/v1/healthz", { headers: { "x-request-id": "trace-0123456789" } });
    const refused = await call(server.url, "GET", "/v1/me", { headers: { authorization: `Bearer ${author.key}x` } });
    // A key sent by mistake as the request id is never echoed or logged.
    const keyAsId = await call(server.url, "GET", "/v1/healthz", { headers: { "x-request-id": author.key } });
    expect(keyAsId.headers.get("x-request-id")).not.toBe(author.key);
    // A body that is not JSON fails in the parse hook, before any route hook ran.
    const unreadable = await call(server.url, "POST", "/v1/posts", { key: author.key, headers: { "content-type": "application/json" }, raw: "{not json" });
    expect(unreadable.status).toBe(400);
    const requestIds = [get, missing, traced, refused, unreadable].map((res) => res.headers.get("x-request-id"));
    for (const id of requestIds) expect(id).toBeTruthy();
    expect(requestIds[2]).toBe("trace-0123456789");

    let lines: any[] = [];
    const deadline = Date.now() + 5000; // request lines are flushed every 100 ms
    while (Date.now() < deadline) {
      lines = requestLines();
      if (requestIds.every((id) => lines.some((line) => line.requestId === id))) break;
      await Bun.sleep(50);
    }
    const byId = (id: string | null) => lines.find((line) => line.requestId === id);
    expect(byId(requestIds[0])).toMatchObject({ method: "GET", route: "/v1/posts/:post_id", status: 200, level: "info" });
    expect(byId(requestIds[1])).toMatchObject({ method: "GET", status: 404 });
    expect(byId(requestIds[3])).toMatchObject({ route: "/v1/me", status: 401 });
    expect(byId(requestIds[4])).toMatchObject({ method: "POST", route: "/v1/posts", status: 400 });
    for (const line of lines) {
      expect(Object.keys(line).sort()).toEqual(["level", "method", "ms", "msg", "requestId", "route", "status", "time"]);
      expect(typeof line.ms).toBe("number");
    }
    // Every request made so far has exactly one line.
    expect(new Set(lines.map((line) => line.requestId)).size).toBe(lines.length);

    const logs = server.logs();
    expect(logs).not.toContain(author.key);
    expect(logs).not.toContain(author.key.slice(6, 20));
    expect(logs).not.toContain(email);
    expect(logs.toLowerCase()).not.toContain("bearer");
    expect(logs.toLowerCase()).not.toContain("authorization");
  });
});
