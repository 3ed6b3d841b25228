// The note_tags table on PostgreSQL (schema.ts), as on SQLite
// (src/store/sqlite/note-tags.ts): the tags of every searchable note with its
// net score and time, written in the transactions that change them (notes.ts,
// votes.ts), read by search's tag words (docs/design.md, "Tag words").
import type { SQL as BunSQL } from "bun";

/** A tag's notes are counted up to this many when choosing which tag to walk first. */
const TAG_COUNT_CAP = 10_000;

/** A pool or a reserved connection (a snapshot's transaction). */
type Query = BunSQL;

/** The tags with the rarest first (counted up to TAG_COUNT_CAP), and the others as one jsonb parameter. */
async function split(sql: Query, tags: string[]): Promise<{ first: string; others: string }> {
  const counts = new Map<string, number>();
  for (const tag of tags.length > 1 ? tags : []) {
    const [row] = (await sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM note_tags WHERE tag = ${tag} LIMIT ${TAG_COUNT_CAP}) c`) as { n: number }[];
    counts.set(tag, Number(row.n));
  }
  const [first, ...others] = tags.length > 1 ? [...tags].sort((a, b) => counts.get(a)! - counts.get(b)!) : tags;
  return { first, others: JSON.stringify(others) };
}

// The note carries the other tags: one primary-key probe per other tag (a
// count over a subquery per row cost ten times more), as
// "no other tag lacks a row for this note".

/** Keys of the searchable notes carrying every tag (distinct, lower-case). */
export async function taggedNotes(sql: Query, tags: string[]): Promise<number[]> {
  const { first, others } = await split(sql, tags);
  const rows = (await sql`
    SELECT t.post_pk AS pk FROM note_tags t
     WHERE t.tag = ${first}
       AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(${others}::text::jsonb) x(tag)
                        WHERE NOT EXISTS (SELECT 1 FROM note_tags o WHERE o.tag = x.tag AND o.post_pk = t.post_pk))`) as { pk: string }[];
  return rows.map((row) => Number(row.pk));
}

/** Keys of the best `limit` searchable notes carrying every tag: net score, then newest, then key. */
export async function bestTagged(sql: Query, tags: string[], limit: number): Promise<number[]> {
  const { first, others } = await split(sql, tags);
  const rows = (await sql`
    SELECT t.post_pk AS pk FROM note_tags t
     WHERE t.tag = ${first}
       AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(${others}::text::jsonb) x(tag)
                        WHERE NOT EXISTS (SELECT 1 FROM note_tags o WHERE o.tag = x.tag AND o.post_pk = t.post_pk))
     ORDER BY t.score DESC, t.created_at DESC, t.post_pk DESC LIMIT ${limit}`) as { pk: string }[];
  return rows.map((row) => Number(row.pk));
}
