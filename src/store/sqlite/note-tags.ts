// The note_tags table on SQLite (schema.ts): the tags of every searchable
// note with its net score and time, written in the transactions that change
// them, read by search's tag words (docs/design.md, "Tag words").
import type { Database, Statement } from "bun:sqlite";

/** A tag's notes are counted up to this many when choosing which tag to walk first. */
export const TAG_COUNT_CAP = 10_000;

function prepare(sqlite: Database) {
  // ?2: a JSON array of the other tags a note must carry, ?3 its length.
  const carriesOthers = `(SELECT count(*) FROM note_tags o WHERE o.post_pk = t.post_pk AND o.tag IN (SELECT value FROM json_each(?2))) = ?3`;
  return {
    // A note's tag is stored once: the table has no (tag, post_pk) key since
    // drizzle/0008 (schema.ts), so this statement checks, by note_tags_post.
    add: sqlite.query<unknown, [number, number, number, string]>(
      `INSERT INTO note_tags(tag, post_pk, score, created_at) SELECT DISTINCT j.value, ?1, ?2, ?3 FROM json_each(?4) j
        WHERE NOT EXISTS (SELECT 1 FROM note_tags o WHERE o.post_pk = ?1 AND o.tag = j.value)`,
    ),
    // A new note's tags: one plain insert of their rows (json_each and the check cost a ~2 KB note's write more than the rows did).
    // Indexed by the count of tags (at most LIMITS.tagsMax; prepared when first needed).
    addNew: [] as Statement<unknown, (string | number)[]>[],
    remove: sqlite.query<unknown, [number]>("DELETE FROM note_tags WHERE post_pk = ?"),
    setScore: sqlite.query<unknown, [number, number]>("UPDATE note_tags SET score = ?2 WHERE post_pk = ?1"),
    count: sqlite.query<{ n: number }, [string, number]>("SELECT count(*) AS n FROM (SELECT 1 FROM note_tags WHERE tag = ?1 LIMIT ?2)"),
    tagged: sqlite.query<[number], [string, string, number]>(`SELECT t.post_pk FROM note_tags t WHERE t.tag = ?1 AND ${carriesOthers}`),
    best: sqlite.query<{ pk: number }, [string, string, number, number]>(
      `SELECT t.post_pk AS pk FROM note_tags t INDEXED BY note_tags_order WHERE t.tag = ?1 AND ${carriesOthers}
        ORDER BY t.score DESC, t.created_at DESC, t.post_pk DESC LIMIT ?4`,
    ),
  };
}

export class SqliteNoteTags {
  private prepared?: ReturnType<typeof prepare>;

  constructor(private readonly sqlite: Database) {}

  private get s() {
    return (this.prepared ??= prepare(this.sqlite));
  }

  /** A note becomes searchable (created, or the note that superseded it was deleted); inside its write. */
  add(pk: number, tags: string[], score: number, createdAt: number): void {
    if (tags.length > 0) this.s.add.run(pk, score, createdAt, JSON.stringify(tags));
  }

  /**
   * A note just inserted (no score yet), inside its write. Its key has no
   * rows: a key is taken again only after its note was deleted, and the
   * note's rows went with it (ON DELETE CASCADE).
   */
  addNew(pk: number, tags: string[], createdAt: number): void {
    if (tags.length === 0) return;
    const distinct = tags.length > 1 ? [...new Set(tags)] : tags;
    const values: (string | number)[] = [];
    for (const tag of distinct) values.push(tag, pk, createdAt);
    const statements = this.s.addNew;
    statements[distinct.length] ??= this.sqlite.query(`INSERT INTO note_tags(tag, post_pk, score, created_at) VALUES ${Array(distinct.length).fill("(?, ?, 0, ?)").join(", ")}`);
    statements[distinct.length].run(...values);
  }

  /** A note leaves search (superseded); deletes go by ON DELETE CASCADE. */
  remove(pk: number): void {
    this.s.remove.run(pk);
  }

  /** The note's net score changed (a vote); inside the vote's write. */
  setScore(pk: number, score: number): void {
    this.s.setScore.run(pk, score);
  }

  /** The tags with the rarest first (counted up to TAG_COUNT_CAP), and the others. */
  private split(tags: string[]): [string, string] {
    if (tags.length === 1) return [tags[0], "[]"];
    const counts = new Map(tags.map((tag) => [tag, this.s.count.get(tag, TAG_COUNT_CAP)!.n]));
    const [first, ...others] = [...tags].sort((a, b) => counts.get(a)! - counts.get(b)!);
    return [first, JSON.stringify(others)];
  }

  /** Keys of the searchable notes carrying every tag (distinct, lower-case). */
  tagged(tags: string[]): number[] {
    const [first, others] = this.split(tags);
    // As arrays, not objects: a common tag has many thousand notes.
    return this.s.tagged.values(first, others, tags.length - 1).map((row) => row[0] as number);
  }

  /** Keys of the best `limit` searchable notes carrying every tag: net score, then newest, then key. */
  best(tags: string[], limit: number): number[] {
    const [first, others] = this.split(tags);
    return this.s.best.all(first, others, tags.length - 1, limit).map((row) => row.pk);
  }
}
