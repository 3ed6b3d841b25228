// Notes on PostgreSQL: create (the duplicate check under the author's row
// lock, the search entry in the same transaction), read (no cache: replicas
// share the database), delete, search (one snapshot).
import type { SQL as BunSQL } from "bun";
import { and, desc, eq, inArray } from "drizzle-orm";
import type { DeleteOutcome, IdempotencyCompletion, NewNote, NoteRecord, OwnNoteRecord, SearchRequest, SimilarQuery, SimilarRecord, SupersedeRefusal } from "../types.ts";
import { answered, forgetNoteAnswers } from "./idempotency.ts";
import { executor, type Db } from "./connection.ts";
import { contributors, decodeText, posts } from "./schema.ts";
import { addNoteTags, removeNoteTags } from "./note-tags.ts";
import { indexNote, PostgresSearchSource, unindexNote } from "./search.ts";

type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

const noteColumns = {
  pk: posts.pk,
  id: posts.id,
  contributorNo: posts.contributorNo,
  title: posts.title,
  body: posts.body,
  tags: posts.tags,
  score: posts.score,
  commentCount: posts.commentCount,
  createdAt: posts.createdAt,
  supersedes: posts.supersedes,
  supersededBy: posts.supersededBy,
};

type NoteRow = { id: string; contributorNo: number; title: string; body: string; tags: string[]; score: number; commentCount: number; createdAt: number };

function toNote(row: NoteRow & { supersedes: string | null; supersededBy: string | null }): NoteRecord {
  return {
    id: row.id,
    contributorNo: row.contributorNo,
    title: row.title,
    body: row.body,
    tags: row.tags,
    score: row.score,
    commentCount: row.commentCount,
    createdAt: Number(row.createdAt),
    supersedes: row.supersedes,
    supersededBy: row.supersededBy,
  };
}

export class PostgresNotes {
  constructor(
    private readonly db: Db,
    private readonly client: BunSQL,
  ) {}

  async create(
    note: NewNote,
    isDuplicate: (latest: { title: string; body: string; tags: string[] }) => boolean,
    completion?: IdempotencyCompletion<NoteRecord | { duplicateOf: string } | SupersedeRefusal>,
  ) {
    return this.db.transaction(async (tx): Promise<NoteRecord | { duplicateOf: string } | SupersedeRefusal> => {
      // The author's row lock orders this author's creates across every replica:
      // the duplicate check and the insert are one step.
      await tx.select({ no: contributors.contributorNo }).from(contributors).where(eq(contributors.contributorNo, note.contributorNo)).for("update");
      const [latest] = await tx
        .select({ id: posts.id, title: posts.title, body: posts.body, tags: posts.tags })
        .from(posts)
        .where(eq(posts.contributorNo, note.contributorNo))
        .orderBy(desc(posts.pk))
        .limit(1);
      if (latest && isDuplicate({ title: latest.title, body: latest.body, tags: latest.tags })) return answered(tx, completion, { duplicateOf: latest.id });
      // Under the author's row lock (only the author supersedes a note), so two notes racing to supersede one are ordered.
      const older = note.supersedes ? await this.lockLinks(tx, note.supersedes) : null;
      if (note.supersedes) {
        if (!older) return answered(tx, completion, { supersedeMissing: true });
        if (older.contributorNo !== note.contributorNo) return answered(tx, completion, { supersedeForbidden: true });
        if (older.supersededBy !== null) return answered(tx, completion, { alreadySupersededBy: older.supersededBy });
      }
      const [row] = await tx
        .insert(posts)
        .values({
          id: note.id,
          contributorNo: note.contributorNo,
          title: note.title,
          body: note.body,
          tags: note.tags,
          createdAt: note.createdAt,
          supersedes: note.supersedes ?? null,
        })
        .returning(noteColumns);
      await indexNote(executor(tx), { pk: row.pk, title: note.title, tags: note.tags, body: note.body });
      await addNoteTags(executor(tx), row.pk, note.tags, 0, note.createdAt);
      if (older) {
        await tx.update(posts).set({ supersededBy: note.id }).where(eq(posts.pk, older.pk));
        await unindexNote(executor(tx), older.pk);
        await removeNoteTags(executor(tx), older.pk);
      }
      return answered(tx, completion, toNote(row));
    });
  }

  /** Newest first below `beforePk`, by the (contributor_no, pk) index: a page costs its rows, whatever the offset. */
  async listOwn(contributorNo: number, beforePk: number | null, limit: number): Promise<OwnNoteRecord[]> {
    const rows = (await this.client`
      SELECT pk, id, title, tags, score, comment_count, supersedes, superseded_by, created_at FROM posts
       WHERE contributor_no = ${contributorNo} AND pk < ${beforePk ?? Number.MAX_SAFE_INTEGER}
       ORDER BY pk DESC LIMIT ${limit}`) as { pk: string; id: string; title: string; tags: string[]; score: number; comment_count: number; supersedes: string | null; superseded_by: string | null; created_at: string }[];
    return rows.map((row) => ({
      pk: Number(row.pk),
      id: row.id,
      title: decodeText(row.title),
      tags: [...row.tags],
      score: row.score,
      commentCount: row.comment_count,
      supersedes: row.supersedes,
      supersededBy: row.superseded_by,
      createdAt: Number(row.created_at),
    }));
  }

  /** A note's author and links, row-locked for the transaction; null when it does not exist. */
  private async lockLinks(tx: Tx, id: string) {
    const [row] = await tx
      .select({ pk: posts.pk, contributorNo: posts.contributorNo, supersedes: posts.supersedes, supersededBy: posts.supersededBy })
      .from(posts)
      .where(eq(posts.id, id))
      .for("update");
    return row ?? null;
  }

  /** Inside a delete: the notes linked to the deleted one let go of it; the one it superseded goes back into search. */
  private async unlink(tx: Tx, id: string, links: { supersedes: string | null; supersededBy: string | null }): Promise<void> {
    if (links.supersedes !== null) {
      const [restored] = await tx
        .update(posts)
        .set({ supersededBy: null })
        .where(and(eq(posts.id, links.supersedes), eq(posts.supersededBy, id)))
        .returning({ pk: posts.pk, title: posts.title, body: posts.body, tags: posts.tags, score: posts.score, createdAt: posts.createdAt });
      if (restored) {
        await indexNote(executor(tx), { pk: restored.pk, title: restored.title, tags: restored.tags, body: restored.body });
        await addNoteTags(executor(tx), restored.pk, restored.tags, restored.score, Number(restored.createdAt));
      }
    }
    if (links.supersededBy !== null) {
      await tx.update(posts).set({ supersedes: null }).where(and(eq(posts.id, links.supersededBy), eq(posts.supersedes, id)));
    }
  }

  async get(id: string): Promise<NoteRecord | null> {
    const [row] = (await this.client`SELECT id, contributor_no, title, body, tags, score, comment_count, created_at, supersedes, superseded_by FROM posts WHERE id = ${id}`) as {
      id: string;
      contributor_no: number;
      title: string;
      body: string;
      tags: string[];
      score: number;
      comment_count: number;
      created_at: string;
      supersedes: string | null;
      superseded_by: string | null;
    }[];
    if (!row) return null;
    return {
      id: row.id,
      contributorNo: row.contributor_no,
      title: decodeText(row.title),
      body: decodeText(row.body),
      tags: [...row.tags],
      score: row.score,
      commentCount: row.comment_count,
      createdAt: Number(row.created_at),
      supersedes: row.supersedes,
      supersededBy: row.superseded_by,
    };
  }

  async delete(id: string, contributorNo: number): Promise<DeleteOutcome> {
    return this.db.transaction(async (tx): Promise<DeleteOutcome> => {
      const [author] = await tx.select({ no: posts.contributorNo }).from(posts).where(eq(posts.id, id));
      if (!author) return "missing";
      if (author.no !== contributorNo) return "not_author";
      // The author's row lock first, as a create takes it: every change to a chain of superseding
      // notes (one author's) is then ordered, and no two transactions lock its notes in opposite orders.
      await tx.select({ no: contributors.contributorNo }).from(contributors).where(eq(contributors.contributorNo, contributorNo)).for("update");
      const note = await this.lockLinks(tx, id);
      if (!note) return "missing";
      await this.unlink(tx, id, note);
      // Comments and votes go by ON DELETE CASCADE.
      await unindexNote(executor(tx), note.pk);
      await forgetNoteAnswers(tx, id);
      await tx.delete(posts).where(eq(posts.pk, note.pk));
      return "deleted";
    });
  }

  async search(request: SearchRequest): Promise<NoteRecord[]> {
    if ((request.words.length === 0 && request.tags.length === 0) || request.limit <= 0) return [];
    // One snapshot for the statistics, postings, vectors and rows.
    return this.db.transaction(
      async (tx) => {
        const source = new PostgresSearchSource(executor(tx));
        const rows = await source.search(request, (pks) => tx.select(noteColumns).from(posts).where(inArray(posts.pk, pks)));
        return rows.map(toNote);
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
  }

  async similar(query: SimilarQuery): Promise<SimilarRecord[]> {
    if (query.terms.length === 0 || query.limit <= 0) return [];
    // One snapshot for the statistics, the ranking and the rows.
    return this.db.transaction(
      async (tx) => {
        const source = new PostgresSearchSource(executor(tx));
        const rows = await source.similar(query, (pks) => tx.select(noteColumns).from(posts).where(inArray(posts.pk, pks)));
        return rows.map(({ row, share }) => ({ note: toNote(row), share }));
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
  }
}
