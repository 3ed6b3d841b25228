// The fold thread (src/store/sqlite/fold-thread.ts): a worker that prepares
// the term counts' folds on its own connection and writes them in its write
// turn. It folds exactly the rows not folded yet, and waits while the writer
// holds the turn; a worker that cannot open the database never counts as
// running, so the writer keeps folding on its own thread. That the counts stay
// exact with folds from the thread is held by term-counts.test.ts.
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { FoldThread } from "../../src/store/sqlite/fold-thread.ts";
import { WRITER, WriteTurn } from "../../src/store/sqlite/write-turn.ts";
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

test("the thread folds the log rows after terms_seq, from the stored vectors, in its write turn", async () => {
  const dir = tempDir("cairn-fold-thread-");
  dirs.push(dir);
  // Folds far apart: the notes below stay pending.
  const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: 0, searchFoldEvery: 100_000 });
  await store.migrate();
  const { contributorNo } = await store.createContributor({ email: "f@example.org", keyPrefix: "cairn_ffffff", keyDigest: new Uint8Array(32), createdAt: 0 });
  for (let i = 0; i < 5; i++) {
    await store.createNote({ id: `00000000-0000-7000-8000-${String(i + 1).padStart(12, "0")}`, contributorNo, title: `Fell ${i}`, body: i % 2 ? "tarn scree" : "tarn", tags: [], createdAt: i }, () => false);
  }
  const { folded, last } = store.sqlite.query<{ folded: number; last: number }, []>("SELECT terms_seq AS folded, (SELECT max(seq) FROM search_log) AS last FROM search_state").get()!;
  expect(last - folded).toBe(5);
  const applied: boolean[] = [];
  const turn = new WriteTurn();
  const thread = new FoldThread((written) => applied.push(written));
  const count = (term: string) =>
    store.sqlite.query<{ n: number }, [string]>("SELECT coalesce(sum(notes), 0) AS n FROM search_terms WHERE term = ?").get(term)!.n;
  const before = { tarn: count("tarn"), scree: count("scree") };
  try {
    expect(thread.start(join(dir, "cairn.db"), turn)).toBe(true);
    await until(() => thread.running);
    // The writer's turn: the thread prepares, then waits to write.
    expect(turn.tryTake(WRITER)).toBe(true);
    thread.request();
    thread.request(); // one in flight at a time
    await Bun.sleep(100);
    expect(applied).toEqual([]);
    turn.give(WRITER);
    await until(() => applied.length > 0);
    await Bun.sleep(50);
    expect(applied).toEqual([true]);
    const after = store.sqlite.query<{ folded: number }, []>("SELECT terms_seq AS folded FROM search_state").get()!.folded;
    expect(after).toBe(last);
    expect(count("tarn") - before.tarn).toBe(5);
    expect(count("scree") - before.scree).toBe(2);
    expect(folded).toBeLessThan(last);
  } finally {
    await thread.close();
    await store.close();
  }
});

test("a worker that cannot open the database never runs: nothing is asked of it", async () => {
  const applied: boolean[] = [];
  const thread = new FoldThread((written) => applied.push(written));
  expect(thread.start("/nonexistent-cairn-dir/none/cairn.db", new WriteTurn())).toBe(true);
  await Bun.sleep(500);
  expect(thread.running).toBe(false);
  thread.request();
  await Bun.sleep(100);
  expect(applied).toEqual([]);
  await thread.close();
});
