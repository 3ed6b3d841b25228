// Notes holding each term per impact tier, counted from a SQLite store's
// stored vectors: what its folded term counts must equal (term-counts.test.ts,
// search-file.test.ts).
import { tierOf, TIERS } from "../../src/core/search/ranking.ts";
import { forEachTerm, readLengths } from "../../src/core/search/vector.ts";
import type { SqliteStore } from "../../src/store/sqlite/store.ts";

export function countedFromVectors(store: SqliteStore): Map<string, number[]> {
  const counts = new Map<string, number[]>();
  for (const { vector } of store.sqlite.query<{ vector: string }, []>("SELECT vector FROM search_vectors").all()) {
    const lengths = readLengths(vector);
    forEachTerm(vector, (term, title, tags, body) => {
      if (!counts.has(term)) counts.set(term, new Array<number>(TIERS).fill(0));
      counts.get(term)![tierOf([title, tags, body], lengths)]++;
    });
  }
  return counts;
}
