// Exactness of search (issue: exact top-k). Random corpora (Zipf-like word
// frequencies, bursts of one topic, deletes) go through a real store; every
// random query's served results must equal the top-k of an exhaustive scorer
// written here from the documented ranking function (docs/design.md,
// "Search"): BM25F over the analyzer's terms, ties by net score, then newest.
// Any pool, window or sampled statistic that hides a note fails this test.
// Looped over every engine and both of its search paths: the in-memory
// postings (the default) and the engine's own index alone (SEARCH_MEMORY_MB=0,
// what runs while the postings are built or when they would not fit: FTS5 on
// SQLite, the vectors table on PostgreSQL).
import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { analyze } from "../../src/core/search/analyzer.ts";
import { searchRequest } from "../../src/core/search/query.ts";
import { BM25F } from "../../src/core/search/ranking.ts";
import type { Store } from "../../src/store/types.ts";
import { freshTestDatabase, testEngines, type TestDatabase } from "../helpers/engines.ts";

const databases: TestDatabase[] = [];
afterAll(() => databases.forEach((db) => db.cleanup()));

// Words with a digit are never typo-corrected, so a query word missing from
// the corpus simply matches nothing (the test's scorer does not model typos).
const VOCABULARY = Array.from({ length: 80 }, (_, i) => `w${i}x`);
const zipfWord = (u: number) => VOCABULARY[Math.min(VOCABULARY.length - 1, Math.floor(VOCABULARY.length * u ** 3))];
const words = (n: number, us: number[]) => Array.from({ length: n }, (_, i) => zipfWord(us[i % us.length]));

interface Note {
  title: string;
  tags: string[];
  body: string;
  createdAt: number;
}

const noteArb = (topic: fc.Arbitrary<string>) =>
  fc
    .record({
      titleLength: fc.integer({ min: 1, max: 6 }),
      tagCount: fc.integer({ min: 0, max: 3 }),
      bodyLength: fc.integer({ min: 1, max: 40 }),
      us: fc.array(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), { minLength: 8, maxLength: 8 }),
      topic,
      topicRepeats: fc.integer({ min: 0, max: 4 }),
      age: fc.integer({ min: 0, max: 5 }),
    })
    .map(({ titleLength, tagCount, bodyLength, us, topic, topicRepeats, age }) => ({
      title: words(titleLength, us).join(" "),
      tags: [...new Set(words(tagCount, us.slice(3)))],
      body: [...words(bodyLength, us.slice(1)), ...Array(topicRepeats).fill(topic)].join(" "),
      createdAt: age, // few distinct times: ties on time happen and fall to the key
    }));

const corpusArb = fc.record({
  notes: fc.array(noteArb(fc.constantFrom(...VOCABULARY.slice(40, 45))), { minLength: 1, maxLength: 60 }),
  // A burst: many notes on one topic word, written one after another.
  burst: fc.array(noteArb(fc.constant("w77x")), { maxLength: 25 }),
  deleted: fc.array(fc.nat(), { maxLength: 15 }),
  queries: fc.array(
    fc.record({
      us: fc.array(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), { minLength: 1, maxLength: 6 }),
      limit: fc.integer({ min: 1, max: 10 }),
    }),
    { minLength: 1, maxLength: 8 },
  ),
});

/** BM25F of every note holding a query term, sorted in the documented order. */
function exhaustive(notes: (Note & { pk: number; id: string })[], queryText: string, limit: number): string[] {
  const fields = notes.map((note) => [note.title, note.tags.join(" "), note.body].map(analyze));
  const N = notes.length;
  const averages = [0, 1, 2].map((f) => fields.reduce((sum, fs) => sum + fs[f].length, 0) / N);
  const terms = [...new Set(searchRequest(queryText, limit).words.flatMap(analyze))];
  const holding = (term: string) => fields.filter((fs) => fs.some((f) => f.includes(term))).length;
  const query = terms.filter((term) => holding(term) > 0).map((term) => ({ term, idf: Math.log(1 + (N - holding(term) + 0.5) / (holding(term) + 0.5)) }));
  const scored = notes.flatMap((note, n) => {
    let score = 0;
    let matched = false;
    for (const { term, idf } of query) {
      let weighted = 0;
      for (let f = 0; f < 3; f++) {
        const tf = fields[n][f].filter((t) => t === term).length;
        const b = BM25F.b[f];
        if (tf > 0) weighted += (BM25F.weights[f] * tf) / (1 - b + (b * fields[n][f].length) / averages[f]);
      }
      if (weighted === 0) continue;
      matched = true;
      score += (idf * weighted * (BM25F.k1 + 1)) / (weighted + BM25F.k1);
    }
    return matched ? [{ note, score }] : [];
  });
  scored.sort((a, b) => b.score - a.score || b.note.createdAt - a.note.createdAt || b.note.pk - a.note.pk);
  return scored.slice(0, limit).map((s) => s.note.id);
}

interface Variant {
  engine: ReturnType<typeof testEngines>[number];
  name: string;
  settings: Record<string, string>;
  /** The store must be searching its in-memory postings. */
  memory: boolean;
}
const variants = testEngines().flatMap((engine): Variant[] =>
  engine === "sqlite"
    ? [
        { engine, name: "sqlite, in-memory postings", settings: {}, memory: true },
        { engine, name: "sqlite, FTS5 index alone", settings: { SEARCH_MEMORY_MB: "0" }, memory: false },
      ]
    : [
        { engine, name: `${engine}, in-memory postings`, settings: {}, memory: true },
        { engine, name: `${engine}, the vectors table alone`, settings: { SEARCH_MEMORY_MB: "0" }, memory: false },
      ],
);

for (const { engine, name, settings, memory } of variants) describe(name, () => {
  test("served results are the exhaustive top-k on random corpora (Zipf words, topic bursts, deletes)", async () => {
    await fc.assert(
      fc.asyncProperty(corpusArb, async ({ notes, burst, deleted, queries }) => {
        // A fresh database per corpus: keys start at 1, as the scorer's ties assume.
        const db = await freshTestDatabase(engine, settings);
        databases.push(db);
        const store = db.open();
        try {
          await store.migrate();
          const { contributorNo } = await store.createContributor({ email: "x@example.org", keyPrefix: "cairn_xxxxxx", keyDigest: new Uint8Array(32), createdAt: 0 });
          const live: (Note & { pk: number; id: string })[] = [];
          let pk = 0;
          for (const note of [...notes, ...burst]) {
            pk++;
            const id = `00000000-0000-7000-8000-${String(pk).padStart(12, "0")}`;
            const created = await store.createNote({ id, contributorNo, ...note }, () => false);
            if ("duplicateOf" in created) throw new Error("unexpected duplicate");
            live.push({ ...note, pk, id });
          }
          for (const n of deleted) {
            if (live.length <= 1) break;
            const [gone] = live.splice(n % live.length, 1);
            expect(await store.deleteNote(gone.id, contributorNo)).toBe("deleted");
          }
          if (memory) expect((store as Store & { searchIndex: { memory: { offReason: string | null } } }).searchIndex.memory.offReason).toBeNull();
          else expect(store.searchMemoryOffReason).toBe("SEARCH_MEMORY_MB is 0");
          for (const { us, limit } of queries) {
            const text = words(us.length, us).join(" ");
            const served = (await store.search(searchRequest(text, limit))).map((note) => note.id);
            expect({ text, served }).toEqual({ text, served: exhaustive(live, text, limit) });
          }
        } finally {
          await store.close();
        }
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
