// The two search paths answer alike: the in-memory postings and the database's
// own index (SEARCH_MEMORY_MB=0, also the path while the postings are built),
// on every engine. Typo correction reads a range of the index's vocabulary;
// on PostgreSQL the table path reads it with SQL comparisons, which follow the
// database's collation unless told otherwise. A database made by `createdb`
// on a cluster of a language's locale (docs/deploy.md) sorts "wełna" between
// "wel" and "wem", where code points (the postings, SQLite) put it after "wem".
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../helpers/server.ts";
import { NO_BREAKERS, call, createNote, expectStatus, register, type Contributor } from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";
import { freshDatabase } from "../helpers/postgres.ts";

forEachEngine((engine) => {
  let memory: RunningServer;
  let table: RunningServer;
  let author: Contributor;

  beforeAll(async () => {
    const database: Record<string, string> = engine === "postgres" ? { DATABASE_URL: await freshDatabase("cairn_icu", { icuLocale: "en-US" }) } : {};
    memory = await startServer({ engine, env: { ...NO_BREAKERS, ...database } });
    table = await startServer({ engine, dataDir: memory.dataDir, env: { ...NO_BREAKERS, ...database, SEARCH_MEMORY_MB: "0" } });
    author = await register(memory.url);
  });

  afterAll(async () => {
    await table?.stop();
    await memory?.stop();
  });

  const ids = async (server: RunningServer, query: string) => {
    const res = await call(server.url, "POST", "/v1/search", { key: author.key, json: { query } });
    expectStatus(res, 200);
    return (res.data.results as { id: string }[]).map((r) => r.id);
  };

  test("typo correction picks the same word on both paths, whatever the database's collation", async () => {
    // "ł" has no decomposition (it keeps its stroke), so "wełna" is an index term of its own.
    const polish = await createNote(memory.url, author.key, { title: "Sweter z wełna merino", body: "Product feed import." });
    const welsh = await createNote(memory.url, author.key, { title: "Welsh rarebit", body: "Cheese on toast." });
    for (const query of ["welna", "wełna", "welsch", "rarebitt"]) {
      expect({ query, ids: await ids(table, query) }).toEqual({ query, ids: await ids(memory, query) });
    }
    expect(await ids(table, "wełna")).toEqual([polish.id]);
    expect(await ids(table, "welsch")).toEqual([welsh.id]);
  });
});
