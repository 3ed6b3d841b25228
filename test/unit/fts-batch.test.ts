// The FTS5 changes of a write batch made together before COMMIT
// (src/store/sqlite/fts-batch.ts): what reaches FTS5, in which order, and
// nothing of a write rolled back or of a batch that failed; then the same on a
// real store, with a note added and deleted, and its key taken again, in one batch.
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { analyze } from "../../src/core/search/analyzer.ts";
import { searchRequest } from "../../src/core/search/query.ts";
import { FtsBatch } from "../../src/store/sqlite/fts-batch.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { tempDir } from "../helpers/server.ts";

function recorder() {
  const made: string[] = [];
  const batch = new FtsBatch(
    (pk, columns) => made.push(`insert ${pk} ${columns.join("|")}`),
    (pk) => made.push(`delete ${pk}`),
  );
  return { made, batch };
}

describe("FtsBatch", () => {
  test("outside a batch's write, changes are made at once", () => {
    const { made, batch } = recorder();
    batch.add(1, ["a"]);
    batch.delete(2);
    expect(made).toEqual(["insert 1 a", "delete 2"]);
  });

  test("inside, nothing is made before COMMIT; then deletes of older rows first, a row added and deleted never, a key taken again once", () => {
    const { made, batch } = recorder();
    batch.writeStarted();
    batch.add(10, ["x"]);
    batch.writeEnded(true);
    batch.writeStarted();
    batch.delete(7); // from before the batch
    batch.add(11, ["y"]);
    batch.delete(11); // added and deleted in the batch
    batch.add(11, ["z"]); // its key taken again
    batch.writeEnded(true);
    batch.writeStarted();
    batch.delete(10);
    batch.writeEnded(true);
    expect(made).toEqual([]);
    batch.beforeCommit();
    expect(made).toEqual(["delete 7", "insert 11 z"]);
    batch.beforeCommit();
    expect(made).toEqual(["delete 7", "insert 11 z"]);
  });

  test("a write rolled back, or a batch that failed, leaves nothing", () => {
    const { made, batch } = recorder();
    batch.writeStarted();
    batch.add(1, ["kept"]);
    batch.writeEnded(true);
    batch.writeStarted();
    batch.add(2, ["rolled back"]);
    batch.delete(1);
    batch.writeEnded(false);
    batch.beforeCommit();
    expect(made).toEqual(["insert 1 kept"]);
    batch.writeStarted();
    batch.add(3, ["lost"]);
    batch.writeEnded(true);
    batch.failed();
    batch.beforeCommit();
    expect(made).toEqual(["insert 1 kept"]);
  });
});

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

test("one batch that adds, deletes and takes a key again leaves the FTS5 index as the notes are", async () => {
  const dir = tempDir("cairn-fts-batch-");
  dirs.push(dir);
  const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: 0 });
  await store.migrate();
  const { contributorNo } = await store.createContributor({ email: "f@example.org", keyPrefix: "cairn_ftsb00", keyDigest: new Uint8Array(32), createdAt: 0 });
  let n = 0;
  const note = (title: string, body: string) => ({ id: `00000000-0000-7000-8000-${String(++n).padStart(12, "0")}`, contributorNo, title, body, tags: [], createdAt: n });
  const create = (created: ReturnType<typeof note>) => store.createNote(created, () => false);
  const [x1, x2, x3] = [note("Alpha one", "alpha"), note("Alpha two", "alpha"), note("Alpha three", "alpha")];
  for (const x of [x1, x2, x3]) await create(x);
  const [n1, n2, n3] = [note("Bravo", "bravo"), note("Charlie gone", "charlie"), note("Charlie kept", "charlie delta")];
  // Not awaited in between: one batch. n2 is added and deleted in it, and n3 takes its key.
  await Promise.all([create(n1), store.deleteNote(x3.id, contributorNo), create(n2), store.deleteNote(n2.id, contributorNo), create(n3)]);
  const keys = store.sqlite.query<{ id: string; pk: number }, []>("SELECT id, pk FROM posts").all();
  expect(keys.find((row) => row.id === n3.id)!.pk).toBe(5);
  const titles = async (query: string) => (await store.search(searchRequest(query, 10))).map((found) => found.title).sort();
  expect(await titles("alpha")).toEqual(["Alpha one", "Alpha two"]);
  expect(await titles("bravo")).toEqual(["Bravo"]);
  expect(await titles("charlie")).toEqual(["Charlie kept"]);
  expect(store.searchIndex.memory.offReason).not.toBeNull();
  store.sqlite.exec("INSERT INTO search_fts(search_fts, rank) VALUES ('integrity-check', 0)");
  const matching = (word: string) => store.searchIndex.notesWith({ term: analyze(word)[0], tiers: null }, [], null).sort();
  expect(matching("charlie")).toEqual([5]);
  expect(matching("alpha")).toEqual([1, 2]);
  await store.close();
});
