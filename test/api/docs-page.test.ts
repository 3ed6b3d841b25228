// GET /docs, the API reference rendered from the OpenAPI document: table of
// contents, nested fields, statuses that can really happen, HTML routes
// described, and a curl example per route.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CONTRACT_ROUTES, call } from "../helpers/api.ts";
import { startServer, type RunningServer } from "../helpers/server.ts";

let server: RunningServer;
let html: string;
let doc: { paths: Record<string, Record<string, any>> };

beforeAll(async () => {
  server = await startServer();
  html = (await call(server.url, "GET", "/docs")).text;
  doc = (await call(server.url, "GET", "/v1/openapi.json")).data;
});
afterAll(async () => {
  await server?.stop();
});

/** The part of the page about one operation: from its heading to the next. */
function section(route: string): string {
  const [method, path] = route.split(" ");
  const start = html.indexOf(`<span class="method">${method}</span> <code>${path}</code></h3>`);
  expect(start).toBeGreaterThan(-1);
  const next = html.indexOf("<h3", start + 10);
  return html.slice(start, next === -1 ? undefined : next);
}

describe("/docs", () => {
  test("a table of contents linking to every route's section", () => {
    for (const route of CONTRACT_ROUTES) {
      const [method, path] = route.split(" ");
      const link = html.match(new RegExp(`<li><a href="#([a-z0-9-]+)"><span class="method">${method}</span> <code>${path.replace(/[{}]/g, "\\$&")}</code></a>`));
      expect({ route, linked: Boolean(link) }).toEqual({ route, linked: true });
      expect(html).toContain(`<h3 id="${link![1]}">`);
    }
  });

  test("GET routes list no 413/415 (a GET body is never read), in the page and the OpenAPI document", () => {
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        if (method !== "get") continue;
        const statuses = Object.keys(op.responses ?? {});
        expect({ route: `${method} ${path}`, statuses: statuses.filter((s) => s === "413" || s === "415") }).toEqual({ route: `${method} ${path}`, statuses: [] });
      }
    }
    expect(section("GET /v1/me")).not.toMatch(/413|415/);
    expect(section("POST /v1/posts")).toContain("413 payload_too_large");
    expect(section("POST /v1/posts")).toContain("409 duplicate_post");
  });

  test("GET / is described as the HTML landing page, not an empty 200", () => {
    const landing = section("GET /");
    expect(landing).toContain("text/html");
    expect(landing).toContain("landing page");
  });

  test("nested objects and arrays of objects are expanded", () => {
    const me = section("GET /v1/me");
    for (const field of ["recent_posts[].id", "recent_posts[].title", "search.available", "search.note"]) expect(me).toContain(`<code>${field}</code>`);
    expect(section("POST /v1/search")).toContain("<code>results[].body_truncated</code>");
    expect(section("GET /v1/posts/{post_id}/comments")).toContain("<code>comments[].contributor_no</code>");
  });

  test("who may call each route: the document's empty security requirement reads as public, the bearer key as keyed", () => {
    expect(section("POST /v1/register")).toContain("public, no key");
    expect(section("GET /v1/public/posts/{post_id}")).toContain("public, no key");
    expect(section("GET /v1/healthz")).toContain("public, no key");
    expect(section("GET /v1/me")).toContain("needs <code>Authorization: Bearer &lt;key&gt;</code>");
  });

  test("each status names the error codes that route can answer, not another route's", () => {
    for (const route of ["POST /v1/posts/{post_id}/vote", "POST /v1/posts/{post_id}/comments"]) {
      expect(section(route)).toContain("409 request_in_progress");
      expect(section(route)).not.toContain("duplicate_post");
    }
    expect(section("POST /v1/posts/{post_id}/vote")).toContain("422 idempotency_key_reused");
    expect(section("POST /v1/posts/{post_id}/vote")).not.toContain("secret_detected");
    expect(section("POST /v1/posts")).toContain("409 duplicate_post or already_superseded or request_in_progress");
    expect(section("GET /v1/mcp")).toContain("405 method_not_allowed");
    expect(section("POST /v1/mcp")).toMatch(/406 not acceptable/);
  });

  test("every route has a curl example", () => {
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
    expect(operations.length).toBeGreaterThanOrEqual(CONTRACT_ROUTES.length);
    for (const route of operations) {
      const [, path] = route.split(" ");
      const part = section(route);
      expect({ route, example: part.includes("<p>Example:</p><pre><code>curl ") }).toEqual({ route, example: true });
      expect(part).toMatch(new RegExp(`\\$CAIRN_URL${path.replace("{post_id}", "[0-9a-f-]{36}")}&quot;`));
    }
  });
});
