// Comments on SQLite: the newest N of a note with its true count, and adding
// one (the note's comment count moves in the same write).
import { desc, eq, sql } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type { CommentRecord, IdempotencyCompletion } from "../types.ts";
import type { SqliteIdempotency } from "./idempotency.ts";
import type { GroupCommit } from "./group-commit.ts";
import type { SqliteNotes } from "./notes.ts";
import type * as schema from "./schema.ts";
import { comments, posts } from "./schema.ts";
import { onFirstUse } from "./on-first-use.ts";

export class SqliteComments {
  /** Built on first use, after migrations have made the tables. */
  private readonly statements = onFirstUse(() => this.prepare());

  constructor(
    private readonly db: BunSQLiteDatabase<typeof schema>,
    private readonly commit: GroupCommit,
    private readonly notes: SqliteNotes,
    private readonly idempotency: SqliteIdempotency,
  ) {}

  private prepare() {
    const db = this.db;
    const postPk = sql.placeholder("postPk");
    return {
      // The newest first, to be cut at the limit and reversed.
      newest: db
        .select({ contributorNo: comments.contributorNo, body: comments.body, createdAt: comments.createdAt })
        .from(comments)
        .where(eq(comments.postPk, postPk))
        .orderBy(desc(comments.pk))
        .limit(sql.placeholder("limit"))
        .prepare(),
      count: db.select({ commentCount: posts.commentCount }).from(posts).where(eq(posts.pk, postPk)).prepare(),
      insert: db
        .insert(comments)
        .values({ postPk, contributorNo: sql.placeholder("contributorNo"), body: sql.placeholder("body"), createdAt: sql.placeholder("createdAt") })
        .prepare(),
      bumpCount: db
        .update(posts)
        .set({ commentCount: sql`${posts.commentCount} + 1` })
        .where(eq(posts.pk, postPk))
        .returning({ commentCount: posts.commentCount })
        .prepare(),
    };
  }

  list(noteId: string, limit: number): { comments: CommentRecord[]; total: number } | null {
    const note = this.notes.locate(noteId);
    if (!note) return null;
    // Synchronous reads: no write runs between them, so the count and the list agree.
    const total = this.statements().count.get({ postPk: note.pk })!.commentCount;
    return { comments: this.statements().newest.all({ postPk: note.pk, limit }).reverse(), total };
  }

  add(
    noteId: string,
    comment: { contributorNo: number; body: string; createdAt: number },
    completion?: IdempotencyCompletion<{ comment: CommentRecord; commentCount: number } | null>,
  ) {
    return this.commit.write(() => {
      const added = this.insert(noteId, comment);
      this.idempotency.complete(completion, added);
      return added;
    });
  }

  private insert(noteId: string, comment: { contributorNo: number; body: string; createdAt: number }) {
    const note = this.notes.locate(noteId);
    if (!note) return null;
    this.notes.changed(noteId);
    this.statements().insert.run({ postPk: note.pk, ...comment });
    const { commentCount } = this.statements().bumpCount.get({ postPk: note.pk })!;
    return { comment, commentCount };
  }
}
