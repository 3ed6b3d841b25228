import { expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { embeddedTags, migrations } from "../../src/store/sqlite/migrations.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import journal from "../../drizzle/meta/_journal.json";
import { tempDir, ROOT } from "../helpers/server.ts";

test("every migration drizzle-kit wrote is embedded in the executable, in journal order", () => {
  const files = readdirSync(join(ROOT, "drizzle"))
    .filter((name) => name.endsWith(".sql"))
    .map((name) => name.replace(/\.sql$/, ""))
    .sort();
  expect(embeddedTags.sort()).toEqual(files);
  expect(migrations.map((m) => m.tag)).toEqual(journal.entries.map((e) => e.tag));
});

test("migrating twice, and from two stores at once, applies each step once", async () => {
  const dir = tempDir();
  const a = new SqliteStore({ dataDir: dir });
  const b = new SqliteStore({ dataDir: dir });
  await Promise.all([a.migrate(), b.migrate()]);
  await a.migrate();
  const rows = a.sqlite.query("SELECT count(*) AS n FROM __drizzle_migrations").get() as { n: number };
  expect(rows.n).toBe(migrations.length);
  expect(await a.readiness()).toEqual({ ready: true });
  const fk = a.sqlite.query("PRAGMA foreign_keys").get() as { foreign_keys: number };
  expect(fk.foreign_keys).toBe(1);
  const mode = a.sqlite.query("PRAGMA journal_mode").get() as { journal_mode: string };
  expect(mode.journal_mode).toBe("wal");
  await a.close();
  await b.close();
});

test("a new data directory is owner-only (0700) and the database file 0600", async () => {
  const { statSync } = await import("node:fs");
  const dir = join(tempDir(), "fresh");
  const store = new SqliteStore({ dataDir: dir });
  await store.migrate();
  expect(statSync(dir).mode & 0o777).toBe(0o700);
  expect(statSync(join(dir, "cairn.db")).mode & 0o777).toBe(0o600);
  await store.close();
});
