// Search on PostgreSQL: exact top-k BM25F over the weighted tsvector of each
// note (A title, B tags, C body; see schema.ts), found through its GIN index.
// Every note holding any query word is scored, so the top k are exact; the
// collection statistics (notes, summed field lengths) come from search_stats,
// the document frequencies from the matching notes themselves.
//
// Ranking: BM25F with field weights title 3, tags 1, body 1, k1 1.2, b 0.75,
// English Snowball stems (PostgreSQL's `english` configuration, the Porter
// family); ties by net score, then the newer note. A tsvector keeps at most
// 256 positions of one word in one note, so a term frequency above 256 counts
// as 256.
import { sql, type SQL } from "drizzle-orm";

export const TEXT_SEARCH_CONFIG = "english";
const WEIGHTS = { title: 3, tags: 1, body: 1 };
const K1 = 1.2;
const B = 0.75;

/** The `search` value of a new note: its fields' lexemes, weighted by field. */
export function searchVector(title: string, tags: string[], body: string): SQL {
  return sql`setweight(to_tsvector('english', ${title}), 'A') || setweight(to_tsvector('english', ${tags.join(" ")}), 'B') || setweight(to_tsvector('english', ${body}), 'C')`;
}

/** A field's length in indexed tokens (stop words are not counted, as they are not indexed). */
export function fieldLength(text: string): SQL {
  return sql`(SELECT coalesce(sum(cardinality(positions)), 0)::int FROM unnest(to_tsvector('english', ${text})))`;
}

/**
 * The pks of the best `limit` notes for `words` (lower-case content words),
 * best first. Words reach PostgreSQL only as a bound parameter; the tsquery is
 * built from the stemmed lexemes with quote_literal, never from user syntax.
 */
export function rankedPks(words: string[], limit: number): SQL {
  const text = words.join(" ");
  return sql`
    WITH q AS (
      SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', ${text}))
    ),
    query AS (
      SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery AS tsq, array_agg(lexeme) AS lexemes FROM q
    ),
    stats AS (
      SELECT greatest(sum(notes), 1)::float8 AS n,
             greatest(sum(title_len)::float8 / greatest(sum(notes), 1), 1) AS avg_title,
             greatest(sum(tags_len)::float8 / greatest(sum(notes), 1), 1) AS avg_tags,
             greatest(sum(body_len)::float8 / greatest(sum(notes), 1), 1) AS avg_body
      FROM search_stats
    ),
    hits AS (
      SELECT p.pk, p.score, u.lexeme,
        (SELECT count(*) FROM unnest(u.weights) w WHERE w = 'A')::float8
          / (1 - ${B} + ${B} * p.title_len / s.avg_title) AS tf_title,
        (SELECT count(*) FROM unnest(u.weights) w WHERE w = 'B')::float8
          / (1 - ${B} + ${B} * p.tags_len / s.avg_tags) AS tf_tags,
        (SELECT count(*) FROM unnest(u.weights) w WHERE w = 'C')::float8
          / (1 - ${B} + ${B} * p.body_len / s.avg_body) AS tf_body
      FROM query, stats s, posts p, unnest(p.search) u
      WHERE query.tsq IS NOT NULL AND p.search @@ query.tsq AND u.lexeme = ANY (query.lexemes)
    ),
    df AS (
      SELECT lexeme, count(*)::float8 AS df FROM hits GROUP BY lexeme
    ),
    scored AS (
      SELECT h.pk, h.score,
        sum(ln(1 + (s.n - df.df + 0.5) / (df.df + 0.5))
            * (${WEIGHTS.title} * h.tf_title + ${WEIGHTS.tags} * h.tf_tags + ${WEIGHTS.body} * h.tf_body)
            / (${K1} + ${WEIGHTS.title} * h.tf_title + ${WEIGHTS.tags} * h.tf_tags + ${WEIGHTS.body} * h.tf_body)) AS rank
      FROM hits h JOIN df USING (lexeme), stats s
      GROUP BY h.pk, h.score
    )
    SELECT pk FROM scored ORDER BY rank DESC, score DESC, pk DESC LIMIT ${limit}`;
}
