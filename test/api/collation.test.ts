// The PostgreSQL engine answers as SQLite does whatever the database's
// collation and character classes: an operator's `createdb` takes the
// cluster's locale (docs/deploy.md), often en_US.UTF-8 or an ICU locale, and a
// Turkish one lower-cases "I" to dotless "ı". Each PostgreSQL case runs on
// databases of language locales (ICU: no OS locale needed); SQLite is the
// reference. Looped over every engine.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { adminJson, call, createNote, expectStatus, inBatches, NO_BREAKERS, register, stats } from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";
import { cluster, freshDatabase, testEngines } from "../helpers/postgres.ts";
import { command, startServer, tempDir, type RunningServer } from "../helpers/server.ts";

/** Language locales whose collation or case mapping differ from code points: punctuation and case ignored at first, "I" → "ı". */
const LOCALES = ["en-US", "tr-TR"];

forEachEngine((engine) => {
  const servers = new Map<string, RunningServer>();
  beforeAll(async () => {
    for (const locale of engine === "postgres" ? LOCALES : ["sqlite"]) {
      const database: Record<string, string> = engine === "postgres" ? { DATABASE_URL: await freshDatabase(`cairn_${locale}`, { icuLocale: locale }) } : {};
      servers.set(locale, await startServer({ engine, env: { ...NO_BREAKERS, ...database } }));
    }
  }, 60_000);
  afterAll(async () => {
    for (const server of servers.values()) await server.stop();
  });

  /** Each database (one per locale on PostgreSQL, the one file on SQLite). */
  const each = async (check: (server: RunningServer, locale: string) => Promise<void>) => {
    for (const [locale, server] of servers) await check(server, locale);
  };

  test("admin contributors --email folds ASCII letters only, on every database: 'I' is 'i' under a Turkish locale too", async () => {
    await each(async (server, locale) => {
      const stamp = `${Date.now().toString(36)}${locale.replace(/\W/g, "")}`.toLowerCase();
      const ascii = await register(server.url, { email: `Info.Ivy.${stamp}@Example.ORG` });
      const accented = await register(server.url, { email: `Ärzte.Öl.${stamp}@Example.ORG` });
      const row = async (email: string) => ((await adminJson(server, "contributors", "--email", email)) as { contributor_no: number }[]).map((c) => c.contributor_no);
      // ASCII letters in any case find the address (lower() in a Turkish database made "INFO" "ınfo").
      expect({ locale, found: await row(`info.ivy.${stamp}@example.org`) }).toEqual({ locale, found: [ascii.no] });
      expect({ locale, found: await row(`INFO.IVY.${stamp.toUpperCase()}@EXAMPLE.ORG`) }).toEqual({ locale, found: [ascii.no] });
      expect({ locale, found: await row(`Ärzte.Öl.${stamp.toUpperCase()}@example.org`) }).toEqual({ locale, found: [accented.no] });
      // Letters outside ASCII are compared as written, as SQLite's lower() does: the same answer on every engine and locale.
      expect({ locale, found: await row(`ärzte.öl.${stamp}@example.org`) }).toEqual({ locale, found: [] });
    });
  });

  test("GET /v1/me/posts pages through notes tagged with punctuation that a language collation ignores: no repeat, no skip", async () => {
    const tags = ["c++", "c-sharp", "csharp", "a.b", "a_b", "ab", "a#b", "a+b", "a-b", "b"];
    await each(async (server, locale) => {
      const author = await register(server.url);
      const notes = await inBatches(120, 1, (i) =>
        createNote(server.url, author.key, { title: `Paging ${locale} ${i}`, body: `Note ${i} of a collation check.`, tags: [tags[i % tags.length], tags[(i * 7) % tags.length]] }),
      );
      const seen: string[] = [];
      let cursor: string | null | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const res = await call(server.url, "GET", `/v1/me/posts${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ""}`, { key: author.key });
        expectStatus(res, 200);
        seen.push(...(res.data.posts as { id: string }[]).map((p) => p.id));
        cursor = res.data.next;
        if (cursor === null) break;
      }
      expect({ locale, ids: seen }).toEqual({ locale, ids: notes.map((n) => n.id).reverse() });
    });
  });

  test("tag words match exactly the tags written, punctuation and all", async () => {
    const tags = ["c++", "c-sharp", "csharp", "a.b", "a_b", "ab", "a#b", "a+b", "a-b"];
    await each(async (server, locale) => {
      const author = await register(server.url);
      const word = `collate${Date.now().toString(36)}${locale.replace(/\W/g, "").toLowerCase()}`;
      const byTag = new Map<string, string>();
      for (const tag of tags) byTag.set(tag, (await createNote(server.url, author.key, { title: `${word} ${tag}`, body: `Tagged ${tag} only.`, tags: [tag, word] })).id);
      for (const tag of tags) {
        for (const query of [`tag:${tag} tag:${word}`, `tagged tag:${tag.toUpperCase()} tag:${word}`]) {
          const res = await call(server.url, "POST", "/v1/search", { key: author.key, json: { query } });
          expectStatus(res, 200);
          expect({ locale, query, ids: (res.data.results as { id: string }[]).map((r) => r.id) }).toEqual({ locale, query, ids: [byTag.get(tag)!] });
        }
      }
    });
  });

  test("admin stats lists the web event counters in code point order (day, event, note id)", async () => {
    await each(async (server, locale) => {
      const author = await register(server.url);
      const notes = await inBatches(6, 1, (i) => createNote(server.url, author.key, { title: `Counted ${locale} ${i}`, body: `Viewed ${i}.` }));
      for (const note of notes) expectStatus(await call(server.url, "POST", "/v1/web/events", { json: { event: "page_view", post_id: note.id } }), 202);
      for (const event of ["copy_link", "copy_command", "page_view"]) expectStatus(await call(server.url, "POST", "/v1/web/events", { json: { event } }), 202);
      const rows = (await stats(server)).web_events.map((row) => [row.day, row.event, row.post_id ?? ""].join("\u0000"));
      expect({ locale, rows }).toEqual({ locale, rows: [...rows].sort() });
    });
  });
});

if (testEngines().includes("postgres")) {
  describe("postgres, a database that is not UTF-8", () => {
    /** `cairn …` on the database, as an operator runs it: exit code and stderr (10 s at most). */
    const cairn = async (args: string[], url: string) => {
      const dataDir = tempDir();
      const child = Bun.spawn([...command(false), ...args], { env: { ...process.env, DATABASE_URL: url, DATA_DIR: dataDir, PORT: "0" }, stdout: "pipe", stderr: "pipe" });
      const timer = setTimeout(() => child.kill(), 10_000);
      const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
      clearTimeout(timer);
      rmSync(dataDir, { recursive: true, force: true });
      return { code, stderr };
    };

    test("a new LATIN1 database (createdb on a cluster of a Latin-1 locale) is refused at start with what to do, and left untouched", async () => {
      const c = await cluster();
      const name = `cairn_latin1_${process.pid}`;
      const admin = new Bun.SQL(c.adminUrl, { max: 1 });
      try {
        await admin.unsafe(`CREATE DATABASE ${name} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`);
      } finally {
        await admin.close();
      }
      const url = `postgres://cairn@127.0.0.1:${c.port}/${name}`;
      // Before the refusal, serve migrated it and then answered 500 to any note or address outside Latin-1 (an emoji, "wełna").
      for (const args of [["serve"], ["admin", "stats"]]) {
        const run = await cairn(args, url);
        expect({ args, code: run.code }).toEqual({ args, code: 1 });
        expect(run.stderr).toContain(`${name} has encoding LATIN1`);
        expect(run.stderr).toContain("createdb --encoding UTF8");
        expect(run.stderr).not.toContain("    at ");
      }
      const sql = new Bun.SQL(url, { max: 1 });
      try {
        expect(await sql`SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`).toEqual([]);
      } finally {
        await sql.close();
      }
    });
  });
}
