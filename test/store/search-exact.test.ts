// Exactness of search (issue: exact top-k). Random corpora (Zipf-like word
// frequencies, bursts of one topic, votes, notes superseding others, deletes
// of either end) go through a real store; every
// random query's served results must equal the top-k of an exhaustive scorer
// written here from the documented ranking function (docs/design.md,
// "Search"): BM25F over the analyzer's terms, ties by net score, then newest;
// tag words (`tag:NAME`) keep the notes carrying every tag, and a query of tag
// words alone lists them by net score, then newest; superseded notes are in
// neither the results nor the corpus statistics.
// Any pool, window or sampled statistic that hides a note fails this test.
// Looped over every engine and its search paths: the in-memory postings (the
// default; on SQLite on the search thread, and on the serving thread with
// SEARCH_THREAD=0) and the engine's own index alone (SEARCH_MEMORY_MB=0,
// what runs while the postings are built or when they would not fit: FTS5 on
// SQLite, the vectors table on PostgreSQL).
import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { analyze } from "../../src/core/search/analyzer.ts";
import { searchRequest } from "../../src/core/search/query.ts";
import { BM25F } from "../../src/core/search/ranking.ts";
import type { Store } from "../../src/store/types.ts";
import { SearchThread } from "../../src/store/sqlite/search-thread.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { freshTestDatabase, testEngines, type TestDatabase } from "../helpers/engines.ts";

const databases: TestDatabase[] = [];
afterAll(() => databases.forEach((db) => db.cleanup()));

// Words with a digit are never typo-corrected, so a query word missing from
// the corpus simply matches nothing (the test's scorer does not model typos).
const VOCABULARY = Array.from({ length: 80 }, (_, i) => `w${i}x`);
/** Words only some notes hold: the topic words (below) and the burst's. */
const TOPIC_WORDS = [...VOCABULARY.slice(40, 45), "w77x"];
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

const unit = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });
const corpusArb = fc.record({
  notes: fc.array(noteArb(fc.constantFrom(...TOPIC_WORDS.slice(0, 5))), { minLength: 1, maxLength: 60 }),
  // A burst: many notes on one topic word, written one after another.
  burst: fc.array(noteArb(fc.constant("w77x")), { maxLength: 25 }),
  // Per note written, maybe the earlier note (among those not superseded yet) it supersedes.
  supersedes: fc.array(fc.option(fc.nat(), { freq: 4 }), { maxLength: 85 }),
  votes: fc.array(fc.record({ note: fc.nat(), value: fc.constantFrom(1 as const, -1 as const) }), { maxLength: 30 }),
  deleted: fc.array(fc.nat(), { maxLength: 15 }),
  queries: fc.array(
    fc.record({
      us: fc.array(unit, { minLength: 1, maxLength: 6 }),
      // Tag words (Zipf-drawn tags, so common and rare ones), and whether the query is tag words alone.
      tags: fc.array(unit, { maxLength: 2 }),
      tagsOnly: fc.boolean(),
      // A topic word alone: with a common tag, fewer notes hold the word than carry the tag (the tagged notes are then not scored one by one).
      topicWord: fc.option(fc.constantFrom(...TOPIC_WORDS)),
      limit: fc.integer({ min: 1, max: 10 }),
    }),
    { minLength: 1, maxLength: 8 },
  ),
});

interface Stored extends Note {
  pk: number;
  id: string;
  net: number;
  supersedes: string | null;
  supersededBy: string | null;
}

/** The served results as documented, computed over every searchable note: tag words filter, BM25F ranks (or net score for tag words alone). */
function exhaustive(notes: Stored[], queryText: string, limit: number): string[] {
  const { words, tags } = searchRequest(queryText, limit);
  const tagged = (note: Stored) => tags.every((tag) => note.tags.includes(tag));
  if (words.length === 0) {
    const listed = tags.length === 0 ? [] : notes.filter(tagged);
    listed.sort((a, b) => b.net - a.net || b.createdAt - a.createdAt || b.pk - a.pk);
    return listed.slice(0, limit).map((note) => note.id);
  }
  const fields = notes.map((note) => [note.title, note.tags.join(" "), note.body].map(analyze));
  const N = notes.length;
  const averages = [0, 1, 2].map((f) => fields.reduce((sum, fs) => sum + fs[f].length, 0) / N);
  const terms = [...new Set(words.flatMap(analyze))];
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
    return matched && tagged(note) ? [{ note, score }] : [];
  });
  scored.sort((a, b) => b.score - a.score || b.note.net - a.note.net || b.note.createdAt - a.note.createdAt || b.note.pk - a.note.pk);
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
        { engine, name: "sqlite, in-memory postings on the serving thread", settings: { SEARCH_THREAD: "0" }, memory: true },
        { engine, name: "sqlite, FTS5 index alone", settings: { SEARCH_MEMORY_MB: "0" }, memory: false },
      ]
    : [
        { engine, name: `${engine}, in-memory postings`, settings: {}, memory: true },
        { engine, name: `${engine}, the vectors table alone`, settings: { SEARCH_MEMORY_MB: "0" }, memory: false },
      ],
);

for (const { engine, name, settings, memory } of variants) describe(name, () => {
  test("served results are the exhaustive top-k on random corpora (Zipf words, topic bursts, votes, superseding, deletes, tag words)", async () => {
    await fc.assert(
      fc.asyncProperty(corpusArb, async ({ notes, burst, supersedes, votes, deleted, queries }) => {
        // A fresh database per corpus: keys start at 1, as the scorer's ties assume.
        const db = await freshTestDatabase(engine, settings);
        databases.push(db);
        const store = db.open();
        try {
          await store.migrate();
          const { contributorNo } = await store.createContributor({ email: "x@example.org", keyPrefix: "cairn_xxxxxx", keyDigest: new Uint8Array(32), createdAt: 0 });
          const voter = await store.createContributor({ email: "v@example.org", keyPrefix: "cairn_vvvvvv", keyDigest: new Uint8Array(32), createdAt: 0 });
          const stored: Stored[] = [];
          const byId = (id: string) => stored.find((note) => note.id === id)!;
          let pk = 0;
          for (const [i, note] of [...notes, ...burst].entries()) {
            pk++;
            const id = `00000000-0000-7000-8000-${String(pk).padStart(12, "0")}`;
            const open = stored.filter((n) => n.supersededBy === null);
            const choice = supersedes[i];
            const older = choice !== undefined && choice !== null && open.length > 0 ? open[choice % open.length] : null;
            const created = await store.createNote({ id, contributorNo, ...note, supersedes: older?.id ?? null }, () => false);
            if (!("id" in created)) throw new Error(`unexpected refusal ${JSON.stringify(created)}`);
            if (older) older.supersededBy = id;
            stored.push({ ...note, pk, id, net: 0, supersedes: older?.id ?? null, supersededBy: null });
          }
          for (const [at, { note, value }] of votes.entries()) {
            const target = stored[note % stored.length];
            const outcome = await store.setVote(target.id, voter.contributorNo, value, at);
            if (outcome.kind !== "ok") throw new Error("vote refused");
            target.net = outcome.score;
          }
          for (const n of deleted) {
            if (stored.length <= 1) break;
            const [gone] = stored.splice(n % stored.length, 1);
            expect(await store.deleteNote(gone.id, contributorNo)).toBe("deleted");
            if (gone.supersedes !== null && byId(gone.supersedes).supersededBy === gone.id) byId(gone.supersedes).supersededBy = null;
            if (gone.supersededBy !== null) byId(gone.supersededBy).supersedes = null;
          }
          // The setting reaches the store: SQLite's postings on the search thread unless SEARCH_THREAD=0.
          if (memory && store instanceof SqliteStore) expect(store.searchIndex.postings instanceof SearchThread).toBe(settings.SEARCH_THREAD !== "0");
          if (memory) expect(store.searchMemoryOffReason).toBeNull();
          else expect(store.searchMemoryOffReason).toBe("SEARCH_MEMORY_MB is 0");
          const searchable = stored.filter((note) => note.supersededBy === null);
          for (const { us, tags, tagsOnly, topicWord, limit } of queries) {
            const tagWords = tags.map((u) => `tag:${zipfWord(u).toUpperCase()}`);
            const plain = topicWord ? [topicWord] : words(us.length, us);
            const text = [...(tagsOnly && tagWords.length > 0 ? [] : plain), ...tagWords].join(" ");
            const served = (await store.search(searchRequest(text, limit))).map((note) => note.id);
            expect({ text, served }).toEqual({ text, served: exhaustive(searchable, text, limit) });
          }
          // Every note, superseded or not, reads back with its links.
          for (const note of stored) {
            expect(await store.getNote(note.id)).toMatchObject({ supersedes: note.supersedes, supersededBy: note.supersededBy, score: note.net });
          }
        } finally {
          await store.close();
        }
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
