// Notes on PostgreSQL: create (the duplicate check under a lock per author; the note, its vector and its search log row in one statement), read
// (no cache: replicas share the database), delete, search (this replica's
// in-memory postings, search.ts). The hot statements go straight to Bun.SQL:
// a tagged template is prepared once per connection, and building the
// Drizzle query each time cost more than running it.
import type { SQL as BunSQL } from "bun";
import type { DeleteOutcome, NewNote, NoteRecord, SearchRequest } from "../types.ts";
import { resultOrder } from "../../core/search/query.ts";
import { transaction } from "./connection.ts";
import { decodeText, encodeText } from "./schema.ts";
import { LOG_TRIM_EVERY, trimLog } from "./search-log.ts";
import { noteVector, type PostgresSearch } from "./search.ts";

interface NoteRow {
  pk: string;
  id: string;
  contributor_no: number;
  title: string;
  body: string;
  tags: string[];
  score: number;
  comment_count: number;
  created_at: string;
}

function toNote(row: NoteRow): NoteRecord {
  return {
    id: row.id,
    contributorNo: row.contributor_no,
    title: decodeText(row.title),
    body: decodeText(row.body),
    tags: [...row.tags],
    score: row.score,
    commentCount: row.comment_count,
    createdAt: Number(row.created_at),
  };
}

/** pg_advisory_xact_lock class of the per-author create lock ("AUTH"); other Cairn locks use single keys whose high half is not this. */
const AUTHOR_LOCK = 0x41555448;

/** A list of keys as one bigint[] parameter. */
const keyArray = (keys: number[]) => `{${keys.join(",")}}`;

export class PostgresNotes {
  constructor(
    private readonly client: BunSQL,
    private readonly searchIndex: PostgresSearch,
  ) {}

  async create(note: NewNote, isDuplicate: (latest: { title: string; body: string; tags: string[] }) => boolean) {
    const vector = noteVector(note.title, note.tags, note.body);
    const created = await transaction(this.client, async (tx, commitWith): Promise<{ note: NoteRecord; seq: number; pk: number } | { duplicateOf: string }> => {
      // A lock per author (an advisory lock: nothing is written for it)
      // orders this author's creates across every replica: the duplicate
      // check and the insert are one step. The latest note is read by a
      // second statement (sent at once, run after the lock is held), so its
      // snapshot holds a racing create that just committed.
      const [, [latest]] = (await Promise.all([
        tx`SELECT pg_advisory_xact_lock(${AUTHOR_LOCK}, ${note.contributorNo})`,
        tx`SELECT id, title, body, tags FROM posts WHERE contributor_no = ${note.contributorNo} ORDER BY pk DESC LIMIT 1`,
      ])) as [unknown, { id: string; title: string; body: string; tags: string[] }[]];
      if (latest && isDuplicate({ title: decodeText(latest.title), body: decodeText(latest.body), tags: [...latest.tags] })) return { duplicateOf: latest.id };
      const [row] = (await commitWith(tx`
        WITH note AS (
          INSERT INTO posts (id, contributor_no, title, body, tags, created_at)
          VALUES (${note.id}, ${note.contributorNo}, ${encodeText(note.title)}, ${encodeText(note.body)},
                  ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(note.tags)}::text::jsonb)), ${note.createdAt})
          RETURNING pk, score, comment_count
        ), vector AS (
          INSERT INTO search_vectors (pk, vector) SELECT pk, ${vector} FROM note
        ), logged AS (
          INSERT INTO search_log (pk) SELECT pk FROM note RETURNING seq
        )
        SELECT note.pk, note.score, note.comment_count, logged.seq FROM note, logged`)) as { pk: string; score: number; comment_count: number; seq: string }[];
      return {
        seq: Number(row.seq),
        pk: Number(row.pk),
        note: {
          id: note.id,
          contributorNo: note.contributorNo,
          title: note.title,
          body: note.body,
          tags: note.tags,
          score: row.score,
          commentCount: row.comment_count,
          createdAt: note.createdAt,
        },
      };
    });
    if ("duplicateOf" in created) return created;
    this.written(created.seq, created.pk, vector);
    return created.note;
  }

  /** After a write that logged row `seq` committed (a create: with its key and vector): this replica's next search finds it; the log is trimmed now and then. */
  private written(seq: number, pk?: number, vector?: string): void {
    this.searchIndex.memory.committed(pk === undefined ? undefined : new Map([[pk, vector!]]));
    if (seq % LOG_TRIM_EVERY === 0) void trimLog(this.client, seq).catch(() => {});
  }

  async get(id: string): Promise<NoteRecord | null> {
    const [row] = (await this.client`SELECT id, contributor_no, title, body, tags, score, comment_count, created_at FROM posts WHERE id = ${id}`) as NoteRow[];
    return row ? toNote(row) : null;
  }

  async delete(id: string, contributorNo: number): Promise<DeleteOutcome> {
    const outcome = await transaction(this.client, async (tx, commitWith): Promise<DeleteOutcome | number> => {
      const [note] = (await tx`SELECT pk, contributor_no FROM posts WHERE id = ${id} FOR UPDATE`) as { pk: string; contributor_no: number }[];
      if (!note) return "missing";
      if (note.contributor_no !== contributorNo) return "not_author";
      // Comments and votes go by ON DELETE CASCADE; the log row carries the removed vector (its row is gone).
      const [row] = (await commitWith(tx`
        WITH note AS (DELETE FROM posts WHERE pk = ${note.pk}),
             vector AS (DELETE FROM search_vectors WHERE pk = ${note.pk} RETURNING pk, vector),
             logged AS (INSERT INTO search_log (pk, removed) SELECT pk, vector FROM vector RETURNING seq)
        SELECT seq FROM logged`)) as { seq: string }[];
      return row ? Number(row.seq) : 0;
    });
    if (typeof outcome !== "number") return outcome;
    if (outcome > 0) this.written(outcome);
    return "deleted";
  }

  async search(request: SearchRequest): Promise<NoteRecord[]> {
    const ranked = await this.searchIndex.rank(request);
    if (ranked.length === 0) return [];
    const rows = (await this.client`
      SELECT pk, id, contributor_no, title, body, tags, score, comment_count, created_at
        FROM posts WHERE pk = ANY(${keyArray(ranked.map((r) => r.key))}::bigint[])`) as NoteRow[];
    const notes = rows.map((row) => ({ ...toNote(row), pk: Number(row.pk), createdAt: Number(row.created_at) }));
    return resultOrder(ranked, notes, request.limit).map(({ pk: _, ...note }) => note);
  }
}
