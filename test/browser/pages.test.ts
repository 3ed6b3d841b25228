// The human pages in a real browser: headless Chromium (Debian's `chromium`,
// driven by playwright-core) against a real server on a temporary data dir.
// Covers the landing page, the public note page (escaping, strict CSP, no
// foreign requests, one page_view per load, copy link) and the docs page.
// Screenshots go to test/artifacts/ (gitignored).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { ROOT, startServer, type RunningServer } from "../helpers/server.ts";
import { CONTRACT_ROUTES, NO_BREAKERS, call, createNote, eventCount, register, stats, type Contributor, type Stats } from "../helpers/api.ts";

// Browser globals, for the callbacks that run inside the page (page.evaluate,
// addInitScript). Declared here, module-scoped, because the project's
// tsconfig has no DOM lib.
declare const window: any;
declare const document: any;
declare const navigator: any;

// A loaded 2-core machine can be slow to start Chromium and `bun … admin stats`.
setDefaultTimeout(180_000);

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ARTIFACTS = join(ROOT, "test/artifacts");
const NAV_TIMEOUT = 60_000;
const COUNT_DEADLINE = 45_000;

let server: RunningServer;
let base: string;
let origin: string;
let browser: Browser;
let author: Contributor;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium; .ci/run does it) or set CHROMIUM_PATH`);
  }
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await startServer({ env: NO_BREAKERS });
  base = server.url;
  origin = new URL(base).origin;
  author = await register(base);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    timeout: 120_000,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
}, 60_000);

/** What a page did that it must not do: CSP violations, script errors, dialogs, foreign requests. */
interface Watch {
  violations: () => Promise<string[]>;
  consoleErrors: string[];
  pageErrors: string[];
  dialogs: string[];
  foreignRequests: string[];
  requests: { url: string; method: string; body: string | null }[];
}

/** A fresh context and page that record everything suspicious the page does. */
async function openPage(): Promise<{ context: BrowserContext; page: Page; watch: Watch }> {
  const context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
  // Clipboard access, so the copy buttons take their normal path.
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin }).catch(() => {});
  // Runs before any page script (injected by the browser, outside the page's CSP).
  await context.addInitScript(() => {
    (window as any).__cspViolations = [];
    document.addEventListener("securitypolicyviolation", (e: any) => {
      (window as any).__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || "(inline)"}`);
    });
  });
  const page = await context.newPage();
  page.setDefaultTimeout(NAV_TIMEOUT);
  page.setDefaultNavigationTimeout(NAV_TIMEOUT);
  const watch: Watch = {
    violations: async () => {
      try {
        return (await page.evaluate(() => (window as any).__cspViolations ?? [])) as string[];
      } catch {
        return [];
      }
    },
    consoleErrors: [],
    pageErrors: [],
    dialogs: [],
    foreignRequests: [],
    requests: [],
  };
  page.on("console", (message) => {
    if (message.type() === "error" || /content security policy/i.test(message.text())) watch.consoleErrors.push(message.text());
  });
  page.on("pageerror", (error) => watch.pageErrors.push(String(error)));
  page.on("dialog", (dialog) => {
    watch.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss().catch(() => {});
  });
  context.on("request", (request) => {
    const url = request.url();
    watch.requests.push({ url, method: request.method(), body: request.postData() });
    if (!url.startsWith("data:") && !url.startsWith("about:") && new URL(url).origin !== origin) watch.foreignRequests.push(url);
  });
  return { context, page, watch };
}

/** Asserts the page broke no rule of its strict CSP and ran into no script error. */
async function expectClean(watch: Watch) {
  expect(await watch.violations()).toEqual([]);
  expect(watch.consoleErrors.filter((text) => /content security policy|refused to/i.test(text))).toEqual([]);
  expect(watch.pageErrors).toEqual([]);
  expect(watch.dialogs).toEqual([]);
  expect(watch.foreignRequests).toEqual([]);
}

/**
 * Polls `admin stats` until `read(stats)` reaches `expected` (or the deadline),
 * then checks once more a little later that it did not overshoot.
 */
async function waitForCount(read: (s: Stats) => number, expected: number): Promise<number> {
  const deadline = Date.now() + COUNT_DEADLINE;
  let seen = read(await stats(server));
  while (seen < expected && Date.now() < deadline) {
    await Bun.sleep(300);
    seen = read(await stats(server));
  }
  if (seen === expected) {
    await Bun.sleep(1_000);
    seen = read(await stats(server));
  }
  return seen;
}

/** Navigates and waits for the one web event the page load sends. */
async function loadAndWaitForEvent(page: Page, url: string, event: string) {
  const sent = page.waitForResponse(
    (response) => response.url() === `${origin}/v1/web/events` && (response.request().postData() ?? "").includes(`"${event}"`),
    { timeout: NAV_TIMEOUT },
  );
  const response = await page.goto(url, { waitUntil: "load" });
  const eventResponse = await sent;
  expect(eventResponse.status()).toBe(202);
  return response;
}

describe("landing page GET /", () => {
  test("renders title, headings and the register command, within its CSP; a copy button reports copy_command", async () => {
    const { context, page, watch } = await openPage();
    try {
      const response = await page.goto(`${base}/`, { waitUntil: "networkidle" });
      expect(response?.status()).toBe(200);
      expect(response?.headers()["content-security-policy"] ?? "").toContain("default-src 'none'");
      expect(await page.title()).toBe("Cairn");
      await expect(page.locator("h1").first().isVisible()).resolves.toBe(true);
      expect((await page.locator("h1").first().innerText()).trim()).toBe("Cairn");
      const headings = await page.locator("h2").allInnerTexts();
      expect(headings.length).toBeGreaterThanOrEqual(3);
      for (const text of ["Get the client", "Get a key", "Use it"]) {
        expect(headings.some((h) => h.includes(text))).toBe(true);
      }
      for (const heading of await page.locator("h2").all()) expect(await heading.isVisible()).toBe(true);
      const command = page.locator("#cmd-register");
      expect(await command.isVisible()).toBe(true);
      expect((await command.innerText()).trim()).toBe(`cairn --url ${base} register you@example.org`);
      // The page's links stay on this instance.
      const links = await page.locator("a").evaluateAll((anchors) => anchors.map((a) => (a as any).href));
      expect(links.length).toBeGreaterThan(0);
      for (const href of links) expect(new URL(href).origin).toBe(origin);
      await page.screenshot({ path: join(ARTIFACTS, "landing.png"), fullPage: true });

      const before = eventCount(await stats(server), "copy_command");
      const button = page.locator('button[data-copy="cmd-register"]');
      const sent = page.waitForResponse((r) => r.url() === `${origin}/v1/web/events`, { timeout: NAV_TIMEOUT });
      await button.click();
      expect((await sent).status()).toBe(202);
      await page.waitForFunction(() => document.querySelector('button[data-copy="cmd-register"]')?.textContent === "Copied");
      const copied = await page.evaluate(() => navigator.clipboard.readText()).catch(() => null);
      if (copied !== null) expect(copied.trim()).toBe(`cairn --url ${base} register you@example.org`);
      const event = watch.requests.filter((r) => r.url === `${origin}/v1/web/events`).map((r) => JSON.parse(r.body ?? "{}"));
      expect(event).toEqual([{ event: "copy_command", path: "/" }]);
      expect(await waitForCount((s) => eventCount(s, "copy_command"), before + 1)).toBe(before + 1);
      await page.screenshot({ path: join(ARTIFACTS, "landing-copied.png"), fullPage: true });
      await expectClean(watch);
    } finally {
      await context.close();
    }
  });
});

// Each payload would run script, load something or open a dialog if it reached the DOM as markup.
const TITLE = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">"><svg onload=window.__pwned=3>`;
const BODY = [
  `<script>window.__pwned=1;alert("script")</script>`,
  `<img src=x onerror="window.__pwned=2">`,
  `"><svg onload=window.__pwned=3>`,
  `'><img src="https://evil.example/pixel.png" onerror=alert(4)>`,
  `</div></article><script>window.__pwned=5</script>`,
  `<iframe src="javascript:window.top.__pwned=6"></iframe>`,
  `<a href="javascript:window.__pwned=7">click</a> & &amp; &lt;`,
].join("\n");
const TAG = "xss<test>";

describe("public note page GET /v1/public/posts/{id} (Accept: text/html)", () => {
  let noteId: string;
  let pageUrl: string;

  beforeAll(async () => {
    const note = await createNote(base, author.key, { title: TITLE, body: BODY, tags: ["payloads"] });
    noteId = note.id;
    pageUrl = `${base}/v1/public/posts/${noteId}`;
    expect(note.title).toBe(TITLE);
    expect(note.body).toBe(BODY);
    // The tag pattern refuses markup outright.
    const tagged = await call(base, "POST", "/v1/posts", { key: author.key, json: { title: "t", body: "b", tags: [TAG] } });
    expect(tagged.status).toBe(400);
  });

  test("shows every payload as literal text and runs none of them", async () => {
    const { context, page, watch } = await openPage();
    try {
      const response = await loadAndWaitForEvent(page, pageUrl, "page_view");
      expect(response?.status()).toBe(200);
      expect(response?.headers()["content-type"] ?? "").toContain("text/html");
      const policy = response?.headers()["content-security-policy"] ?? "";
      expect(policy).toContain("default-src 'none'");
      expect(policy).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
      expect(policy).not.toContain("unsafe-inline");
      await page.waitForLoadState("networkidle").catch(() => {});

      expect(await page.locator("h1").innerText()).toBe(TITLE);
      // The title isolated (FSI … PDI): a right-to-left override in it cannot reorder the suffix.
      expect(await page.title()).toBe(`\u2068${TITLE}\u2069 · Cairn`);
      const bodyText = await page.locator(".body").innerText();
      expect(bodyText).toBe(BODY);
      const visible = await page.locator("body").innerText();
      for (const payload of [TITLE, ...BODY.split("\n")]) expect(visible).toContain(payload);

      // None of it became markup: one script (the page's own), no img/svg/iframe/links to elsewhere.
      const dom = await page.evaluate(() => ({
        pwned: (window as any).__pwned,
        scripts: document.scripts.length,
        injected: document.querySelectorAll("img, svg, iframe, object, embed, a").length,
        articleChildren: Array.from(document.querySelector("article")?.children ?? []).map((el: any) => el.tagName),
      }));
      expect(dom.pwned).toBeUndefined();
      expect(dom.scripts).toBe(1);
      expect(dom.injected).toBe(0);
      expect(dom.articleChildren).toEqual(["H1", "DIV", "UL", "DIV"]);
      await page.screenshot({ path: join(ARTIFACTS, "note-payloads.png"), fullPage: true });

      // A while later still nothing ran (onerror/onload handlers would have fired by now).
      await Bun.sleep(500);
      expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
      await expectClean(watch);
      // Only this origin was contacted: the page itself and its one event.
      const urls = watch.requests.map((r) => `${r.method} ${r.url}`);
      expect(urls).toEqual([`GET ${pageUrl}`, `POST ${origin}/v1/web/events`]);
    } finally {
      await context.close();
    }
  });

  test("page_view rises by exactly one per load (3 loads → +3)", async () => {
    const read = (s: Stats) => eventCount(s, "page_view", noteId);
    // Every earlier page view was answered 202, i.e. already counted.
    const before = read(await stats(server));
    const { context, page, watch } = await openPage();
    try {
      for (let i = 0; i < 3; i++) await loadAndWaitForEvent(page, pageUrl, "page_view");
      await page.waitForLoadState("networkidle").catch(() => {});
      const sent = watch.requests.filter((r) => r.url === `${origin}/v1/web/events`).map((r) => JSON.parse(r.body ?? "{}"));
      expect(sent).toEqual(Array(3).fill({ event: "page_view", post_id: noteId, path: `/v1/public/posts/${noteId}` }));
      expect(await waitForCount(read, before + 3)).toBe(before + 3);
      await expectClean(watch);
    } finally {
      await context.close();
    }
  });

  test('"Copy link" reports copy_link (+1) and copies the page URL', async () => {
    const { context, page, watch } = await openPage();
    try {
      await loadAndWaitForEvent(page, pageUrl, "page_view");
      const before = eventCount(await stats(server), "copy_link");
      const button = page.getByRole("button", { name: "Copy link" });
      expect(await button.isVisible()).toBe(true);
      const sent = page.waitForResponse(
        (r) => r.url() === `${origin}/v1/web/events` && (r.request().postData() ?? "").includes('"copy_link"'),
        { timeout: NAV_TIMEOUT },
      );
      await button.click();
      expect((await sent).status()).toBe(202);
      await page.waitForFunction(() => document.getElementById("copy-link")?.textContent === "Link copied");
      const copied = await page.evaluate(() => navigator.clipboard.readText()).catch(() => null);
      if (copied !== null) expect(copied).toBe(pageUrl);
      expect(await waitForCount((s) => eventCount(s, "copy_link"), before + 1)).toBe(before + 1);
      await page.screenshot({ path: join(ARTIFACTS, "note-link-copied.png"), fullPage: true });
      await expectClean(watch);
    } finally {
      await context.close();
    }
  });

  test("a superseded note links to the newer one by path, shown as the full address the browser resolves, within the CSP", async () => {
    const older = await createNote(base, author.key, { title: "Browser older", body: "Out of date." });
    const newer = (await call(base, "POST", "/v1/posts", { key: author.key, json: { title: "Browser newer", body: "Current.", supersedes: older.id } })).data;
    const { context, page, watch } = await openPage();
    try {
      await loadAndWaitForEvent(page, `${base}/v1/public/posts/${older.id}`, "page_view");
      const link = page.locator("#superseded-by a");
      expect(await link.getAttribute("href")).toBe(`/v1/public/posts/${newer.id}`);
      expect(await link.innerText()).toBe(`${origin}/v1/public/posts/${newer.id}`);
      await link.click();
      await page.waitForURL(`${origin}/v1/public/posts/${newer.id}`);
      expect(await page.locator("h1").innerText()).toBe("Browser newer");
      await expectClean(watch);
    } finally {
      await context.close();
    }
  });

  test("on a 375-pixel-wide phone no page scrolls sideways: long words, long links and the reference's tables wrap", async () => {
    const older = await createNote(base, author.key, { title: `A title with ${"unbroken".repeat(12)} in it`, body: `A body with ${"x".repeat(300)}.` });
    await call(base, "POST", "/v1/posts", { key: author.key, json: { title: "Phone newer", body: "Current.", supersedes: older.id } });
    const context = await browser.newContext({ viewport: { width: 375, height: 700 } });
    try {
      const page = await context.newPage();
      for (const path of ["/", "/install", "/docs", `/v1/public/posts/${older.id}`]) {
        await page.goto(`${base}${path}`, { waitUntil: "load" });
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        expect({ path, width }).toEqual({ path, width: 375 });
      }
    } finally {
      await context.close();
    }
  });

  test("an unknown note id is a small HTML 404 page, not raw JSON", async () => {
    const { context, page } = await openPage();
    try {
      const response = await page.goto(`${base}/v1/public/posts/01890a5d-ac96-774b-bcce-b302099a8057`);
      expect(response?.status()).toBe(404);
      expect(response?.headers()["content-type"] ?? "").toContain("text/html");
      expect(await page.locator("h1").innerText()).toBe("No note here");
    } finally {
      await context.close();
    }
  });
});

describe("docs page GET /docs", () => {
  test("renders a heading for every operation of the OpenAPI document, with no script", async () => {
    const document = (await call(base, "GET", "/v1/openapi.json")).data as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    // The contract's routes, whatever the document says.
    const contract = CONTRACT_ROUTES;
    const { context, page, watch } = await openPage();
    try {
      const response = await page.goto(`${base}/docs`, { waitUntil: "networkidle" });
      expect(response?.status()).toBe(200);
      expect(response?.headers()["content-security-policy"] ?? "").toContain("script-src 'none'");
      expect(await page.title()).toBe("Cairn API reference");
      expect(await page.locator("h1").innerText()).toBe("Cairn API reference");
      const headings = (await page.locator("h3").allInnerTexts()).map((h) => h.replace(/\s+/g, " ").trim());
      for (const operation of new Set([...operations, ...contract])) expect(headings).toContain(operation);
      for (const heading of await page.locator("h3").all()) expect(await heading.isVisible()).toBe(true);
      await page.screenshot({ path: join(ARTIFACTS, "docs.png"), fullPage: true });
      await expectClean(watch);
    } finally {
      await context.close();
    }
  });
});

describe("landing page without PUBLIC_BASE_URL (issue 19)", () => {
  test("with scripts off the commands show the placeholder and a note says what to replace; with scripts on, the note is hidden", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await page.goto(`${base}/`, { timeout: NAV_TIMEOUT });
      expect((await page.locator("#cmd-register").innerText()).trim()).toBe("cairn --url https://cairn.example.org register you@example.org");
      expect(await page.locator("[data-origin-note]").isVisible()).toBe(true);
    } finally {
      await context.close();
    }
    const { context: scripted, page, watch } = await openPage();
    try {
      await page.goto(`${base}/`, { waitUntil: "networkidle" });
      expect(await page.locator("[data-origin-note]").isVisible()).toBe(false);
      expect(await page.locator("body").innerText()).not.toContain("cairn.example.org");
      await expectClean(watch);
    } finally {
      await scripted.close();
    }
  });
});
