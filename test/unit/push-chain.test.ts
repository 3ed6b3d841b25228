// TermPostings.pushChain (a staged chain appended in one run: memory-index.ts's
// flush) against push() one posting at a time: the same bytes, skip and half entries and sizes.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { TermPostings } from "../../src/core/search/term-postings.ts";

const postingArb = fc.record({
  gap: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 100_000 })),
  title: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 300 })),
  tags: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3 })),
  body: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 5000 })),
});

test("pushChain writes what push() writes, posting by posting, across blocks and runs", () => {
  fc.assert(
    fc.property(fc.array(fc.array(postingArb, { minLength: 1, maxLength: 300 }), { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 64 }), (runs, capacity) => {
      const one = new TermPostings(capacity);
      const chained = new TermPostings(capacity);
      let ordinal = -1;
      for (const run of runs) {
        // A chain laid out as the stage lays it: staged postings interleaved with other terms' (every other slot).
        const n = run.length;
        const ordinals = new Int32Array(2 * n);
        const counts = new Int32Array(6 * n);
        const next = new Int32Array(2 * n).fill(-1);
        run.forEach((posting, i) => {
          ordinal += posting.gap;
          const at = 2 * i + 1;
          ordinals[at] = ordinal;
          counts.set([posting.title, posting.tags, posting.body], 3 * at);
          if (i > 0) next[2 * i - 1] = at;
          one.push(ordinal, posting.title, posting.tags, posting.body);
          one.notes++;
        });
        chained.pushChain(ordinals, counts, next, 1);
        expect(chained.length).toBe(one.length);
        expect(chained.data.subarray(0, chained.length)).toEqual(one.data.subarray(0, one.length));
        expect([chained.size, chained.last, chained.notes]).toEqual([one.size, one.last, one.notes]);
        const blocks = one.size >> 7;
        expect(chained.skips?.subarray(0, 2 * blocks) ?? null).toEqual(one.skips?.subarray(0, 2 * blocks) ?? null);
        const halved = one.size >= 64 ? ((one.size - 64) >> 7) + 1 : 0;
        expect(chained.halves?.subarray(0, 2 * halved) ?? null).toEqual(one.halves?.subarray(0, 2 * halved) ?? null);
      }
    }),
    { numRuns: 120 },
  );
});
