// The PostgreSQL engine's note views (issue 20; docs/design.md, "Notes, votes,
// comments"): a store answers a note from memory only while note_log says it
// is current (within the lease), and reads the log with every key read. Two stores on one
// database stand for two replicas; the log is read in commit order, which is
// not sequence order when transactions commit concurrently; a store whose
// place was trimmed from the log forgets every view.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KEY_CHANGE_WAIT_MS, trimNoteLog } from "../../src/store/postgres/note-log.ts";
import { LOG_LEASE_MS } from "../../src/store/postgres/note-views.ts";
import { PostgresStore } from "../../src/store/postgres/store.ts";
import { freshDatabase, testEngines } from "../helpers/postgres.ts";

const onPostgres = testEngines().includes("postgres");
const PREFIX = "cairn_vvvvvv";

describe.skipIf(!onPostgres)("PostgreSQL: note views following note_log", () => {
  let url: string;
  let writer: PostgresStore;
  let contributorNo: number;
  let n = 0;
  const stores: PostgresStore[] = [];
  const open = async () => {
    const store = new PostgresStore({ url, poolSize: 4 });
    stores.push(store);
    await store.migrate();
    return store;
  };
  const create = async () => {
    const id = `00000000-0000-7000-9000-${String(++n).padStart(12, "0")}`;
    const created = await writer.createNote({ id, contributorNo, title: `View ${n}`, body: "held in memory", tags: [], createdAt: n }, () => false);
    if ("duplicateOf" in created) throw new Error("unexpected duplicate");
    return id;
  };
  /** What a keyed GET does: the key read (which reads the log), then the note. */
  const keyedGet = async (store: PostgresStore, id: string) => {
    await store.keyCandidates(PREFIX);
    return store.getNote(id);
  };

  beforeAll(async () => {
    url = await freshDatabase("views");
    writer = await open();
    ({ contributorNo } = await writer.createContributor({ email: "v@example.org", keyPrefix: PREFIX, keyDigest: new Uint8Array(32), createdAt: 0 }));
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
  });

  test("a replica following the log keeps its lease on a connection of its own, and with a pool of one connection reserves none (reads, writes and key reads all answer)", async () => {
    for (const poolSize of [1, 2]) {
      const store = new PostgresStore({ url, poolSize });
      stores.push(store);
      await store.migrate();
      store.keyGeneration(); // starts following the log, as a serving replica does
      await Bun.sleep(120);
      expect(Number.isNaN(store.keyGeneration())).toBe(false);
      const id = `00000000-0000-7000-9000-${String(++n).padStart(12, "0")}`;
      const created = await store.createNote({ id, contributorNo, title: `Pool ${poolSize}`, body: "one connection or two", tags: [], createdAt: n }, () => false);
      expect("id" in created).toBe(true);
      const [candidates, note] = await Promise.all([store.keyCandidates(PREFIX), store.getNote(id), store.deleteNote(id, contributorNo)]);
      expect(candidates.length).toBe(1);
      expect(note === null || note.id === id).toBe(true);
      expect(Number.isNaN(store.keyGeneration())).toBe(false);
    }
  });

  test("a transaction that logged first but committed last is still seen (commit order, not sequence order)", async () => {
    const reader = await open();
    const [first, second] = [await create(), await create()];
    for (const id of [first, second]) for (let i = 0; i < 2; i++) expect((await keyedGet(reader, id))!.score).toBe(0);
    const client = new Bun.SQL(url, { max: 2 });
    try {
      const early = await client.reserve();
      const late = await client.reserve();
      await early`BEGIN`;
      await early`UPDATE posts SET score = 5 WHERE id = ${first}`; // its log row takes the smaller seq
      await late`BEGIN`;
      await late`UPDATE posts SET score = 7 WHERE id = ${second}`;
      await late`COMMIT`;
      expect((await keyedGet(reader, second))!.score).toBe(7);
      expect((await keyedGet(reader, first))!.score).toBe(0); // not committed yet
      await early`COMMIT`;
      expect((await keyedGet(reader, first))!.score).toBe(5);
      early.release();
      late.release();
    } finally {
      await client.close();
    }
  });

  test("a store whose place in the log was trimmed forgets every view", async () => {
    const behind = await open();
    const id = await create();
    for (let i = 0; i < 2; i++) expect((await keyedGet(behind, id))!.score).toBe(0);
    const client = new Bun.SQL(url, { max: 1 });
    try {
      // A change, then a trim of every row but the newest (a later one): the change's row is gone from the log.
      await client`UPDATE posts SET score = 3 WHERE id = ${id}`;
      await client`INSERT INTO note_log (id) VALUES ('another-note')`;
      const [{ seq }] = (await client`SELECT max(seq)::int AS seq FROM note_log`) as { seq: number }[];
      await trimNoteLog(client, seq, 1);
      expect(((await client`SELECT count(*)::int AS n FROM note_log WHERE id = ${id}`) as { n: number }[])[0].n).toBe(0);
    } finally {
      await client.close();
    }
    expect((await keyedGet(behind, id))!.score).toBe(3);
  });

  test("a note deleted through another store is gone from this one's next keyed read; a note read without a key after a while is read again", async () => {
    const reader = await open();
    const id = await create();
    for (let i = 0; i < 2; i++) expect((await keyedGet(reader, id))!.id).toBe(id);
    expect(await writer.deleteNote(id, contributorNo)).toBe("deleted");
    expect(await keyedGet(reader, id)).toBeNull();
    const other = await create();
    expect((await keyedGet(reader, other))!.score).toBe(0);
    const client = new Bun.SQL(url, { max: 1 });
    await client`UPDATE posts SET score = 9 WHERE id = ${other}`;
    await client.close();
    await Bun.sleep(LOG_LEASE_MS + 50); // past the lease (this store reads the log on no timer: nothing asked its keyGeneration)
    expect((await reader.getNote(other))!.score).toBe(9);
  });

  test("a key change through one store answers only once every other store's key generation has moved (or its lease is gone)", async () => {
    const serving = await open();
    const { contributorNo: who } = await writer.createContributor({ email: "k@example.org", keyPrefix: "cairn_kkkkkk", keyDigest: new Uint8Array(32), createdAt: 0 });
    serving.keyGeneration(); // starts its reads of the log on a timer, as a serving replica's first keyed request does
    const deadline = Date.now() + 2_000;
    while (Number.isNaN(serving.keyGeneration()) && Date.now() < deadline) await Bun.sleep(10);
    const before = serving.keyGeneration();
    expect(Number.isNaN(before)).toBe(false);
    const started = performance.now();
    expect(await writer.setActive(who, false)).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(KEY_CHANGE_WAIT_MS - 1);
    const moved = (from: number) => {
      const now = serving.keyGeneration();
      return Number.isNaN(now) || now !== from; // NaN: outside its lease, it remembers no key
    };
    expect(moved(before)).toBe(true);
    const rotated = performance.now();
    const after = serving.keyGeneration();
    expect(await writer.replaceKey(contributorNo, "cairn_rrrrrr", new Uint8Array(32))).toBe(true);
    expect(performance.now() - rotated).toBeGreaterThanOrEqual(KEY_CHANGE_WAIT_MS - 1);
    expect(moved(after)).toBe(true);
  });
});
