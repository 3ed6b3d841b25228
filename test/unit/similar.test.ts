// Similar notes (src/core/similar.ts): the terms a note is looked up by; the
// lookup before the write counts the new note in, so its own score and the
// others' scores are the ranking's once it is stored; the in-memory postings
// (similar-memory.ts) answer what the database index's path (own-score.ts) does.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { analyze, termVector } from "../../src/core/search/analyzer.ts";
import { rankInMemory } from "../../src/core/search/maxscore.ts";
import { MemoryIndex } from "../../src/core/search/memory-index.ts";
import { poolOf, rankSimilar, type SimilarQuery, type SimilarSource } from "../../src/core/search/own-score.ts";
import { rankSimilarInMemory } from "../../src/core/search/similar-memory.ts";
import { encodeVector, vectorTerms } from "../../src/core/search/vector.ts";
import { SIMILAR_BODY_CHARS, SIMILAR_TERMS, similarTerms } from "../../src/core/similar.ts";
import { cutTies, resultOrder, STOPWORDS } from "../../src/core/search/query.ts";

test("similarTerms: title terms first, then body terms by frequency, function words left out, capped", () => {
  expect(similarTerms("How to redirect the www domain", "htaccess rules: htaccess redirect with a 301, htaccess again")).toEqual([
    "redirect",
    "www",
    "domain",
    "htaccess",
    "rule",
    "301",
    "again",
  ]);
  const long = Array.from({ length: 40 }, (_, i) => `w${i}x`).join(" ");
  expect(similarTerms("t", long).length).toBe(SIMILAR_TERMS);
  expect(similarTerms("the and of", "to a is")).toEqual([]);
});

test("similarTerms equals its definition (the content words' terms, analysed as one joined text) on any text", () => {
  const WORD = /[\p{L}\p{N}\p{M}]+/gu;
  const contentTerms = (text: string) => analyze((text.toLowerCase().match(WORD) ?? []).filter((word) => !STOPWORDS.has(word)).join(" "));
  const definition = (title: string, body: string) => {
    const terms: string[] = [];
    for (const term of contentTerms(title)) if (!terms.includes(term)) terms.push(term);
    const counts = new Map<string, number>();
    for (const term of contentTerms(body.slice(0, SIMILAR_BODY_CHARS))) counts.set(term, (counts.get(term) ?? 0) + 1);
    for (const [term] of [...counts].sort((a, b) => b[1] - a[1])) if (!terms.includes(term)) terms.push(term);
    return terms.slice(0, SIMILAR_TERMS);
  };
  const pieces = fc.constantFrom("the", "How", "ÉCOLE", "İstanbul", "straße", "日本語の", "résumé", "x2", "Ωmega", "to", "a", "db's", "WAL", "  ", "-", "ǅ", "ﬁle", "\u0301");
  const text = fc.array(fc.oneof(pieces, fc.string({ maxLength: 6 }), fc.string({ unit: "grapheme", maxLength: 4 })), { maxLength: 40 }).map((parts) => parts.join(" "));
  fc.assert(fc.property(text, text, (title, body) => expect(similarTerms(title, body)).toEqual(definition(title, body))), { numRuns: 2000 });
});

const WORDS = Array.from({ length: 20 }, (_, i) => `s${i}q`);
const textArb = (max: number) => fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: max }).map((words) => words.join(" "));
const noteArb = fc.record({ title: textArb(6), body: textArb(25) });

/** The same notes as postings and as a TermSource over their vectors (the database index's questions), keys in order; `removed` are deleted. */
function corpusOf(notes: { title: string; body: string }[], removed: Set<number>) {
  const index = new MemoryIndex();
  const vectors = new Map<number, string>();
  notes.forEach((note, key) => {
    const vector = encodeVector(termVector(note.title, [], note.body));
    index.add(key, vector);
    vectors.set(key, vector);
  });
  for (const key of removed) {
    index.remove(key, vectors.get(key)!);
    vectors.delete(key);
  }
  const holders = (term: string) => [...vectors].filter(([, vector]) => vectorTerms(vector).includes(term)).map(([key]) => key);
  const source: SimilarSource = {
    corpus: () => ({ notes: index.notes, lengthSums: [index.lengthSums[0], index.lengthSums[1], index.lengthSums[2]] }),
    tierCounts: (terms) => terms.map((term) => [holders(term).length]),
    newestWith: (term, limit) => holders(term).slice(Number.isFinite(limit) ? -limit : 0),
    vectors: (keys) => keys.map((key) => ({ key, vector: vectors.get(key)! })),
  };
  return { index, source, vectors };
}

const queryOf = (note: { title: string; body: string }, rest: Omit<SimilarQuery, "terms" | "vector">): SimilarQuery => ({
  terms: similarTerms(note.title, note.body),
  vector: encodeVector(termVector(note.title, [], note.body)),
  ...rest,
});

test("the in-memory lookup lists what the database index's path lists, with the same scores", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(noteArb, { minLength: 1, maxLength: 50 }),
      fc.array(fc.nat(49), { maxLength: 8 }),
      noteArb,
      fc.record({
        limit: fc.integer({ min: 1, max: 5 }),
        minShare: fc.double({ min: 0, max: 1, noNaN: true }),
        reach: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.constant(Infinity)),
        pool: fc.oneof(fc.integer({ min: 1, max: 20 }), fc.constant(Infinity)),
      }),
      async (notes, removedAt, note, rest) => {
        const { index, source } = corpusOf(notes, new Set(removedAt.filter((key) => key < notes.length)));
        const query = queryOf(note, rest);
        const memory = rankSimilarInMemory(index, query);
        const database = await rankSimilar(source, query);
        expect(memory.own).toBe(database.own);
        const byKey = (list: { key: number; score: number }[]) => [...list].sort((a, b) => a.key - b.key);
        expect(byKey(memory.ranked)).toEqual(byKey(database.ranked));
        for (const r of memory.ranked) expect(r.score).toBeGreaterThanOrEqual(rest.minShare * memory.own);
      },
    ),
    { numRuns: 300 },
  );
});

test("counted as if stored: the own score and every candidate's score are the ranking's once the note is stored", () => {
  fc.assert(
    fc.property(fc.array(noteArb, { minLength: 1, maxLength: 40 }), noteArb, (notes, note) => {
      const { index } = corpusOf(notes, new Set());
      const query = queryOf(note, { limit: notes.length + 1, minShare: 0, reach: Infinity, pool: Infinity });
      const before = rankSimilarInMemory(index, query);
      // Now store it and rank every note for the same terms.
      const newKey = notes.length;
      index.add(newKey, query.vector);
      const after = new Map(rankInMemory(index, query.terms, notes.length + 2).map((r) => [r.key, r.score]));
      if (query.terms.length > 0) expect(before.own).toBeCloseTo(after.get(newKey) ?? 0, 12);
      for (const r of before.ranked) expect(r.score).toBeCloseTo(after.get(r.key)!, 12);
      // Every other note sharing a term is a candidate here (reach and pool unbounded).
      expect(before.ranked.map((r) => r.key).sort((a, b) => a - b)).toEqual(
        [...after.keys()].filter((key) => key !== newKey && after.get(key)! > 0).sort((a, b) => a - b),
      );
    }),
    { numRuns: 300 },
  );
});

test("the new note is never listed, and the first note of an empty commons finds nothing", async () => {
  const { index, source } = corpusOf([], new Set());
  const query = queryOf({ title: "alpha beta", body: "gamma" }, { limit: 3, minShare: 0, reach: 1024, pool: 16 });
  expect(rankSimilarInMemory(index, query).ranked).toEqual([]);
  expect((await rankSimilar(source, query)).ranked).toEqual([]);
  expect(rankSimilarInMemory(index, query).own).toBeGreaterThan(0);
});

test("poolOf: the pool with the largest weights, ties to the largest key, ascending; items only reordered", () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 4 })), { maxLength: 60 }), fc.integer({ min: 1, max: 12 }), (raw, pool) => {
      // Distinct items (keys = 100 - item, so the key order is the reverse of the item order) and few distinct weights (many ties).
      const entries = [...new Map(raw.map(([item, weight], i) => [item * 20 + (i % 20), weight])).entries()];
      const keyOf = (item: number) => 1000 - item;
      const expected = [...entries]
        .sort((a, b) => b[1] - a[1] || keyOf(b[0]) - keyOf(a[0]))
        .slice(0, pool)
        .map(([item]) => item)
        .sort((a, b) => a - b);
      const weights = new Float64Array(1000);
      for (const [item, weight] of entries) weights[item] = weight;
      const items = Int32Array.from(entries, ([item]) => item);
      expect([...poolOf(items, entries.length, weights, pool, keyOf)]).toEqual(expected);
      // Reordered in place, every item still held (the lookup zeroes its scratch through them).
      expect([...items].sort((a, b) => a - b)).toEqual(entries.map(([item]) => item).sort((a, b) => a - b));
    }),
    { numRuns: 500 },
  );
});

test.each([
  ["removed notes among them", 300],
  ["every posting live", 0],
])("long postings (many blocks, %s): the in-memory lookup still lists what the database path lists", async (_, removedCount) => {
  // Few words, so every list spans many blocks of 128: the newest holders start mid-list (toBlock) and the pool's postings are found by leap.
  // With no note removed, step 1 reads the newest postings in place (reachNewest), else block by block from the last (reachNewestLive).
  let state = 7;
  const next = (n: number) => (state = (state * 1103515245 + 12345) % 2 ** 31) % n;
  const words = ["s1q", "s2q", "s3q", "s4q", "s5q", "s6q", "s7q", "s8q"];
  const text = (n: number) => Array.from({ length: 1 + next(n) }, () => words[next(words.length)]).join(" ");
  const notes = Array.from({ length: 1500 }, () => ({ title: text(3), body: text(12) }));
  const removed = new Set(Array.from({ length: removedCount }, () => next(1500)));
  const { index, source } = corpusOf(notes, removed);
  expect(index.postings("s1q")!.size).toBeGreaterThan(3 * 128);
  expect(index.postings("s1q")!.notes === index.postings("s1q")!.size).toBe(removedCount === 0);
  for (const [reach, pool] of [[100, 8], [700, 16], [4096, 32], [Infinity, 5], [Infinity, Infinity]]) {
    for (let probe = 0; probe < 10; probe++) {
      // With no bounds every holder is scored: the last posting of every block is leapt to as well.
      const query = queryOf({ title: text(3), body: text(12) }, { limit: Number.isFinite(pool) ? 3 : 2000, minShare: 0, reach, pool });
      const memory = rankSimilarInMemory(index, query);
      const database = await rankSimilar(source, query);
      const byKey = (list: { key: number; score: number }[]) => [...list].sort((a, b) => a.key - b.key);
      expect(byKey(memory.ranked)).toEqual(byKey(database.ranked));
      expect(memory.ranked.length).toBeGreaterThan(0);
    }
  }
});

test("step 1 over removed notes' postings (among the newest or not, lists of many blocks, any reach): the in-memory lookup lists what the database path lists", async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 130, max: 700 }), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 500 }), fc.boolean(), fc.integer(), async (count, deadPercent, reach, newestOnly, seed) => {
      let state = seed >>> 0 || 1;
      const next = (n: number) => (state = (state * 1103515245 + 12345) % 2 ** 31) % n;
      const words = ["s1q", "s2q", "s3q", "s4q", "s5q"];
      const text = (n: number) => Array.from({ length: 1 + next(n) }, () => words[next(words.length)]).join(" ");
      const notes = Array.from({ length: count }, () => ({ title: text(2), body: text(8) }));
      // Removed among the newest only (where step 1 reads), or anywhere.
      const removed = new Set(notes.flatMap((_, key) => ((!newestOnly || key >= count - 200) && next(100) < deadPercent ? [key] : [])));
      const { index, source } = corpusOf(notes, removed);
      const query = queryOf({ title: text(2), body: text(8) }, { limit: 3, minShare: 0, reach, pool: 8 });
      const memory = rankSimilarInMemory(index, query);
      const database = await rankSimilar(source, query);
      const byKey = (list: { key: number; score: number }[]) => [...list].sort((a, b) => a.key - b.key);
      expect(byKey(memory.ranked)).toEqual(byKey(database.ranked));
    }),
    { numRuns: 150 },
  );
});

test("cutTies: the first `limit` of the ranked notes in resultOrder's order, from their order columns only, whatever ties", () => {
  const note = fc.record({ score: fc.integer({ min: -2, max: 2 }), createdAt: fc.integer({ min: 0, max: 3 }), listable: fc.boolean() });
  fc.assert(
    fc.property(fc.array(fc.tuple(note, fc.integer({ min: 0, max: 3 })), { maxLength: 40 }), fc.integer({ min: 0, max: 6 }), (drawn, limit) => {
      // Keys 1..n; relevance from a few values, so many tie; some notes no longer listable (deleted or superseded: no order row).
      const rows = drawn.map(([columns, relevance], i) => ({ pk: i + 1, ...columns, relevance: relevance / 4 }));
      const ranked = rows.map((row) => ({ key: row.pk, score: row.relevance }));
      const listable = rows.filter((row) => row.listable);
      let readKeys: number[] = [];
      const cut = cutTies(ranked, limit, (keys) => {
        readKeys = keys;
        return listable.filter((row) => keys.includes(row.pk));
      });
      if (ranked.length <= limit) {
        expect(cut).toBe(ranked);
        expect(readKeys).toEqual([]);
        return;
      }
      expect(readKeys.sort((a, b) => a - b)).toEqual(ranked.map((r) => r.key).sort((a, b) => a - b));
      // What reading every ranked note's whole row and ordering them gives (search.ts before the cut).
      const expected = resultOrder(ranked, listable, limit).map((row) => ({ key: row.pk, score: row.relevance }));
      expect(cut).toEqual(expected);
    }),
  );
});
