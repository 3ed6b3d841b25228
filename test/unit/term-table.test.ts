// The write side's term → id table (src/core/search/term-table.ts) against a Map,
// through growth, colliding probe runs, and terms of any characters.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { TermTable } from "../../src/core/search/term-table.ts";

test("TermTable finds every term added under its id, and no other, through growth", () => {
  fc.assert(
    fc.property(fc.uniqueArray(fc.string({ unit: "binary", minLength: 0, maxLength: 12 }), { maxLength: 3000 }), fc.array(fc.string({ maxLength: 12 }), { maxLength: 200 }), (terms, probes) => {
      const table = new TermTable(16);
      const expected = new Map<string, number>();
      terms.forEach((term, id) => {
        expect(table.get(term)).toBe(-1);
        table.add(term, id);
        expected.set(term, id);
      });
      expect(table.size).toBe(terms.length);
      for (const term of terms) expect(table.get(term)).toBe(expected.get(term)!);
      // Equal text in another string object (a substring) is the same term.
      for (const term of terms) expect(table.get(`x${term}`.slice(1))).toBe(expected.get(term)!);
      for (const probe of probes) expect(table.get(probe)).toBe(expected.get(probe) ?? -1);
    }),
    { numRuns: 60 },
  );
});

test("TermTable keeps terms apart that share a prefix or differ by one character (one probe run)", () => {
  const table = new TermTable(16);
  const terms = Array.from({ length: 20_000 }, (_, i) => `t${i.toString(36)}`);
  terms.forEach((term, id) => table.add(term, id));
  terms.forEach((term, id) => expect(table.get(term)).toBe(id));
  expect(table.get("t")).toBe(-1);
  expect(table.get(`${terms[5]}!`)).toBe(-1);
  expect(table.get("é")).toBe(-1);
  table.add("é", 20_000);
  table.add("中文", 20_001);
  expect(table.get("é")).toBe(20_000);
  expect(table.get("中文")).toBe(20_001);
});
