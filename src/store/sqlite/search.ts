// Full-text search SQL over the FTS5 index (posts_fts, see drizzle/0001_search_index.sql).
import type { Database } from "bun:sqlite";
import type { SearchPlan } from "../types.ts";
import type { NoteRow } from "./store.ts";

/** How many bm25 candidates per result slot are joined for tie-breaking. */
const CANDIDATES_FACTOR = 3;

/**
 * Runs the plan's expressions in order until `limit` distinct notes are found.
 * Ranking happens inside FTS5 alone (no join per match); only the best
 * candidates are joined, and bm25 ties among them go to net score, then recency.
 */
export function searchNotes(sqlite: Database, plan: SearchPlan): NoteRow[] {
  const found: NoteRow[] = [];
  const seen = new Set<string>();
  const [title, tags, body] = plan.weights;
  const query = sqlite.query<NoteRow, [string, number]>(
    `SELECT p.pk, p.id, p.contributor_no AS contributorNo, p.title, p.body, p.tags, p.score,
            p.comment_count AS commentCount, p.created_at AS createdAt
       FROM (SELECT rowid, bm25(posts_fts, ${title}, ${tags}, ${body}) AS rank
               FROM posts_fts WHERE posts_fts MATCH ?1 ORDER BY rank LIMIT ?2) AS best
       JOIN posts p ON p.pk = best.rowid
      ORDER BY best.rank, p.score DESC, p.created_at DESC`,
  );
  for (const expression of plan.expressions) {
    if (found.length >= plan.limit) break;
    for (const row of query.all(expression, plan.limit * CANDIDATES_FACTOR + seen.size)) {
      if (found.length >= plan.limit) break;
      if (seen.has(row.id)) continue;
      seen.add(row.id);
      found.push(row);
    }
  }
  return found;
}
