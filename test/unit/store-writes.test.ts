// Group commit in the SQLite store: concurrent request writes share one
// transaction, in arrival order, each in its own savepoint.
import { expect, test } from "bun:test";
import { uuidv7 } from "../../src/core/ids.ts";
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
  const { store, author } = await freshStore();
  const write = (store as unknown as { write<T>(work: () => T): Promise<T> }).write.bind(store);
  const results = await Promise.allSettled([
    store.createNote(note(author, "kept 1"), () => false),
    write(() => {
      store.sqlite.run("INSERT INTO posts (id, contributor_no, title, body, tags, created_at) VALUES ('x', ?, 't', 'b', '[]', 1)", [author]);
      throw new Error("this job fails after writing");
    }),
    store.createNote(note(author, "kept 2"), () => false),
  ]);
  expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect((await store.counts()).notes).toBe(2);
  expect(store.sqlite.query("SELECT count(*) AS n FROM posts WHERE id = 'x'").get()).toEqual({ n: 0 });
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
  if ("duplicateOf" in created) throw new Error("unexpected duplicate");
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
