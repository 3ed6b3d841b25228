// Issue 19: GET /v1/me/posts at depth. One contributor with --notes notes
// (default 100,000) among as many notes of others, on both engines; the time of
// the store's page query (Store.listOwnNotes: keyset on the row key) for the
// first page and for the last page, against the same last page read with
// OFFSET in the same run (the baseline the keyset replaces).
//   bun bench/my-posts.ts [--notes 100000] [--rounds 200]
// Notes are inserted as rows directly (no search index: the listing never reads it).
// The PostgreSQL is the tests' throwaway cluster (test/helpers/postgres.ts).
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresStore } from "../src/store/postgres/store.ts";
import { SqliteStore } from "../src/store/sqlite/store.ts";
import type { Store } from "../src/store/types.ts";
import { freshDatabase } from "../test/helpers/postgres.ts";
import { benchArgs } from "./wrk.ts";

const args = benchArgs();
const notes = Number(args.notes ?? 100_000);
const rounds = Number(args.rounds ?? 200);
const PAGE = 51;

async function median(run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 10; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

async function contributors(store: Store): Promise<[number, number]> {
  const make = async (email: string) => (await store.createContributor({ email, keyPrefix: email.slice(0, 12), keyDigest: new Uint8Array(32), createdAt: Date.now() })).contributorNo;
  return [await make("owner@bench.example"), await make("others@bench.example")];
}

async function measure(engine: string, store: Store, offsetPage: (offset: number) => Promise<unknown>, owner: number) {
  const first = await store.listOwnNotes(owner, null, PAGE);
  // The cursor of the page before the last: the last page's rows are the oldest notes.
  let cursor: number | null = null;
  const all = await store.listOwnNotes(owner, null, notes + 1);
  cursor = all[all.length - PAGE + 1]?.pk ?? null;
  const firstMs = await median(() => store.listOwnNotes(owner, null, PAGE));
  const lastMs = await median(() => store.listOwnNotes(owner, cursor, PAGE));
  const offsetMs = await median(() => offsetPage(notes - PAGE + 1));
  console.log(
    JSON.stringify({ engine, notesOfOwner: notes, firstPageMs: +firstMs.toFixed(3), lastPageKeysetMs: +lastMs.toFixed(3), lastPageOffsetMs: +offsetMs.toFixed(3), offsetOverKeyset: +(offsetMs / lastMs).toFixed(1), firstRows: first.length }),
  );
}

// ---- SQLite ----
{
  const dir = mkdtempSync(join(tmpdir(), "cairn-myposts-"));
  const store = new SqliteStore({ dataDir: dir });
  await store.migrate();
  const [owner, others] = await contributors(store);
  const insert = store.sqlite.prepare("INSERT INTO posts (id, contributor_no, title, body, tags, created_at) VALUES (?, ?, ?, ?, '[\"bench\"]', ?)");
  store.sqlite.transaction(() => {
    for (let i = 0; i < notes * 2; i++) insert.run(crypto.randomUUID(), i % 2 ? owner : others, `Title ${i}`, `Body ${i}`, 1_700_000_000_000 + i);
  })();
  const offset = store.sqlite.prepare("SELECT pk, id, title, tags, score, comment_count, created_at FROM posts WHERE contributor_no = ? ORDER BY pk DESC LIMIT ? OFFSET ?");
  await measure("sqlite", store, async (n) => offset.all(owner, PAGE, n), owner);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

// ---- PostgreSQL ----
{
  const url = await freshDatabase("myposts");
  const store = new PostgresStore({ url, poolSize: 4 });
  await store.migrate();
  const [owner, others] = await contributors(store);
  const sql = new SQL(url);
  await sql`INSERT INTO posts (id, contributor_no, title, body, tags, created_at)
            SELECT gen_random_uuid()::text, CASE WHEN i % 2 = 1 THEN ${owner}::int ELSE ${others}::int END, 'Title ' || i, 'Body ' || i, '{bench}', 1700000000000 + i
              FROM generate_series(0, ${notes * 2 - 1}::int) AS i`;
  await sql`ANALYZE posts`;
  await measure("postgres", store, (n) => sql`SELECT pk, id, title, tags, score, comment_count, created_at FROM posts WHERE contributor_no = ${owner} ORDER BY pk DESC LIMIT ${PAGE} OFFSET ${n}`, owner);
  await sql.close();
  await store.close();
}
process.exit(0);
