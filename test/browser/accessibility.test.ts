// The human pages as people with assistive technology or other settings meet
// them: axe-core (a devDependency, injected into Debian's chromium by
// playwright-core) over every page and state at desktop and phone width, in
// light and dark mode; reflow at 400% zoom; what a screen reader is told; and
// the pages with scripts off.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { ROOT, startServer, type RunningServer } from "../helpers/server.ts";
import { NEVER_SEEN_ID, NO_BREAKERS, call, createNote, register } from "../helpers/api.ts";

// Browser globals for the callbacks that run inside the page (no DOM lib in tsconfig).
declare const window: any;
declare const document: any;
declare const getComputedStyle: any;

setDefaultTimeout(240_000);

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const AXE = readFileSync(join(ROOT, "node_modules/axe-core/axe.min.js"), "utf8");
/** WCAG 2.0–2.2 A and AA, and axe's best practices. */
const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"];

let server: RunningServer;
let base: string;
let browser: Browser;
/** Every page and state a person can meet: name → path. */
const pages: Record<string, string> = { landing: "/", install: "/install", docs: "/docs", "missing note": `/v1/public/posts/${NEVER_SEEN_ID}` };

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium, or set CHROMIUM_PATH`);
  server = await startServer({ env: NO_BREAKERS });
  base = server.url;
  const author = await register(base);
  const reader = await register(base);
  const code = await createNote(base, author.key, {
    title: "Markdown-ish body with code",
    body: "Run `bun install` first.\n\n```sh\nbun run build && curl -s http://127.0.0.1:8080/v1/healthz?a_very_long_query_string_without_any_space_at_all=1\n```\n\n# not a heading\n> not a quote",
    tags: ["bun", "build", "docker", "sqlite", "wal", "c++", "c#", "node.js"],
  });
  await call(base, "POST", `/v1/posts/${code.id}/comments`, { key: reader.key, json: { body: "Confirmed.\n```\nls -la\n```" } });
  await call(base, "POST", `/v1/posts/${code.id}/vote`, { key: reader.key, json: { vote: "up" } });
  const rtl = await createNote(base, author.key, { title: "ملاحظة باللغة العربية حول قاعدة البيانات", body: "نص عربي مع `sqlite`.\n\nשלום עולם", tags: ["arabic"] });
  const cjk = await createNote(base, author.key, { title: "WAL モードについての日本語メモ 与中文说明", body: "日本語の本文です。".repeat(40) });
  const long = await createNote(base, author.key, { title: `A title with ${"unbroken".repeat(20)}`, body: `A body with ${"x".repeat(400)}.` });
  const older = await createNote(base, author.key, { title: "Old advice", body: "Out of date." });
  const newer = (await call(base, "POST", "/v1/posts", { key: author.key, json: { title: "New advice", body: "Current.", supersedes: older.id } })).data;
  Object.assign(pages, {
    "note with code, tags and a comment": `/v1/public/posts/${code.id}`,
    "right-to-left note": `/v1/public/posts/${rtl.id}`,
    "CJK note": `/v1/public/posts/${cjk.id}`,
    "long-word note": `/v1/public/posts/${long.id}`,
    "superseded note": `/v1/public/posts/${older.id}`,
    "superseding note": `/v1/public/posts/${newer.id}`,
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, timeout: 120_000, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
}, 240_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await server?.stop();
}, 60_000);

async function withPage<T>(options: { width: number; dark?: boolean; javaScript?: boolean }, run: (page: Page) => Promise<T>): Promise<T> {
  const context = await browser.newContext({
    viewport: { width: options.width, height: 800 },
    colorScheme: options.dark ? "dark" : "light",
    javaScriptEnabled: options.javaScript ?? true,
    // axe is injected as a script: the pages' strict CSP would refuse it.
    bypassCSP: true,
  });
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    return await run(page);
  } finally {
    await context.close();
  }
}

describe("accessibility of the human pages", () => {
  test("axe-core finds no violation on any page, at 1280 and 375 px, light and dark", async () => {
    const found: string[] = [];
    for (const [name, path] of Object.entries(pages)) {
      for (const width of [1280, 375]) {
        for (const dark of [false, true]) {
          await withPage({ width, dark }, async (page) => {
            await page.goto(`${base}${path}`, { waitUntil: "load" });
            await page.addScriptTag({ content: AXE });
            const violations: { id: string; impact: string; nodes: { target: string[] }[] }[] = await page.evaluate(
              async (tags) => (await window.axe.run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] })).violations,
              AXE_TAGS,
            );
            for (const v of violations) {
              found.push(`${name} (${width}px, ${dark ? "dark" : "light"}): ${v.id} [${v.impact}] at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
            }
          });
        }
      }
    }
    expect(found).toEqual([]);
  });

  test("at 400% zoom (320 CSS px) nothing scrolls sideways: neither the page nor a region in it (code blocks wrap)", async () => {
    const overflowing: string[] = [];
    await withPage({ width: 320 }, async (page) => {
      for (const [name, path] of Object.entries(pages)) {
        await page.goto(`${base}${path}`, { waitUntil: "load" });
        const found: string[] = await page.evaluate(() => {
          const wide = Array.from(document.querySelectorAll("body *")).filter((e: any) => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== "visible");
          const out = wide.map((e: any) => `${e.tagName} "${e.textContent.slice(0, 40)}"`);
          if (document.documentElement.scrollWidth > 320) out.push(`the page (${document.documentElement.scrollWidth}px)`);
          return out;
        });
        for (const what of found) overflowing.push(`${name}: ${what}`);
      }
    });
    expect(overflowing).toEqual([]);
  });
});

describe("what a screen reader is told", () => {
  test("a note's tags are a list named Tags, apart from the meta line and the body (not words run into the text)", async () => {
    await withPage({ width: 1280 }, async (page) => {
      await page.goto(`${base}${pages["note with code, tags and a comment"]}`, { waitUntil: "load" });
      const tags = page.getByRole("list", { name: "Tags" });
      expect(await tags.getByRole("listitem").allInnerTexts()).toEqual(["bun", "build", "docker", "sqlite", "wal", "c++", "c#", "node.js"]);
      // A note without tags has no empty list.
      await page.goto(`${base}${pages["CJK note"]}`, { waitUntil: "load" });
      expect(await page.getByRole("list").count()).toBe(0);
    });
  });

  test("a copy button says when it has copied (a polite live region), and is there only when its script is", async () => {
    for (const [name, path] of [["landing", "/"], ["note", pages["note with code, tags and a comment"]]]) {
      await withPage({ width: 1280, javaScript: false }, async (page) => {
        await page.goto(`${base}${path}`, { waitUntil: "load" });
        // With scripts off a copy button would do nothing: none is shown, none can take focus.
        expect({ name, buttons: await page.getByRole("button").count() }).toEqual({ name, buttons: 0 });
        await page.keyboard.press("Tab");
        expect(await page.evaluate(() => document.activeElement?.tagName)).not.toBe("BUTTON");
      });
      await withPage({ width: 1280 }, async (page) => {
        await page.goto(`${base}${path}`, { waitUntil: "load" });
        const buttons = page.getByRole("button");
        expect(await buttons.count()).toBeGreaterThan(0);
        for (const button of await buttons.all()) {
          expect(await button.isVisible()).toBe(true);
          expect(await button.getAttribute("aria-live")).toBe("polite");
        }
      });
    }
  });
});

describe("page quality", () => {
  test("every page has a title and a description (search results and link previews show it)", async () => {
    await withPage({ width: 1280 }, async (page) => {
      for (const [name, path] of Object.entries(pages)) {
        if (name === "missing note") continue;
        await page.goto(`${base}${path}`, { waitUntil: "load" });
        const description: string | null = await page.evaluate(() => document.querySelector('meta[name="description"]')?.getAttribute("content") ?? null);
        expect({ name, title: (await page.title()).length > 0, description: (description ?? "").trim().length > 0 }).toEqual({ name, title: true, description: true });
      }
    });
  });

  test("a code block's first line starts where its other lines do (no inline-code padding inside a block)", async () => {
    await withPage({ width: 1280 }, async (page) => {
      await page.goto(`${base}${pages["note with code, tags and a comment"]}`, { waitUntil: "load" });
      expect(await page.evaluate(() => getComputedStyle(document.querySelector("pre code")).paddingLeft)).toBe("0px");
    });
  });
});

describe("settings a person chooses", () => {
  test("in dark mode every page is dark (light text on a dark background, native controls too); the axe test above checks its contrast", async () => {
    const luminance = (rgb: string) => {
      const [r, g, b] = (rgb.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((v) => Number(v) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    for (const dark of [false, true]) {
      await withPage({ width: 1280, dark }, async (page) => {
        for (const [name, path] of Object.entries(pages)) {
          await page.goto(`${base}${path}`, { waitUntil: "load" });
          const seen: { background: string; color: string; scheme: string } = await page.evaluate(() => {
            const style = getComputedStyle(document.body);
            return { background: style.backgroundColor, color: style.color, scheme: getComputedStyle(document.documentElement).colorScheme };
          });
          const darkPage = luminance(seen.background) < luminance(seen.color);
          expect({ name, dark, darkPage, scheme: seen.scheme }).toEqual({ name, dark, darkPage: dark, scheme: "light dark" });
        }
      });
    }
  });

  test("nothing moves on its own: no animation, transition or smooth scrolling for a person who asked for reduced motion", async () => {
    await withPage({ width: 1280 }, async (page) => {
      for (const [name, path] of Object.entries(pages)) {
        await page.goto(`${base}${path}`, { waitUntil: "load" });
        const moving: string[] = await page.evaluate(() =>
          Array.from(document.querySelectorAll("*"))
            .map((e: any) => getComputedStyle(e))
            .filter((s: any) => s.animationName !== "none" || (s.transitionDuration !== "0s" && s.transitionProperty !== "none") || s.scrollBehavior === "smooth")
            .map((s: any) => `${s.animationName} ${s.transitionDuration} ${s.scrollBehavior}`),
        );
        expect({ name, moving }).toEqual({ name, moving: [] });
      }
    });
  });
});
