// WAL checkpoints in a worker thread (src/store/sqlite/checkpointer.ts): it
// starts once a store has committed START_AFTER_BATCHES batches, copies the
// WAL back while writes go on, keeps the WAL bounded, and is gone after the
// store's close. Every acknowledged note is in the database file afterwards.
import { afterAll, expect, test } from "bun:test";
import { existsSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { START_AFTER_BATCHES, TAIL_PAGES } from "../../src/store/sqlite/checkpointer.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { tempDir } from "../helpers/server.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda", "sigma"];
const body = (i: number) => Array.from({ length: 300 }, (_, j) => `${words[(i * 7 + j) % words.length]}${(i * 31 + j * 17) % 997}`).join(" ");

test("a worker thread checkpoints the WAL of a store that writes much; the WAL stays bounded and every note is in the database", async () => {
  const dir = tempDir("cairn-checkpointer-");
  dirs.push(dir);
  const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: 0 });
  await store.migrate();
  const authors: number[] = [];
  for (let i = 0; i < 8; i++) authors.push((await store.createContributor({ email: `c${i}@example.org`, keyPrefix: `cairn_ck${i}000`, keyDigest: new Uint8Array(32), createdAt: 0 })).contributorNo);
  const batches = START_AFTER_BATCHES + 150;
  const ids: string[] = [];
  let largestWal = 0;
  for (let b = 0; b < batches; b++) {
    const created = await Promise.all(
      Array.from({ length: 8 }, (_, j) => {
        const i = b * 8 + j;
        return store.createNote({ id: crypto.randomUUID(), contributorNo: authors[j], title: `note ${i}`, body: body(i), tags: [`t${i % 5}`], createdAt: i }, () => false);
      }),
    );
    for (const note of created) ids.push((note as { id: string }).id);
    const wal = join(dir, "cairn.db-wal");
    if (existsSync(wal)) largestWal = Math.max(largestWal, statSync(wal).size);
    if (b % 16 === 0) await Bun.sleep(5); // lets the worker's answers in, as idle moments of a server do
  }
  // The worker ran passes, and the writer's own autocheckpoint is the tail's.
  const deadline = Date.now() + 5000;
  while (store.checkpointer.passes === 0 && Date.now() < deadline) await Bun.sleep(20);
  expect(store.checkpointer.passes).toBeGreaterThan(0);
  expect(store.sqlite.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get()!.wal_autocheckpoint).toBe(TAIL_PAGES);
  // The WAL restarts from its start: bounded by the tail plus a batch or two, not by everything written.
  const pageSize = store.sqlite.query<{ page_size: number }, []>("PRAGMA page_size").get()!.page_size;
  expect(largestWal).toBeLessThan((TAIL_PAGES + 2000) * (pageSize + 24));
  await store.close();
  expect(store.checkpointer.running).toBe(false);
  const check = new Database(join(dir, "cairn.db"), { readonly: true });
  try {
    expect(check.query<{ n: number }, []>("SELECT count(*) AS n FROM posts").get()!.n).toBe(ids.length);
    expect(check.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()!.integrity_check).toBe("ok");
  } finally {
    check.close();
  }
}, 120_000);

test("a store that writes little starts no worker", async () => {
  const dir = tempDir("cairn-checkpointer-");
  dirs.push(dir);
  const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: 0 });
  await store.migrate();
  const author = (await store.createContributor({ email: "one@example.org", keyPrefix: "cairn_ckone00", keyDigest: new Uint8Array(32), createdAt: 0 })).contributorNo;
  for (let i = 0; i < 10; i++) await store.createNote({ id: crypto.randomUUID(), contributorNo: author, title: `n ${i}`, body: body(i), tags: [], createdAt: i }, () => false);
  expect(store.checkpointer.running).toBe(false);
  expect(store.sqlite.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get()!.wal_autocheckpoint).toBe(1000);
  await store.close();
});
