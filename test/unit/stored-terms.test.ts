// Reading a stored vector's terms in one pass (StoredTerms, src/core/search/vector.ts)
// against the plain reader (forEachTermAt), and its hashes against the term table's.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { termVector } from "../../src/core/search/analyzer.ts";
import { TermTable } from "../../src/core/search/term-table.ts";
import { encodeVector, forEachTermAt, readLengths, StoredTerms } from "../../src/core/search/vector.ts";

const wordArb = fc.oneof(fc.stringMatching(/^[a-z0-9]{1,9}$/), fc.constantFrom("zürich", "naïve", "東京", "데이터", "ab", "the"));
const noteArb = fc.record({
  title: fc.array(wordArb, { maxLength: 8 }).map((w) => w.join(" ")),
  tags: fc.array(wordArb, { maxLength: 3 }),
  body: fc.tuple(fc.array(wordArb, { maxLength: 60 }), fc.integer({ min: 0, max: 1200 })).map(([w, repeats]) => `${w.join(" ")} ${"again ".repeat(repeats)}`),
});

test("StoredTerms reads every term of a stored vector as forEachTermAt does (and its lengths as readLengths), with the table's hash", () => {
  const parsed = new StoredTerms();
  fc.assert(
    fc.property(fc.array(noteArb, { minLength: 1, maxLength: 4 }), (notes) => {
      // One reader for several vectors in turn, as the index reuses it.
      for (const note of notes) {
        const vector = encodeVector(termVector(note.title, note.tags, note.body));
        const expected: number[][] = [];
        forEachTermAt(vector, (start, end, title, tags, body) => expected.push([start, end, title, tags, body]));
        const count = parsed.read(vector);
        expect(count).toBe(expected.length);
        expect([...parsed.lengths]).toEqual(readLengths(vector));
        const table = new TermTable(16);
        for (let i = 0; i < count; i++) {
          expect([parsed.start[i], parsed.end[i], parsed.counts[3 * i], parsed.counts[3 * i + 1], parsed.counts[3 * i + 2]]).toEqual(expected[i]);
          table.add(vector.slice(parsed.start[i], parsed.end[i]), i);
        }
        for (let i = 0; i < count; i++) {
          expect(table.getHashed(parsed.hash[i], vector, parsed.start[i], parsed.end[i])).toBe(i);
          expect(table.getIn(vector, parsed.start[i], parsed.end[i])).toBe(i);
        }
      }
    }),
    { numRuns: 150 },
  );
});

test("StoredTerms grows past its first arrays and reads a vector without terms", () => {
  const parsed = new StoredTerms();
  const body = Array.from({ length: 700 }, (_, i) => `w${i.toString(36)}`).join(" ");
  const vector = encodeVector(termVector("a title", ["tag"], body));
  const expected: string[] = [];
  forEachTermAt(vector, (start, end) => expected.push(vector.slice(start, end)));
  expect(parsed.read(vector)).toBe(expected.length);
  expect(expected.length).toBeGreaterThan(256);
  expect(Array.from({ length: parsed.count }, (_, i) => vector.slice(parsed.start[i], parsed.end[i]))).toEqual(expected);
  expect(parsed.read("0,0,0")).toBe(0);
  expect([...parsed.lengths]).toEqual([0, 0, 0]);
  expect(parsed.read("12,3,4567")).toBe(0);
  expect([...parsed.lengths]).toEqual([12, 3, 4567]);
});
