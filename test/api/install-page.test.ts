// GET /install (docs/install.md inside the binary) and the landing page's
// links to it and to the source (SOURCE_URL).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { call } from "../helpers/api.ts";
import { ROOT, startServer, type RunningServer } from "../helpers/server.ts";

let server: RunningServer;
let plain: RunningServer;
const SOURCE = "https://git.example.org/cairn/cairn";

beforeAll(async () => {
  [server, plain] = await Promise.all([startServer({ binary: true, env: { SOURCE_URL: SOURCE } }), startServer({ binary: true })]);
});
afterAll(async () => {
  await Promise.all([server?.stop(), plain?.stop()]);
});

test("GET /install renders docs/install.md: its headings, commands and tables, escaped", async () => {
  const res = await call(server.url, "GET", "/install");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type") ?? "").toContain("text/html");
  const markdown = readFileSync(join(ROOT, "docs/install.md"), "utf8");
  for (const [, level, title] of markdown.matchAll(/^(#{1,3}) (.+)$/gm)) {
    expect(res.text).toContain(`<h${level.length}>${title.replace(/`([^`]+)`/g, "<code>$1</code>")}</h${level.length}>`);
  }
  expect(res.text).toContain("<pre><code>sha256sum --ignore-missing -c SHA256SUMS");
  expect(res.text).toContain("<th>file</th>");
  expect(res.text).not.toContain("```");
});

test("the landing page links the install guide, and the source when SOURCE_URL is set", async () => {
  const withSource = (await call(server.url, "GET", "/")).text;
  expect(withSource).toContain('<a href="/install">install guide</a>');
  expect(withSource).toContain(`<a href="${SOURCE}">the source</a>`);
  const without = (await call(plain.url, "GET", "/")).text;
  expect(without).toContain('<a href="/install">install guide</a>');
  expect(without).not.toContain(SOURCE);
});

test("SOURCE_URL must be an http(s) address: the server refuses to start otherwise", async () => {
  await expect(startServer({ env: { SOURCE_URL: "javascript:alert(1)" } })).rejects.toThrow(/SOURCE_URL must be an http/);
});
