// A plain note create on PostgreSQL is one statement (cairn_create_note,
// drizzle/postgres/0004_create_note.sql) when the replica knows the author's
// newest note; it writes only while that note is still the newest under the
// author's lock, else the general path decides. Two stores on one database
// stand for two replicas; the duplicate rule is the core's (same title, body
// and tags as the author's newest note).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { searchRequest } from "../../src/core/search/query.ts";
import type { NewNote, NoteRecord } from "../../src/store/types.ts";
import { PostgresStore } from "../../src/store/postgres/store.ts";
import { freshDatabase, testEngines } from "../helpers/postgres.ts";

const onPostgres = testEngines().includes("postgres");

describe.skipIf(!onPostgres)("PostgreSQL: a create in one statement", () => {
  let url: string;
  let a: PostgresStore;
  let b: PostgresStore;
  let author: number;
  let n = 0;
  const note = (title: string, tags: string[] = []): NewNote => ({
    id: `00000000-0000-7000-8000-${String(++n).padStart(12, "0")}`,
    contributorNo: author,
    title,
    body: `the body of ${title}`,
    tags,
    createdAt: n,
  });
  /** The core's rule: the same title, body and tags (as a set) as the author's newest note. */
  const create = (store: PostgresStore, made: NewNote) =>
    store.createNote(made, (latest) => latest.title === made.title && latest.body === made.body && latest.tags.length === made.tags.length && made.tags.every((t) => latest.tags.includes(t)));
  const idOf = (outcome: Awaited<ReturnType<typeof create>>) => {
    if (!("id" in outcome)) throw new Error(`not created: ${JSON.stringify(outcome)}`);
    return (outcome as NoteRecord).id;
  };

  beforeAll(async () => {
    url = await freshDatabase("create_fn");
    a = new PostgresStore({ url, poolSize: 4, searchMemoryBytes: 64 * 1024 * 1024 });
    b = new PostgresStore({ url, poolSize: 4, searchMemoryBytes: 64 * 1024 * 1024 });
    await a.migrate();
    await b.migrate();
    ({ contributorNo: author } = await a.createContributor({ email: "c@example.org", keyPrefix: "cairn_cccccc", keyDigest: new Uint8Array(32), createdAt: 0 }));
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  test("a copy of a note another replica wrote since is refused, and after its delete a copy of the note before it", async () => {
    const first = idOf(await create(a, note("Fjord one", ["sea"])));
    const second = await create(a, note("Fjord two", ["sea"])); // a knows its newest: one statement
    expect(await b.getNote(idOf(second))).toEqual(second as NoteRecord);
    const third = note("Fjord three");
    const thirdId = idOf(await create(b, third));
    // a still takes "Fjord two" for the newest; the database says otherwise, and the copy is refused.
    expect(await create(a, { ...note(third.title), body: third.body })).toEqual({ duplicateOf: thirdId });
    expect(await b.deleteNote(thirdId, author)).toBe("deleted");
    // a takes "Fjord three" for the newest; it is gone, and "Fjord two" is the newest again.
    const again = note("Fjord two", ["sea"]);
    expect(await create(a, again)).toEqual({ duplicateOf: idOf(second) });
    expect(idOf(await create(a, note("Fjord four")))).not.toBe(first);
    const summary = await b.contributorSummary(author, 10);
    expect(summary?.recentPosts.map((p) => p.title)).toEqual(["Fjord four", "Fjord two", "Fjord one"]);
  });

  test("the same note sent at once through both replicas, five times each, is created once", async () => {
    // Both replicas know the author's newest note, so each create starts as one statement.
    const base = note("Moraine base");
    const baseId = idOf(await create(a, base));
    expect(await create(b, { ...note(base.title), body: base.body })).toEqual({ duplicateOf: baseId });
    const same = note("Moraine burst", ["ice"]);
    // The author's create lock held meanwhile, so that all ten reach PostgreSQL before any is decided.
    const holder = new Bun.SQL(url, { max: 1 });
    const held = await holder.reserve();
    await held`BEGIN`;
    await held`SELECT pg_advisory_xact_lock(${0x41555448}, ${author})`;
    const racing = Promise.all(Array.from({ length: 10 }, (_, i) => create(i % 2 ? a : b, { ...same, id: note("x").id })));
    await Bun.sleep(200);
    await held`COMMIT`;
    held.release();
    await holder.close();
    const outcomes = await racing;
    const created = outcomes.filter((o) => "id" in o) as NoteRecord[];
    expect(created.length).toBe(1);
    expect(outcomes.filter((o) => "duplicateOf" in o)).toEqual(Array.from({ length: 9 }, () => ({ duplicateOf: created[0].id })));
    // Each replica's search finds the one note (its own write, or the other's within a second).
    for (const store of [a, b]) {
      const deadline = Date.now() + 1_000;
      const found = async () => (await store.search(searchRequest("moraine burst", 10))).map((r) => r.id);
      while ((await found()).length === 0 && Date.now() < deadline) await Bun.sleep(20);
      expect(await found()).toContain(created[0].id);
    }
  });
});
