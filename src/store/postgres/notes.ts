// Notes on PostgreSQL: create (the duplicate check under the author's row
// lock, the search entry in the same transaction), read (no cache: replicas
// share the database), delete, search (one snapshot).
import type { SQL as BunSQL } from "bun";
import { desc, eq, inArray } from "drizzle-orm";
import type { DeleteOutcome, NewNote, NoteRecord, SearchRequest, SimilarQuery, SimilarRecord } from "../types.ts";
import { executor, type Db } from "./connection.ts";
import { contributors, decodeText, posts } from "./schema.ts";
import { indexNote, PostgresSearchSource, unindexNote } from "./search.ts";

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
};

function toNote(row: { id: string; contributorNo: number; title: string; body: string; tags: string[]; score: number; commentCount: number; createdAt: number }): NoteRecord {
  return {
    id: row.id,
    contributorNo: row.contributorNo,
    title: row.title,
    body: row.body,
    tags: row.tags,
    score: row.score,
    commentCount: row.commentCount,
    createdAt: Number(row.createdAt),
  };
}

export class PostgresNotes {
  constructor(
    private readonly db: Db,
    private readonly client: BunSQL,
  ) {}

  async create(note: NewNote, isDuplicate: (latest: { title: string; body: string; tags: string[] }) => boolean) {
    return this.db.transaction(async (tx): Promise<NoteRecord | { duplicateOf: string }> => {
      // The author's row lock orders this author's creates across every replica:
      // the duplicate check and the insert are one step.
      await tx.select({ no: contributors.contributorNo }).from(contributors).where(eq(contributors.contributorNo, note.contributorNo)).for("update");
      const [latest] = await tx
        .select({ id: posts.id, title: posts.title, body: posts.body, tags: posts.tags })
        .from(posts)
        .where(eq(posts.contributorNo, note.contributorNo))
        .orderBy(desc(posts.pk))
        .limit(1);
      if (latest && isDuplicate({ title: latest.title, body: latest.body, tags: latest.tags })) return { duplicateOf: latest.id };
      const [row] = await tx
        .insert(posts)
        .values({
          id: note.id,
          contributorNo: note.contributorNo,
          title: note.title,
          body: note.body,
          tags: note.tags,
          createdAt: note.createdAt,
        })
        .returning(noteColumns);
      await indexNote(executor(tx), { pk: row.pk, title: note.title, tags: note.tags, body: note.body });
      return toNote(row);
    });
  }

  async get(id: string): Promise<NoteRecord | null> {
    const [row] = (await this.client`SELECT id, contributor_no, title, body, tags, score, comment_count, created_at FROM posts WHERE id = ${id}`) as {
      id: string;
      contributor_no: number;
      title: string;
      body: string;
      tags: string[];
      score: number;
      comment_count: number;
      created_at: string;
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
    };
  }

  async delete(id: string, contributorNo: number): Promise<DeleteOutcome> {
    return this.db.transaction(async (tx): Promise<DeleteOutcome> => {
      const [note] = await tx
        .select({ pk: posts.pk, contributorNo: posts.contributorNo })
        .from(posts)
        .where(eq(posts.id, id))
        .for("update");
      if (!note) return "missing";
      if (note.contributorNo !== contributorNo) return "not_author";
      // Comments and votes go by ON DELETE CASCADE.
      await unindexNote(executor(tx), note.pk);
      await tx.delete(posts).where(eq(posts.pk, note.pk));
      return "deleted";
    });
  }

  async search(request: SearchRequest): Promise<NoteRecord[]> {
    if (request.words.length === 0 || request.limit <= 0) return [];
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

  async similar(id: string, query: SimilarQuery): Promise<SimilarRecord[]> {
    if (query.terms.length === 0 || query.limit <= 0) return [];
    // One snapshot for the note's own score, the ranking and the rows.
    return this.db.transaction(
      async (tx) => {
        const [self] = await tx.select({ pk: posts.pk }).from(posts).where(eq(posts.id, id));
        if (!self) return [];
        const source = new PostgresSearchSource(executor(tx));
        const rows = await source.similar(Number(self.pk), query, (pks) => tx.select(noteColumns).from(posts).where(inArray(posts.pk, pks)));
        return rows.map(({ row, share }) => ({ note: toNote(row), share }));
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
  }
}
