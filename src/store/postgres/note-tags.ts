// The note_tags table on PostgreSQL (schema.ts), as on SQLite
// (src/store/sqlite/note-tags.ts): the tags of every searchable note with its
// net score and time, written in the transactions that change them, read by
// search's tag words (docs/design.md, "Tag words").
import { sql } from "drizzle-orm";
import type { Execute } from "./search.ts";

/** A tag's notes are counted up to this many when choosing which tag to walk first. */
const TAG_COUNT_CAP = 10_000;

const json = (value: unknown) => sql`(${JSON.stringify(value)}::text)::jsonb`;

/** A note becomes searchable (created, or the note that superseded it was deleted); inside its write. */
export async function addNoteTags(execute: Execute, pk: number, tags: string[], score: number, createdAt: number): Promise<void> {
  if (tags.length === 0) return;
  await execute(sql`
    INSERT INTO note_tags (tag, post_pk, score, created_at)
    SELECT DISTINCT t, ${pk}::bigint, ${score}::int, ${createdAt}::bigint FROM jsonb_array_elements_text(${json(tags)}) t
    ON CONFLICT DO NOTHING`);
}

/** A note leaves search (superseded); deletes go by ON DELETE CASCADE. */
export async function removeNoteTags(execute: Execute, pk: number): Promise<void> {
  await execute(sql`DELETE FROM note_tags WHERE post_pk = ${pk}`);
}

/** The tags with the rarest first (counted up to TAG_COUNT_CAP), and a condition: the note carries the others. */
async function split(execute: Execute, tags: string[]) {
  const counts = new Map<string, number>();
  for (const tag of tags.length > 1 ? tags : []) {
    const [row] = await execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM note_tags WHERE tag = ${tag} LIMIT ${TAG_COUNT_CAP}) c`);
    counts.set(tag, Number(row.n));
  }
  const [first, ...others] = tags.length > 1 ? [...tags].sort((a, b) => counts.get(a)! - counts.get(b)!) : tags;
  // One primary-key probe per other tag (a count over a subquery per row cost ten times more).
  const carriesOthers =
    others.length === 0
      ? sql`true`
      : sql.join(
          others.map((tag) => sql`EXISTS (SELECT 1 FROM note_tags o WHERE o.tag = ${tag} AND o.post_pk = t.post_pk)`),
          sql` AND `,
        );
  return { first, carriesOthers };
}

/** Keys of the searchable notes carrying every tag (distinct, lower-case). */
export async function taggedNotes(execute: Execute, tags: string[]): Promise<number[]> {
  const { first, carriesOthers } = await split(execute, tags);
  const rows = await execute<{ pk: number }>(sql`SELECT t.post_pk AS pk FROM note_tags t WHERE t.tag = ${first} AND ${carriesOthers}`);
  return rows.map((row) => Number(row.pk));
}

/** Keys of the best `limit` searchable notes carrying every tag: net score, then newest, then key. */
export async function bestTagged(execute: Execute, tags: string[], limit: number): Promise<number[]> {
  const { first, carriesOthers } = await split(execute, tags);
  const rows = await execute<{ pk: number }>(sql`
    SELECT t.post_pk AS pk FROM note_tags t WHERE t.tag = ${first} AND ${carriesOthers}
     ORDER BY t.score DESC, t.created_at DESC, t.post_pk DESC LIMIT ${limit}`);
  return rows.map((row) => Number(row.pk));
}
