// Issue 19, point 5: the landing page never copies the request's Host into
// its HTML without PUBLIC_BASE_URL; a script allowed by the page's CSP hash
// fills in the address the browser used (test/browser/pages.test.ts shows it
// in a real browser); with PUBLIC_BASE_URL that address is printed.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { call, createNote, rawHttp, register } from "./../helpers/api.ts";
import { startServer, type RunningServer } from "../helpers/server.ts";

let plain: RunningServer;
let named: RunningServer;

beforeAll(async () => {
  [plain, named] = await Promise.all([startServer(), startServer({ env: { PUBLIC_BASE_URL: "https://notes.example.com/" } })]);
}, 60_000);
afterAll(async () => {
  await Promise.all([plain?.stop(), named?.stop()]);
});

const landing = (server: RunningServer, host: string, extra: string[] = []) =>
  rawHttp(server.url, [`GET / HTTP/1.1`, `Host: ${host}`, "Connection: close", ...extra, "", ""].join("\r\n"));

test("a forged Host never appears in the page, in the commands or anywhere else", async () => {
  for (const [host, extra] of [
    ["evil.example", []],
    ["evil.example:8443", []],
    [new URL(plain.url).host, ["X-Forwarded-Host: evil.example", "Forwarded: host=evil.example"]],
  ] as [string, string[]][]) {
    const answer = await landing(plain, host, extra);
    expect(answer.status).toBe(200);
    expect(answer.body).not.toContain("evil.example");
    expect(answer.body).not.toContain(`--url http`);
    expect(answer.body).toContain('cairn --url <span data-origin>https://cairn.example.org</span> register you@example.org');
    if (host !== "evil.example" && host !== "evil.example:8443") expect(answer.body).not.toContain(host);
  }
});

test("the script that fills in location.origin is the one the CSP allows by hash; without scripts a note says what to replace", async () => {
  const answer = await landing(plain, "evil.example");
  const script = /<script>([\s\S]*?)<\/script>/.exec(answer.body)![1];
  expect(script).toContain("location.origin");
  const hash = `'sha256-${createHash("sha256").update(script).digest("base64")}'`;
  expect(answer.headers["content-security-policy"]).toContain(`script-src ${hash}`);
  expect(answer.body).toContain("<p data-origin-note>Replace <code>https://cairn.example.org</code>");
});

test("with PUBLIC_BASE_URL the page prints that address and no placeholder", async () => {
  const answer = await landing(named, "evil.example");
  expect(answer.body).toContain("cairn --url https://notes.example.com register you@example.org");
  expect(answer.body).toContain("https://notes.example.com/v1/mcp");
  expect(answer.body).not.toContain("evil.example");
  expect(answer.body).not.toContain("<span data-origin>");
  expect(answer.body).not.toContain("<p data-origin-note>");
});

test("a note page: og:url and the superseded-by link from PUBLIC_BASE_URL when set, never from the Host", async () => {
  for (const server of [plain, named]) {
    const author = await register(server.url);
    const older = await createNote(server.url, author.key, { title: "Older", body: "Out of date." });
    const newer = (await call(server.url, "POST", "/v1/posts", { key: author.key, json: { title: "Newer", body: "Current.", supersedes: older.id } })).data;
    const page = (id: string) =>
      rawHttp(server.url, [`GET /v1/public/posts/${id} HTTP/1.1`, "Host: evil.example", "Accept: text/html", "Connection: close", "", ""].join("\r\n"));
    const answer = await page(older.id);
    expect(answer.status).toBe(200);
    expect(answer.body).not.toContain("evil.example");
    const base = server === named ? "https://notes.example.com" : "";
    expect(answer.body).toContain(`href="${base}/v1/public/posts/${newer.id}"`);
    const ogUrl = /<meta property="og:url" content="([^"]*)">/.exec(answer.body)?.[1];
    expect(ogUrl).toBe(server === named ? `${base}/v1/public/posts/${older.id}` : undefined);
  }
});

test("PUBLIC_BASE_URL must be an http(s) address: the server refuses to start otherwise, naming it", async () => {
  for (const value of ["notes.example.org", "ftp://notes.example.org", "javascript:alert(1)"]) {
    await expect(startServer({ env: { PUBLIC_BASE_URL: value } })).rejects.toThrow(/PUBLIC_BASE_URL must be an http/);
  }
});
