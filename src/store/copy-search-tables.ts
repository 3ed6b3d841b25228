// The PostgreSQL engine's search tables (search_postings, search_vectors,
// search_terms, search_totals: src/store/postgres/search.ts), built by
// `cairn admin copy` from the copied notes, because today's engine searches
// those tables and does not build them itself. Issue 20 replaces them with
// the in-memory index each replica builds from the notes: when those tables
// are dropped, delete this file and its one call in copy.ts (the copy then
// moves the notes only, and the engine indexes them at start).
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { termVector } from "../core/search/analyzer.ts";
import { tierOf } from "../core/search/ranking.ts";
import { encodeVector } from "../core/search/vector.ts";
import { copyInto, copyText, keysetPages } from "./copy-tables.ts";
import { TOTALS_SHARDS } from "./postgres/search.ts";

/**
 * Indexes every note of the source (read in keyset pages, as the copy reads
 * it) into the search tables, in the copy's transaction, as indexNote does
 * per note. The postings' two indexes are dropped for the load and built
 * once at the end (a sort instead of one random B-tree insert per posting).
 * Answers the notes indexed.
 */
export async function writeSearchTables(tx: SQL, sqlite: Database, pageRows: number, onPage: (notes: number) => void): Promise<number> {
  await tx.unsafe("SET LOCAL maintenance_work_mem = '256MB'");
  await tx.unsafe("ALTER TABLE search_postings DROP CONSTRAINT search_postings_term_tier_pk_pk");
  await tx.unsafe("DROP INDEX search_postings_pk_term");
  const totals = Array.from({ length: TOTALS_SHARDS }, () => [0, 0, 0, 0]);
  let indexed = 0;
  for (const page of keysetPages(sqlite, "posts", ["pk"], ["pk", "title", "tags", "body", "superseded_by"], pageRows)) {
    const postings: string[] = [];
    const vectors: string[] = [];
    for (const row of page) {
      // Superseded notes stay out of the search index (docs/design.md, "Superseding").
      if (row.superseded_by !== null) continue;
      indexed++;
      const pk = Number(row.pk);
      const vector = termVector(row.title as string, JSON.parse(row.tags as string) as string[], row.body as string);
      for (const [term, counts] of vector.counts) postings.push(`${copyText(term)}\t${tierOf(counts, vector.lengths)}\t${pk}\n`);
      vectors.push(`${pk}\t${copyText(encodeVector(vector))}\n`);
      const shard = totals[pk % TOTALS_SHARDS];
      shard[0] += 1;
      for (let f = 0; f < 3; f++) shard[f + 1] += vector.lengths[f];
    }
    await copyInto(tx, "search_postings", ["term", "tier", "pk"], [postings.join("")]);
    await copyInto(tx, "search_vectors", ["pk", "vector"], [vectors.join("")]);
    onPage(page.length);
  }
  await tx.unsafe('ALTER TABLE search_postings ADD CONSTRAINT search_postings_term_tier_pk_pk PRIMARY KEY (term, tier, pk)');
  await tx.unsafe("CREATE INDEX search_postings_pk_term ON search_postings USING btree (pk, term)");
  await tx.unsafe("INSERT INTO search_terms (term, tier, notes) SELECT term, tier, count(*) FROM search_postings GROUP BY term, tier");
  for (let shard = 0; shard < TOTALS_SHARDS; shard++) {
    const [notes, title, tags, body] = totals[shard];
    if (notes === 0) continue;
    await tx.unsafe("INSERT INTO search_totals (shard, notes, title_terms, tag_terms, body_terms) VALUES ($1, $2, $3, $4, $5)", [shard, notes, title, tags, body]);
  }
  return indexed;
}
