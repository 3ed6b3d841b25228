// The references search is measured against, over one store's FTS5 index
// (bench/search-latency.ts, bench/search-http.ts):
//   fts5(q)       SELECT rowid FROM search_fts WHERE search_fts MATCH '"t1" OR "t2" …'
//                 ORDER BY bm25(search_fts) LIMIT 10: FTS5 scoring every match of the
//                 same index (its own function, so its top-10 differs)
//   exhaustive(q) BM25F of every note holding a term (the shipped function, no
//                 pruning), cut to 10 with the shipped tie order: the served top-10
//                 must equal it
import { queryTerms, resultOrder, searchRequest } from "../src/core/search/query.ts";
import { idf, scoreVector, type QueryTerm } from "../src/core/search/ranking.ts";
import type { SqliteStore } from "../src/store/sqlite/store.ts";

export function references(store: SqliteStore) {
  const index = store.searchIndex;
  const db = store.sqlite;
  const ftsTop = db.query<{ rowid: number }, [string]>("SELECT rowid FROM search_fts WHERE search_fts MATCH ? ORDER BY bm25(search_fts) LIMIT 10");
  const allMatches = db.query<[number], [string]>("SELECT rowid FROM search_fts WHERE search_fts MATCH ?");
  const rows = db.query<{ pk: number; score: number; createdAt: number; id: string }, [string]>(
    "SELECT pk, score, created_at AS createdAt, id FROM posts WHERE pk IN (SELECT value FROM json_each(?1))",
  );
  const terms = async (q: string) => queryTerms(index, searchRequest(q, 10).words);
  return {
    /** FTS5's own bm25() over every match of the query's terms, OR'ed; the number of rows. */
    async fts5(q: string): Promise<number> {
      const t = await terms(q);
      return t.length === 0 ? 0 : ftsTop.all(t.map((term) => `"${term}"`).join(" OR ")).length;
    },
    /** The ids of the exhaustive top-10 (shipped BM25F over every matching note, shipped tie order). */
    async exhaustive(q: string): Promise<string[]> {
      const t = await terms(q);
      if (t.length === 0) return [];
      const corpus = index.corpus();
      const counts = index.tierCounts(t).map((tiers) => tiers.reduce((a, b) => a + b, 0));
      const averages = corpus.lengthSums.map((s) => Math.max(s / corpus.notes, 1e-9)) as [number, number, number];
      const query: QueryTerm[] = t.flatMap((term, i) => (counts[i] > 0 ? [{ term, idf: idf(corpus.notes, counts[i]) }] : []));
      const keys = allMatches.values(t.map((term) => `"${term}"`).join(" OR ")).map((r) => r[0] as number);
      const scored = index.vectors(keys).map(({ key, vector }) => ({ key, score: scoreVector(vector, query, averages) }));
      scored.sort((a, b) => b.score - a.score);
      const cut = scored.length > 10 ? scored[9].score : -Infinity;
      const ranked = scored.filter((s) => s.score >= cut);
      return resultOrder(ranked, rows.all(JSON.stringify(ranked.map((r) => r.key))), 10).map((n) => n.id);
    },
  };
}

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
