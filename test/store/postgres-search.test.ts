// The in-memory postings of the PostgreSQL engine (issue 20; docs/design.md,
// "Search"): each replica follows search_log in commit order, which is not
// sequence order when transactions commit concurrently; a replica started on
// an existing database answers exactly from the table while it builds; a
// replica whose place was trimmed from the log builds again. Two stores on
// one database stand for two replicas.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { searchRequest } from "../../src/core/search/query.ts";
import { similarCandidates } from "../../src/core/similar.ts";
import { migrations } from "../../src/store/postgres/migrations.ts";
import { PostgresSearchLog, trimLog } from "../../src/store/postgres/search-log.ts";
import { noteVector, SEARCH_FOLLOW_MS } from "../../src/store/postgres/search.ts";
import { PostgresStore } from "../../src/store/postgres/store.ts";
import { freshDatabase, testEngines } from "../helpers/postgres.ts";

const MEMORY = 256 * 1024 * 1024;
const onPostgres = testEngines().includes("postgres");

describe.skipIf(!onPostgres)("PostgreSQL: in-memory postings following search_log", () => {
  let url: string;
  let writer: PostgresStore;
  let contributorNo: number;
  let n = 0;
  const stores: PostgresStore[] = [];
  const open = async (searchMemoryBytes = MEMORY) => {
    const store = new PostgresStore({ url, poolSize: 4, searchMemoryBytes });
    stores.push(store);
    await store.migrate();
    return store;
  };
  const create = async (title: string, body: string) => {
    const id = `00000000-0000-7000-8000-${String(++n).padStart(12, "0")}`;
    const created = await writer.createNote({ id, contributorNo, title, body, tags: [], createdAt: n }, () => false);
    if ("duplicateOf" in created) throw new Error("unexpected duplicate");
    return id;
  };
  const titles = async (store: PostgresStore, query: string, limit = 10) => (await store.search(searchRequest(query, limit))).map((note) => note.title);

  beforeAll(async () => {
    url = await freshDatabase("follower");
    writer = await open();
    ({ contributorNo } = await writer.createContributor({ email: "f@example.org", keyPrefix: "cairn_ffffff", keyDigest: new Uint8Array(32), createdAt: 0 }));
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
  });

  test("a transaction that took its log row first but committed last is still followed (commit order, not sequence order)", async () => {
    const reader = await open();
    const client = new Bun.SQL(url, { max: 2 });
    try {
      const early = await client.reserve();
      const late = await client.reserve();
      const insert = async (sql: typeof early, title: string) => {
        const pk = 900_000 + ++n;
        await sql`INSERT INTO posts (pk, id, contributor_no, title, body, created_at) OVERRIDING SYSTEM VALUE VALUES (${pk}, ${`manual-${pk}`}, ${contributorNo}, ${title}, 'body', ${n})`;
        await sql`INSERT INTO search_vectors (pk, vector) VALUES (${pk}, ${noteVector(title, [], "body")})`;
        await sql`INSERT INTO search_log (pk) VALUES (${pk})`;
      };
      await early`BEGIN`;
      await insert(early, "Moraine early");
      await late`BEGIN`;
      await insert(late, "Moraine late");
      await late`COMMIT`;
      // The reader reads past the early transaction's smaller seq while it is still open.
      await reader.searchIndex.memory.follow();
      expect(await titles(reader, "moraine")).toEqual(["Moraine late"]);
      await early`COMMIT`;
      await reader.searchIndex.memory.follow();
      expect((await titles(reader, "moraine")).sort()).toEqual(["Moraine early", "Moraine late"]);
      early.release();
      late.release();
    } finally {
      await client.close();
    }
  });

  test("own writes are searchable on the next search; another store's within a second, deletes too", async () => {
    const other = await open();
    const id = await create("Drumlin field", "an oval hill of till");
    expect(await titles(writer, "drumlin")).toEqual(["Drumlin field"]);
    const deadline = Date.now() + 1_000;
    while ((await titles(other, "drumlin")).length === 0 && Date.now() < deadline) await Bun.sleep(20);
    expect(await titles(other, "drumlin")).toEqual(["Drumlin field"]);
    expect(await writer.deleteNote(id, contributorNo)).toBe("deleted");
    expect(await titles(writer, "drumlin")).toEqual([]);
    const gone = Date.now() + 1_000;
    while ((await titles(other, "drumlin")).length > 0 && Date.now() < gone) await Bun.sleep(20);
    expect(await titles(other, "drumlin")).toEqual([]);
  });

  test("a store's own new notes are in its postings at commit, without a log read; the read that names them later keeps each once, and drops one another store deleted meanwhile", async () => {
    const other = await open();
    const memory = writer.searchIndex.memory;
    await memory.follow();
    // The follower's timer stopped (it reads the log every SEARCH_FOLLOW_MS whatever happens, and
    // fired between the creates on a loaded host): only reads the writes or searches ask for count.
    const follower = memory as unknown as { timer: ReturnType<typeof setInterval> | null };
    if (follower.timer) clearInterval(follower.timer);
    follower.timer = null;
    // Counts this store's reads of the log from here on.
    const log = (memory as unknown as { log: { changesSince: (...args: unknown[]) => unknown } }).log;
    const read = log.changesSince.bind(log);
    let reads = 0;
    log.changesSince = (...args: unknown[]) => {
      reads++;
      return read(...args);
    };
    try {
      const before = (await memory.current())!.notes;
      const readsBefore = reads;
      const kept = await create("Esker ridge", "a winding ridge of gravel");
      const gone = await create("Esker delta", "gravel laid down by a stream");
      const index = (await memory.current())!;
      expect(reads).toBe(readsBefore);
      expect(index.notes).toBe(before + 2);
      expect((await titles(writer, "esker")).sort()).toEqual(["Esker delta", "Esker ridge"]);
      // Deleted through another store before this one read the log: its next read takes the note out.
      expect(await other.deleteNote(gone, contributorNo)).toBe("deleted");
      await memory.follow();
      expect(reads).toBeGreaterThan(readsBefore);
      expect(await titles(writer, "esker")).toEqual(["Esker ridge"]);
      expect((await memory.current())!.notes).toBe(before + 1);
      // Read again (nothing new): still once.
      await memory.follow();
      expect((await memory.current())!.notes).toBe(before + 1);
      expect(await writer.deleteNote(kept, contributorNo)).toBe("deleted");
      expect(await titles(writer, "esker")).toEqual([]);
      expect((await memory.current())!.notes).toBe(before);
    } finally {
      log.changesSince = read;
      follower.timer = setInterval(() => void memory.follow().catch(() => {}), SEARCH_FOLLOW_MS);
      follower.timer.unref?.();
    }
  });

  // Cairn never hands a row id out twice on PostgreSQL (an identity column),
  // but a row typed into psql can take one again: a store must then hold the
  // vector the log's last add names, not the one its own write indexed.
  test("a note of this store's deleted elsewhere and its row id taken by another note before this store read the log: the postings hold the other note", async () => {
    const client = new Bun.SQL(url, { max: 1 });
    const memory = writer.searchIndex.memory;
    try {
      await memory.follow();
      const before = (await memory.current())!.notes;
      const retake = async (id: string, title: string) => {
        await client.begin(async (tx) => {
          const [{ pk }] = (await tx`SELECT pk FROM posts WHERE id = ${id}`) as { pk: string }[];
          await tx`DELETE FROM posts WHERE pk = ${pk}`;
          await tx`WITH v AS (DELETE FROM search_vectors WHERE pk = ${pk} RETURNING pk, vector) INSERT INTO search_log (pk, removed) SELECT pk, vector FROM v`;
          await tx`INSERT INTO posts (pk, id, contributor_no, title, body, created_at) OVERRIDING SYSTEM VALUE VALUES (${pk}, ${`manual-${pk}`}, ${contributorNo}, ${title}, 'body', ${++n})`;
          await tx`INSERT INTO search_vectors (pk, vector) VALUES (${pk}, ${noteVector(title, [], "body")})`;
          await tx`INSERT INTO search_log (pk) VALUES (${pk})`;
        });
      };
      // A plain create (indexed at commit) and a create that supersedes (indexed from the log).
      await retake(await create("Kame terrace", "sand by the ice"), "Moulin shaft");
      const older = await create("Pingo mound", "ice under a hill");
      const newer = `00000000-0000-7000-8000-${String(++n).padStart(12, "0")}`;
      const made = await writer.createNote({ id: newer, contributorNo, title: "Pingo collapse", body: "a ring of ramparts", tags: [], createdAt: n, supersedes: older }, () => false);
      expect("id" in made).toBe(true);
      await retake(newer, "Nunatak peak");
      await memory.follow();
      expect(await titles(writer, "kame")).toEqual([]);
      expect(await titles(writer, "moulin")).toEqual(["Moulin shaft"]);
      expect(await titles(writer, "pingo")).toEqual([]);
      expect(await titles(writer, "nunatak")).toEqual(["Nunatak peak"]);
      expect((await memory.current())!.notes).toBe(before + 2);
    } finally {
      await client.close();
    }
  });

  test("a store started on an existing database answers exactly from the table while it builds, then from memory", async () => {
    // More notes than a build done before migrate() returns: written by SQL, as a copy or an older release leaves them.
    const client = new Bun.SQL(url, { max: 1 });
    const rows = Array.from({ length: 6_000 }, (_, i) => {
      const title = `Esker ${i}`;
      const body = `glacial ridge ${i % 7 === 0 ? "kame" : "gravel"} ${i % 13 === 0 ? "kame kame" : ""} number ${i}`;
      return { pk: 100_000 + i, id: `esker-${i}`, title, body, vector: noteVector(title, [], body) };
    });
    await client`INSERT INTO posts (pk, id, contributor_no, title, body, created_at) OVERRIDING SYSTEM VALUE
                 SELECT (e ->> 'pk')::bigint, e ->> 'id', ${contributorNo}, e ->> 'title', e ->> 'body', 1 FROM jsonb_array_elements(${JSON.stringify(rows)}::text::jsonb) e`;
    await client`INSERT INTO search_vectors (pk, vector) SELECT (e ->> 'pk')::bigint, e ->> 'vector' FROM jsonb_array_elements(${JSON.stringify(rows)}::text::jsonb) e`;
    await client.close();

    const reference = await open(0); // the table alone, throughout
    const late = await open();
    expect(late.searchMemoryOffReason).toMatch(/being built/);
    const during = await titles(late, "kame ridge", 10);
    expect(during).toEqual(await titles(reference, "kame ridge", 10));
    expect(during.length).toBe(10);
    await late.searchMemoryBuilt();
    expect(late.searchMemoryOffReason).toBeNull();
    expect(await titles(late, "kame ridge", 10)).toEqual(during);
    expect(await titles(late, "eskr", 3)).toEqual(await titles(reference, "eskr", 3)); // typo correction from memory and from the table agree
  }, 60_000);

  test("a store more than a page of the log behind reads every page, with one transaction's rows split across pages", async () => {
    // Three transactions of 2,200 notes each (a page is 5,000 rows): the second page starts inside the third transaction.
    const client = new Bun.SQL(url, { max: 1 });
    const pks: number[] = [];
    try {
      const [{ from }] = (await client`SELECT pg_current_snapshot()::text AS from`) as { from: string }[];
      for (let t = 0; t < 3; t++) {
        const rows = Array.from({ length: 2_200 }, (_, i) => {
          const pk = 200_000 + t * 2_200 + i;
          pks.push(pk);
          return { pk, id: `cirque-${pk}`, title: `Cirque ${pk}`, vector: noteVector(`Cirque ${pk}`, [], "a bowl carved by ice") };
        });
        const batch = JSON.stringify(rows);
        await client`
          WITH rows AS (SELECT (e ->> 'pk')::bigint AS pk, e ->> 'id' AS id, e ->> 'title' AS title, e ->> 'vector' AS vector FROM jsonb_array_elements(${batch}::text::jsonb) e),
               note AS (INSERT INTO posts (pk, id, contributor_no, title, body, created_at) OVERRIDING SYSTEM VALUE
                        SELECT pk, id, ${contributorNo}, title, 'a bowl carved by ice', 1 FROM rows RETURNING pk),
               vector AS (INSERT INTO search_vectors (pk, vector) SELECT pk, vector FROM rows)
          INSERT INTO search_log (pk) SELECT pk FROM note ORDER BY pk`;
      }
      const read = await new PostgresSearchLog(client).changesSince(from, new Map());
      const added = new Map(read!.changes.map((change) => [change.key, change.added]));
      expect(added.size).toBe(pks.length);
      expect(pks.filter((pk) => added.get(pk) !== noteVector(`Cirque ${pk}`, [], "a bowl carved by ice"))).toEqual([]);
    } finally {
      await client.close();
    }
  }, 60_000);

  test("a store whose place in the log was trimmed builds again and misses nothing", async () => {
    const behind = await open();
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await create(`Tarn ${i}`, `mountain lake ${i}`));
    const client = new Bun.SQL(url, { max: 1 });
    const [{ seq }] = (await client`SELECT max(seq)::int AS seq FROM search_log`) as { seq: number }[];
    // Trimmed to the last row: unless its timer read them first, `behind` finds its place gone and builds again.
    await trimLog(client, seq, 1);
    await client.close();
    await behind.searchIndex.memory.follow();
    expect((await titles(behind, "tarn")).length).toBe(6); // from the table while it builds again, or from memory
    await behind.searchMemoryBuilt();
    expect(behind.searchMemoryOffReason).toBeNull();
    expect((await titles(behind, "tarn")).length).toBe(6);
  });

  test("a note another store superseded is never in this store's results or similar listing, even before this store follows the supersede", async () => {
    const other = await open();
    await other.searchMemoryBuilt();
    const similarTitles = async (title: string, body: string) => (await similarCandidates(other, { title, body, tags: [] }, 0.3)).map((found) => found.note.title);
    // Rounds, each checked right after the supersede commits: the other store follows the log every SEARCH_FOLLOW_MS, so most checks run before it does.
    for (let round = 0; round < 4; round++) {
      const title = `Kettle hole ${round}`;
      const body = `a kettle hole round${round} left by a melting block of stagnant ice`;
      const older = await create(title, body);
      const deadline = Date.now() + 1_000;
      while (!(await titles(other, `kettle round${round}`)).includes(title) && Date.now() < deadline) await Bun.sleep(10);
      expect(await titles(other, `kettle round${round}`)).toEqual([title]);
      expect(await similarTitles(title, body)).toEqual([title]);
      const newer = `00000000-0000-7000-8000-${String(++n).padStart(12, "0")}`;
      const created = await writer.createNote({ id: newer, contributorNo, title: `Esker ${round}`, body: "a ridge of gravel laid by a river under the ice", tags: [], createdAt: n, supersedes: older }, () => false);
      expect(created).toMatchObject({ id: newer });
      expect(await titles(other, `kettle round${round}`)).toEqual([]);
      expect(await similarTitles(title, body)).toEqual([]);
    }
  });

  test("a database written by the release before 0003_search_log keeps its notes searchable after the upgrade", async () => {
    const older = await freshDatabase("upgrade");
    const client = new Bun.SQL(older, { max: 1 });
    const [init] = migrations;
    expect(init.tag).toBe("0000_init");
    await client.begin(async (tx) => {
      for (const statement of init.statements) await tx.unsafe(statement);
      await tx.unsafe("CREATE TABLE __drizzle_migrations (id serial PRIMARY KEY, hash text NOT NULL, created_at bigint)");
      await tx`INSERT INTO __drizzle_migrations (hash, created_at) VALUES (${init.hash}, ${init.createdAt})`;
      await tx`INSERT INTO contributors (email, key_prefix, key_digest, created_at) VALUES ('u@example.org', 'cairn_uuuuuu', '\\x00', 0)`;
      // As the older release indexed a note: its vector beside its per-term rows.
      await tx`INSERT INTO posts (id, contributor_no, title, body, created_at) VALUES ('old-note', 1, 'Nunatak above the ice', 'a peak through the ice sheet', 1)`;
      await tx`INSERT INTO search_vectors (pk, vector) VALUES (1, ${noteVector("Nunatak above the ice", [], "a peak through the ice sheet")})`;
      await tx`INSERT INTO search_postings (term, tier, pk) VALUES ('nunatak', 8, 1)`;
    });
    const upgraded = new PostgresStore({ url: older, poolSize: 2, searchMemoryBytes: MEMORY });
    stores.push(upgraded);
    await upgraded.migrate();
    const tables = (await client`SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'search%' ORDER BY 1`) as { table_name: string }[];
    await client.close();
    expect(tables.map((t) => t.table_name)).toEqual(["search_log", "search_log_trim", "search_vectors"]);
    expect(upgraded.searchMemoryOffReason).toBeNull();
    expect((await upgraded.search(searchRequest("nunatak", 10))).map((note) => note.id)).toEqual(["old-note"]);
  });
});
