// The in-memory postings on the search thread (src/store/sqlite/search-thread.ts):
// a store's searches and similar-notes lookups are answered there, each
// finding every note committed before it was asked; a thread that ends or
// cannot open its database leaves search on the FTS5 index with the same
// results, and says why; a close never waits on a thread that is gone.
import { afterAll, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { searchRequest } from "../../src/core/search/query.ts";
import { similarCandidates } from "../../src/core/similar.ts";
import { DEFAULT_SEARCH_MEMORY_BYTES } from "../../src/store/sqlite/search.ts";
import { SearchThread } from "../../src/store/sqlite/search-thread.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { tempDir } from "../helpers/server.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function threadedStore() {
  const dir = tempDir("cairn-search-thread-");
  dirs.push(dir);
  const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: DEFAULT_SEARCH_MEMORY_BYTES, searchThread: true });
  await store.migrate();
  const { contributorNo } = await store.createContributor({ email: "t@example.org", keyPrefix: "cairn_tttttt", keyDigest: new Uint8Array(32), createdAt: 0 });
  let n = 0;
  const create = async (title: string, body: string) => {
    const id = `00000000-0000-7000-8000-${String(++n).padStart(12, "0")}`;
    const created = await store.createNote({ id, contributorNo, title, body, tags: ["rock"], createdAt: n }, () => false);
    if (!("id" in created)) throw new Error("unexpected duplicate");
    return id;
  };
  const titles = async (query: string) => (await store.search(searchRequest(query, 10))).map((note) => note.title);
  const similar = async (title: string, body: string) => (await similarCandidates(store, { title, body, tags: [] }, 0.3)).map((found) => found.note.title);
  return { store, contributorNo, create, titles, similar };
}

test("searches, tag words and similar-notes lookups are answered by the search thread, each finding every note committed before it", async () => {
  const { store, create, titles, similar } = await threadedStore();
  try {
    expect(store.searchIndex.postings).toBeInstanceOf(SearchThread);
    expect(store.searchMemoryOffReason).toBeNull();
    for (let i = 0; i < 30; i++) {
      await create(`Moraine ${i}`, `glacial till and moraine ridge number${i}`);
      // Each note is found by the very next query: its vector reached the thread after COMMIT, or the thread read the log.
      expect((await titles(`number${i}`))[0]).toBe(`Moraine ${i}`);
    }
    expect((await titles("moraine tag:rock")).length).toBe(10);
    expect(await titles("moraine tag:sand")).toEqual([]);
    await create("Drumlin field", "a drumlin field shaped by the ice sheet");
    expect(await similar("Drumlin field", "a drumlin field shaped by the ice sheet")).toEqual(["Drumlin field"]);
    expect(store.searchMemoryOffReason).toBeNull();
  } finally {
    await store.close();
  }
});

test("queries asked in one turn are answered together, each with its own answer", async () => {
  const { store, create, titles, similar } = await threadedStore();
  try {
    for (let i = 0; i < 40; i++) await create(`Cirque ${i}`, `a cirque basin below the arete, tarn number${i % 10} ${"ice ".repeat(i % 3)}`);
    const asked = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0 ? () => titles(`number${i % 10} cirque`) : () => similar(`Cirque ${i}`, `a cirque basin below the arete, tarn number${i % 10}`),
    );
    const oneByOne: string[][] = [];
    for (const ask of asked) oneByOne.push(await ask());
    // All asked in one turn: one message to the thread, the answers back in one or a few.
    expect(await Promise.all(asked.map((ask) => ask()))).toEqual(oneByOne);
    expect(new Set(oneByOne.map((answer) => answer.join("|"))).size).toBeGreaterThan(10);
  } finally {
    await store.close();
  }
});

test("a search thread that ends leaves search on the FTS5 index, with the same results, and says why", async () => {
  const { store, create, titles, similar } = await threadedStore();
  try {
    for (let i = 0; i < 12; i++) await create(`Esker ${i}`, `sinuous esker gravel ${"sand ".repeat(i % 4)}`);
    const before = await titles("esker sand");
    const hintsBefore = await similar("Esker 3", "sinuous esker gravel sand sand sand");
    expect(before.length).toBe(10);
    // Ended from outside, as a thread that died would be: no "closed" reply ever comes.
    (store.searchIndex.postings as unknown as { worker: Worker }).worker.terminate();
    const deadline = Date.now() + 5_000;
    while (store.searchMemoryOffReason === null && Date.now() < deadline) await Bun.sleep(10);
    expect(store.searchMemoryOffReason).toBe("the search thread ended");
    expect(await titles("esker sand")).toEqual(before);
    await create("Esker 12", "sinuous esker gravel sand");
    expect(await titles("esker 12")).toContain("Esker 12");
    expect((await similar("Esker 3", "sinuous esker gravel sand sand sand")).slice(0, hintsBefore.length)).toEqual(hintsBefore);
  } finally {
    await store.close();
  }
});

test("a search thread that cannot open its database: start settles, queries answer nothing (FTS5 answers them), the reason is kept", async () => {
  const thread = new SearchThread(join(tempDir("cairn-search-thread-"), "missing", "cairn.db"), DEFAULT_SEARCH_MEMORY_BYTES);
  await thread.start();
  await thread.loaded();
  expect(thread.offReason).toMatch(/^the search thread failed: /);
  expect(await thread.search(["esker"], 10)).toBeNull();
  await thread.close();
});

test("lookups and searches on the search thread give exactly what the postings on the serving thread give", async () => {
  // Two stores on one data directory: one with its postings on this thread, one on the search thread.
  const dir = tempDir("cairn-search-thread-");
  dirs.push(dir);
  const here = new SqliteStore({ dataDir: dir, searchMemoryBytes: DEFAULT_SEARCH_MEMORY_BYTES });
  await here.migrate();
  const threaded = new SqliteStore({ dataDir: dir, searchMemoryBytes: DEFAULT_SEARCH_MEMORY_BYTES, searchThread: true });
  await threaded.migrate();
  try {
    expect(threaded.searchIndex.postings).toBeInstanceOf(SearchThread);
    const { contributorNo } = await here.createContributor({ email: "e@example.org", keyPrefix: "cairn_eeeeee", keyDigest: new Uint8Array(32), createdAt: 0 });
    // A deterministic corpus of skewed word frequencies: common words in most notes, rare ones in few.
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const word = () => `w${Math.floor(200 * next() ** 3)}`;
    const text = (words: number) => Array.from({ length: words }, word).join(" ");
    for (let i = 0; i < 300; i++) {
      const id = `00000000-0000-7000-8000-${String(i + 1).padStart(12, "0")}`;
      const created = await here.createNote({ id, contributorNo, title: text(4), body: text(40), tags: [], createdAt: i }, () => false);
      expect("id" in created).toBe(true);
    }
    const listed = async (store: SqliteStore, title: string, body: string) =>
      (await similarCandidates(store, { title, body, tags: [] }, 0.3)).map((found) => `${found.note.id} ${found.share}`);
    const found = async (store: SqliteStore, query: string) => (await store.search(searchRequest(query, 10))).map((note) => note.id);
    let hinted = 0;
    for (let i = 0; i < 60; i++) {
      const title = text(4);
      const body = text(30);
      const expected = await listed(here, title, body);
      if (expected.length > 0) hinted++;
      expect(await listed(threaded, title, body)).toEqual(expected);
      const query = text(1 + (i % 4));
      expect(await found(threaded, query)).toEqual(await found(here, query));
    }
    // The comparison means something only if lookups list notes.
    expect(hinted).toBeGreaterThan(10);
    expect(here.searchMemoryOffReason).toBeNull();
    expect(threaded.searchMemoryOffReason).toBeNull();
  } finally {
    await threaded.close();
    await here.close();
  }
});

test("a batch's notes are taken without reading the log only when its rows follow the thread's place: another writer's row between two batches is still found", async () => {
  // Two stores on one data directory, as two processes: `threaded` writes in batches; `other` logs a row between two of them.
  const dir = tempDir("cairn-search-thread-");
  dirs.push(dir);
  const threaded = new SqliteStore({ dataDir: dir, searchMemoryBytes: DEFAULT_SEARCH_MEMORY_BYTES, searchThread: true });
  await threaded.migrate();
  await threaded.searchMemoryBuilt();
  const other = new SqliteStore({ dataDir: dir, searchMemoryBytes: 0 });
  await other.migrate();
  try {
    const { contributorNo } = await threaded.createContributor({ email: "i@example.org", keyPrefix: "cairn_iiiiii", keyDigest: new Uint8Array(32), createdAt: 0 });
    const note = (n: number, title: string) => ({ id: `00000000-0000-7000-8000-${String(n).padStart(12, "0")}`, contributorNo, title, body: `${title} body`, tags: [], createdAt: n });
    const titles = async (query: string) => (await threaded.search(searchRequest(query, 10))).map((found) => found.title);
    // Each round with no search between the writes: the thread sees the batches' messages one after another.
    for (let round = 0; round < 3; round++) {
      await threaded.createNote(note(10 * round + 1, `Kame terrace q${round}`), () => false);
      await other.createNote(note(10 * round + 2, `Kettle hole k${round}`), () => false);
      await threaded.createNote(note(10 * round + 3, `Kame delta q${round}`), () => false);
      await threaded.createNote(note(10 * round + 4, `Kame moraine q${round}`), () => false);
      expect(await titles(`k${round}`)).toEqual([`Kettle hole k${round}`]);
      expect((await titles(`q${round}`)).sort()).toEqual([`Kame delta q${round}`, `Kame moraine q${round}`, `Kame terrace q${round}`]);
    }
    expect(threaded.searchMemoryOffReason).toBeNull();
  } finally {
    await other.close();
    await threaded.close();
  }
});

test.skipIf(process.platform !== "linux")("the search thread runs as a batch thread, so a message waking it never preempts the thread serving requests", async () => {
  const { store, create, titles } = await threadedStore();
  try {
    await create("Cirque", "a cirque carved by a glacier");
    expect(await titles("cirque")).toEqual(["Cirque"]);
    const thread = store.searchIndex.postings as SearchThread;
    expect(thread.scheduling?.notBatch).toBeNull();
    // Field 41 of its stat (the policy; sched.h: 0 normal, 3 batch), counted after the command's closing parenthesis.
    const stat = readFileSync(`/proc/self/task/${thread.scheduling!.thread}/stat`, "utf8");
    expect(readFileSync(`/proc/self/task/${thread.scheduling!.thread}/comm`, "utf8").trim()).toBe("Worker");
    expect(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[41 - 3]).toBe("3");
  } finally {
    await store.close();
  }
});
