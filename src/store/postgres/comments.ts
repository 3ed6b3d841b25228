// Comments on PostgreSQL: the newest N of a note with its true count (one
// snapshot), and adding one (the count moves under the note's row lock).
import { desc, eq, sql } from "drizzle-orm";
import type { CommentRecord, IdempotencyCompletion } from "../types.ts";
import { answered } from "./idempotency.ts";
import type { Db } from "./connection.ts";
import type { NoteViews } from "./note-views.ts";
import { comments, posts } from "./schema.ts";

export class PostgresComments {
  constructor(
    private readonly db: Db,
    /** A comment committed here drops the note's view at once (its count changed; other replicas read note_log). */
    private readonly views: NoteViews,
  ) {}

  async list(noteId: string, limit: number): Promise<{ comments: CommentRecord[]; total: number } | null> {
    // One snapshot: the count and the list agree while other replicas comment.
    return this.db.transaction(
      async (tx) => {
        const [note] = await tx.select({ pk: posts.pk, commentCount: posts.commentCount }).from(posts).where(eq(posts.id, noteId));
        if (!note) return null;
        const rows = await tx
          .select({ contributorNo: comments.contributorNo, body: comments.body, createdAt: comments.createdAt })
          .from(comments)
          .where(eq(comments.postPk, note.pk))
          .orderBy(desc(comments.createdAt), desc(comments.pk))
          .limit(limit);
        return { comments: rows.reverse().map((row) => ({ ...row, createdAt: Number(row.createdAt) })), total: note.commentCount };
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
  }

  async add(
    noteId: string,
    comment: { contributorNo: number; body: string; createdAt: number },
    completion?: IdempotencyCompletion<{ comment: CommentRecord; commentCount: number } | null>,
  ) {
    const added = await this.db.transaction(async (tx) => {
      // The count goes up under the note's row lock: exact under concurrent comments.
      const [note] = await tx
        .update(posts)
        .set({ commentCount: sql`${posts.commentCount} + 1` })
        .where(eq(posts.id, noteId))
        .returning({ pk: posts.pk, commentCount: posts.commentCount });
      if (!note) return answered(tx, completion, null);
      await tx.insert(comments).values({ postPk: note.pk, ...comment });
      return answered(tx, completion, { comment, commentCount: note.commentCount });
    });
    this.views.changed([noteId]);
    return added;
  }
}
