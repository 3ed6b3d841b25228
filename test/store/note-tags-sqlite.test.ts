// note_tags on SQLite after drizzle/0008_note_tags_one_order: one tag-ordered
// index and no (tag, post_pk) key, so the statement that adds a note's tags is
// what stores each tag of a note once (src/store/sqlite/note-tags.ts). Tag
// words themselves are held by the looped contract and search suites; the
// upgrade from a database that had the key by upgrade-supersede-tags.test.ts.
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { searchRequest } from "../../src/core/search/query.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { tempDir } from "../helpers/server.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

test("a note's tag is stored once, however often its tags are added; the table keeps one tag-ordered index", async () => {
  const dir = tempDir();
  dirs.push(dir);
  const store = new SqliteStore({ dataDir: dir });
  await store.migrate();
  try {
    const { contributorNo } = await store.createContributor({ email: "t@example.org", keyPrefix: "cairn_tttttt", keyDigest: new Uint8Array(32), createdAt: 0 });
    const id = "00000000-0000-7000-8000-000000000001";
    await store.createNote({ id, contributorNo, title: "Tagged once", body: "b", tags: ["ops", "db"], createdAt: 1 }, () => false);
    const { pk } = store.sqlite.query<{ pk: number }, [string]>("SELECT pk FROM posts WHERE id = ?").get(id)!;
    // Added again (a restore, a catch-up), with a repeat and a new tag: only the new tag is a new row.
    store.searchIndex.tags.add(pk, ["db", "ops", "db", "net"], 0, 1);
    const rows = store.sqlite.query<{ tag: string; n: number }, [number]>("SELECT tag, count(*) AS n FROM note_tags WHERE post_pk = ? GROUP BY tag ORDER BY tag").all(pk);
    expect(rows).toEqual([
      { tag: "db", n: 1 },
      { tag: "net", n: 1 },
      { tag: "ops", n: 1 },
    ]);
    expect((await store.search(searchRequest("tag:db tag:ops", 10))).map((n) => n.id)).toEqual([id]);
    const indexes = store.sqlite.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'note_tags' ORDER BY name").all();
    expect(indexes.map((row) => row.name)).toEqual(["note_tags_order", "note_tags_post"]);
    // The supersedes index holds only notes that supersede one, and still refuses a second.
    const entries = store.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM posts INDEXED BY posts_supersedes_unique WHERE supersedes IS NOT NULL").get()!;
    expect(entries.n).toBe(0);
    store.sqlite.exec(`UPDATE posts SET supersedes = 'x' WHERE pk = ${pk}`);
    await store.createNote({ id: "00000000-0000-7000-8000-000000000002", contributorNo, title: "Other", body: "c", tags: [], createdAt: 2 }, () => false);
    expect(() => store.sqlite.exec("UPDATE posts SET supersedes = 'x' WHERE id = '00000000-0000-7000-8000-000000000002'")).toThrow(/UNIQUE/);
  } finally {
    await store.close();
  }
});
