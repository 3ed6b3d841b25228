// Similar notes (src/core/similar.ts): the terms a note is looked up by, the
// own score, and MaxScore's floor, which must prune only notes below it.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { termVector } from "../../src/core/search/analyzer.ts";
import { rankInMemory } from "../../src/core/search/maxscore.ts";
import { MemoryIndex } from "../../src/core/search/memory-index.ts";
import { ownScore } from "../../src/core/search/own-score.ts";
import { encodeVector } from "../../src/core/search/vector.ts";
import { SIMILAR_TERMS, similarTerms } from "../../src/core/similar.ts";

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

const WORDS = Array.from({ length: 20 }, (_, i) => `s${i}q`);
const textArb = (max: number) => fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: max }).map((words) => words.join(" "));
const noteArb = fc.record({ title: textArb(6), body: textArb(25) });

test("rankInMemory with a floor: exactly the unfloored top-k with scores at or above it", () => {
  fc.assert(
    fc.property(fc.array(noteArb, { minLength: 1, maxLength: 60 }), fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 5 }), fc.double({ min: 0, max: 1, noNaN: true }), (notes, words, k, share) => {
      const index = new MemoryIndex();
      const vectors = new Map<number, string>();
      notes.forEach((note, key) => {
        const vector = encodeVector(termVector(note.title, [], note.body));
        vectors.set(key, vector);
        index.add(key, vector);
      });
      const terms = [...new Set(words)];
      const all = rankInMemory(index, terms, k);
      const best = all[0]?.score ?? 0;
      const floor = share * best;
      const floored = rankInMemory(index, terms, k, floor);
      const expected = all.filter((r) => r.score >= floor);
      const byKey = (list: { key: number; score: number }[]) => [...list].sort((a, b) => a.key - b.key);
      expect(byKey(floored)).toEqual(byKey(expected));
    }),
    { numRuns: 300 },
  );
});

test("ownScore is the score the ranking gives the note for the same terms", async () => {
  const index = new MemoryIndex();
  const texts = ["alpha beta gamma", "beta gamma delta", "gamma delta epsilon alpha", "zeta eta"];
  const vectors = new Map<number, string>();
  texts.forEach((text, key) => {
    const vector = encodeVector(termVector(text, [], `${text} ${text}`));
    vectors.set(key, vector);
    index.add(key, vector);
  });
  const source = {
    corpus: () => ({ notes: index.notes, lengthSums: [index.lengthSums[0], index.lengthSums[1], index.lengthSums[2]] as [number, number, number] }),
    tierCounts: (terms: string[]) => terms.map((term) => [index.notesWith(term)]),
    vectors: (keys: number[]) => keys.map((key) => ({ key, vector: vectors.get(key)! })),
  };
  const terms = ["alpha", "beta", "gamma"];
  const ranked = rankInMemory(index, terms, 10);
  for (const { key, score } of ranked) expect(await ownScore(source, terms, key)).toBeCloseTo(score, 12);
});
