// search_totals (the corpus sizes the ranking reads) change once per write
// batch, before its COMMIT (src/store/sqlite/search.ts): a write of the batch
// that is rolled back to its savepoint adds nothing, a batch that fails adds
// nothing, and the totals always equal the sums over the stored vectors.
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { readLengths } from "../../src/core/search/vector.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { tempDir } from "../helpers/server.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function expectTotalsMatchVectors(store: SqliteStore): void {
  const sums = [0, 0, 0, 0];
  for (const { vector } of store.sqlite.query<{ vector: string }, []>("SELECT vector FROM search_vectors").all()) {
    sums[0]++;
    readLengths(vector).forEach((length, field) => (sums[field + 1] += length));
  }
  const totals = store.sqlite.query<{ notes: number; t: number; g: number; b: number }, []>(
    "SELECT notes, title_terms AS t, tag_terms AS g, body_terms AS b FROM search_totals",
  ).get()!;
  expect([totals.notes, totals.t, totals.g, totals.b]).toEqual(sums);
  expect(totals.notes).toBe(store.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM posts WHERE superseded_by IS NULL").get()!.n);
}

test("a batch's totals count its writes that were kept, and only those", async () => {
  const dir = tempDir("cairn-totals-");
  dirs.push(dir);
  const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: 0 });
  await store.migrate();
  const { contributorNo } = await store.createContributor({ email: "t@example.org", keyPrefix: "cairn_tot000", keyDigest: new Uint8Array(32), createdAt: 0 });
  const id = (n: number) => `00000000-0000-7000-8000-${String(n).padStart(12, "0")}`;
  const note = (n: number, body: string, tags: string[] = []) => ({ id: id(n), contributorNo, title: `Title ${n} words`, body, tags, createdAt: n });
  const create = (created: ReturnType<typeof note>) => store.createNote(created, () => false);
  await create(note(1, "first body of words", ["a"]));
  // One batch: the second write reuses an id, so its INSERT fails and it is rolled back to its savepoint.
  const outcomes = await Promise.allSettled([
    create(note(2, "second body", ["b", "c"])),
    create({ ...note(3, "a body that is never stored, with many more words in it than the others", ["x"]), id: id(2) }),
    create(note(4, "fourth", [])),
    store.deleteNote(id(1), contributorNo),
  ]);
  expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
  expectTotalsMatchVectors(store);
  // A write that indexed a note and then failed, between two that are kept, in one batch.
  const commit = (store as unknown as { commit: { write<T>(work: () => T): Promise<T> } }).commit;
  const failing = commit.write(() => {
    store.searchIndex.add({ pk: 999, title: "Ghost title", tags: ["g"], body: "a ghost body that is rolled back" });
    throw new Error("rolled back");
  });
  const kept = await Promise.allSettled([create(note(6, "sixth", ["e"])), failing, create(note(7, "seventh body", []))]);
  expect(kept.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expectTotalsMatchVectors(store);
  // A superseding note: the older one leaves the index in the same write.
  await create({ ...note(5, "fifth replaces the fourth", ["d"]), supersedes: id(4) } as ReturnType<typeof note>);
  expectTotalsMatchVectors(store);
  await store.close();
});
