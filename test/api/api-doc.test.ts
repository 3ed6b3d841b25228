// docs/api.md is the contract in the repository: the routes it lists (its
// `### METHOD /path` headings) must be exactly the app's routes, as the
// running server reports them in its OpenAPI document (generated from the
// registered routes), and each must carry a curl example.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { call } from "../helpers/api.ts";
import { ROOT, startServer, type RunningServer } from "../helpers/server.ts";

let server: RunningServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

const text = readFileSync(join(ROOT, "docs/api.md"), "utf8");
/** "METHOD /path" → the section's text up to the next heading of any level 2 or 3. */
const sections = new Map(
  [...text.matchAll(/^### (GET|POST|PUT|PATCH|DELETE) (\S+)\n([\s\S]*?)(?=^##)/gm)].map((m) => [`${m[1]} ${m[2]}`, m[3]]),
);

test("docs/api.md lists exactly the app's routes", async () => {
  const doc = (await call(server.url, "GET", "/v1/openapi.json")).data as { paths: Record<string, Record<string, unknown>> };
  const routes = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
  expect([...sections.keys()].sort()).toEqual(routes.sort());
});

test("every route in docs/api.md has a curl example of that method and path", () => {
  expect(sections.size).toBeGreaterThan(10);
  for (const [route, body] of sections) {
    const [method, path] = route.split(" ");
    const pattern = path.replace("{post_id}", "[0-9a-f-]{36}");
    const curl = body.match(/^curl .*$/m)?.[0] ?? "";
    expect({ route, curl: new RegExp(`"\\$CAIRN_URL${pattern}"`).test(curl) }).toEqual({ route, curl: true });
    if (method !== "GET") expect({ route, method: curl.includes(`-X ${method}`) }).toEqual({ route, method: true });
  }
});
