// The fold thread (src/store/sqlite/fold-thread.ts): a worker that prepares
// the term counts' folds on its own connection. It prepares exactly the rows
// not folded yet; a worker that cannot open the database never counts as
// running, so the writer keeps folding on its own thread. That the counts stay
// exact with folds from the thread is held by term-counts.test.ts.
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { FoldThread } from "../../src/store/sqlite/fold-thread.ts";
import type { PreparedFold } from "../../src/store/sqlite/term-counts.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { tempDir } from "../helpers/server.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error("timed out");
    await Bun.sleep(10);
  }
}

test("the thread prepares the fold of the log rows after terms_seq, from the stored vectors", async () => {
  const dir = tempDir("cairn-fold-thread-");
  dirs.push(dir);
  // Folds far apart: the notes below stay pending.
  const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: 0, searchFoldEvery: 100_000 });
  await store.migrate();
  const { contributorNo } = await store.createContributor({ email: "f@example.org", keyPrefix: "cairn_ffffff", keyDigest: new Uint8Array(32), createdAt: 0 });
  for (let i = 0; i < 5; i++) {
    await store.createNote({ id: `00000000-0000-7000-8000-${String(i + 1).padStart(12, "0")}`, contributorNo, title: `Fell ${i}`, body: i % 2 ? "tarn scree" : "tarn", tags: [], createdAt: i }, () => false);
  }
  const { folded, last } = store.sqlite.query<{ folded: number; last: number }, []>("SELECT terms_seq AS folded, (SELECT max(seq) FROM search_log) AS last FROM search_totals").get()!;
  expect(last - folded).toBe(5);
  const prepared: PreparedFold[] = [];
  const thread = new FoldThread((fold) => prepared.push(fold));
  try {
    expect(thread.start(join(dir, "cairn.db"))).toBe(true);
    await until(() => thread.running);
    thread.request();
    thread.request(); // one in flight at a time
    await until(() => prepared.length > 0);
    await Bun.sleep(50);
    expect(prepared).toHaveLength(1);
    const [fold] = prepared;
    expect([fold.from, fold.upTo, fold.removes]).toEqual([folded, last, false]);
    const changes = new Map((JSON.parse(fold.json) as [string, number, number][]).map(([term, tier, change]) => [`${term}/${tier}`, change]));
    const byTerm = (term: string) => [...changes].filter(([key]) => key.startsWith(`${term}/`)).reduce((sum, [, change]) => sum + change, 0);
    expect(byTerm("tarn")).toBe(5);
    expect(byTerm("scree")).toBe(2);
    expect(byTerm("fell")).toBe(5);
  } finally {
    await thread.close();
    await store.close();
  }
});

test("a worker that cannot open the database never runs: nothing is asked of it", async () => {
  const prepared: PreparedFold[] = [];
  const thread = new FoldThread((fold) => prepared.push(fold));
  expect(thread.start("/nonexistent-cairn-dir/none/cairn.db")).toBe(true);
  await Bun.sleep(500);
  expect(thread.running).toBe(false);
  thread.request();
  await Bun.sleep(100);
  expect(prepared).toEqual([]);
  await thread.close();
});
