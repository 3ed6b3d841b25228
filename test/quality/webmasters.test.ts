// Search quality on a public judged collection nobody on the team wrote
// (BEIR CQADupStack webmasters, ../shared/eval; see its README). The notes go
// through the real store, the queries through the real search path; nDCG@10
// must not fall below exhaustive FTS5 bm25() with the old field weights
// (0.317), the floor of the search issue. Figures: docs/search-quality.md.
import { expect, test } from "bun:test";
import { cairnSearch, EVAL_DIR, loadCollection, measure, readCollection } from "../../bench/quality/collection.ts";

const FLOOR = 0.317;
const collection = readCollection("cqadupstack-webmasters");

if (!collection) {
  console.warn(`webmasters collection not found under ${EVAL_DIR}: the quality floor is not checked in this run`);
}

test.skipIf(!collection)("webmasters: nDCG@10 is at least the exhaustive bm25 floor", async () => {
  const loaded = await loadCollection(collection!);
  try {
    const results = new Map<string, string[]>();
    for (const query of collection!.queries) results.set(query.id, await cairnSearch(loaded, query.text));
    const { ndcg, recall } = measure(results, collection!.judgments, collection!.queries.map((q) => q.id));
    console.log(`webmasters: nDCG@10 ${ndcg.toFixed(4)}, recall@10 ${recall.toFixed(4)}`);
    expect(ndcg).toBeGreaterThanOrEqual(FLOOR);
  } finally {
    await loaded.close();
  }
}, 120_000);
