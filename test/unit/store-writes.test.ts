// Group commit in the SQLite store: concurrent request writes share one
// transaction, in arrival order, each in its own savepoint.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { uuidv7 } from "../../src/core/ids.ts";
import { GroupCommit } from "../../src/store/sqlite/group-commit.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { tempDir } from "../helpers/server.ts";

async function freshStore() {
  const store = new SqliteStore({ dataDir: tempDir() });
  await store.migrate();
  const author = await store.createContributor({ email: "a@b.c", keyPrefix: "cairn_aaaaaa", keyDigest: new Uint8Array(32), createdAt: 1 });
  return { store, author: author.contributorNo };
}

const note = (contributorNo: number, title: string) => ({ id: uuidv7(), contributorNo, title, body: "body", tags: [], createdAt: Date.now() });
const sameAsLatest = (title: string) => (latest: { title: string }) => latest.title === title;

test("concurrent writes commit together and see each other in arrival order", async () => {
  const { store, author } = await freshStore();
  // Two identical notes in the same batch: the second sees the first and is a duplicate.
  const [first, second, third] = await Promise.all([
    store.createNote(note(author, "same"), sameAsLatest("same")),
    store.createNote(note(author, "same"), sameAsLatest("same")),
    store.createNote(note(author, "other"), sameAsLatest("other")),
  ]);
  expect(first).not.toHaveProperty("duplicateOf");
  expect(second).toEqual({ duplicateOf: (first as { id: string }).id });
  expect(third).not.toHaveProperty("duplicateOf");
  expect((await store.counts()).notes).toBe(2);
});

test("a failing write rolls back alone; the rest of its batch commits", async () => {
  const sqlite = new Database(":memory:");
  sqlite.exec("CREATE TABLE t (v TEXT)");
  const batches: string[] = [];
  const commit = new GroupCommit(sqlite, { committed: () => batches.push("committed"), failed: () => batches.push("failed") });
  const insert = (v: string) => () => sqlite.run("INSERT INTO t (v) VALUES (?)", [v]);
  const results = await Promise.allSettled([
    commit.write(insert("kept 1")),
    commit.write(() => {
      insert("x")();
      throw new Error("this job fails after writing");
    }),
    commit.write(insert("kept 2")),
  ]);
  expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect(batches).toEqual(["committed"]);
  expect(sqlite.query("SELECT v FROM t ORDER BY rowid").all()).toEqual([{ v: "kept 1" }, { v: "kept 2" }]);
});

test("a batch that cannot start (database locked) fails every job in it, and the store recovers", async () => {
  const { store, author } = await freshStore();
  const dir = (store.sqlite.filename as string).replace(/\/cairn\.db$/, "");
  const other = new SqliteStore({ dataDir: dir });
  store.sqlite.exec("PRAGMA busy_timeout = 20");
  other.sqlite.exec("BEGIN IMMEDIATE");
  const locked = await Promise.allSettled([store.createNote(note(author, "a"), () => false), store.createNote(note(author, "b"), () => false)]);
  expect(locked.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  expect(store.isUnavailable((locked[0] as PromiseRejectedResult).reason)).toBe(true);
  other.sqlite.exec("ROLLBACK");
  expect(await store.createNote(note(author, "c"), () => false)).not.toHaveProperty("duplicateOf");
});

test("a cached note never serves a stale score, comment count or deleted note", async () => {
  const { store, author } = await freshStore();
  const voter = await store.createContributor({ email: "v@b.c", keyPrefix: "cairn_bbbbbb", keyDigest: new Uint8Array(32), createdAt: 1 });
  const created = await store.createNote(note(author, "cached"), () => false);
  if (!("id" in created)) throw new Error("unexpected duplicate");
  expect((await store.getNote(created.id))?.score).toBe(0); // now cached
  await store.setVote(created.id, voter.contributorNo, 1, 2);
  expect((await store.getNote(created.id))?.score).toBe(1);
  await store.addComment(created.id, { contributorNo: voter.contributorNo, body: "hi", createdAt: 3 });
  expect((await store.getNote(created.id))?.commentCount).toBe(1);
  await store.setVote(created.id, voter.contributorNo, -1, 4);
  expect((await store.getNote(created.id))?.score).toBe(-1);
  expect(await store.deleteNote(created.id, author)).toBe("deleted");
  expect(await store.getNote(created.id)).toBeNull();
});
