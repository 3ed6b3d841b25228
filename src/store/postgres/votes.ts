// Votes on PostgreSQL: one per contributor and note, the net score moved by
// the difference under the note's row lock (exact across replicas).
import { and, eq, sql } from "drizzle-orm";
import type { IdempotencyCompletion, VoteOutcome, VoteValue } from "../types.ts";
import { answered } from "./idempotency.ts";
import type { Db } from "./connection.ts";
import type { NoteViews } from "./note-views.ts";
import { noteTags, posts, votes } from "./schema.ts";

export class PostgresVotes {
  constructor(
    private readonly db: Db,
    /** A vote committed here drops the note's view at once (other replicas read note_log). */
    private readonly views: NoteViews,
  ) {}

  async set(noteId: string, contributorNo: number, value: VoteValue, at: number, completion?: IdempotencyCompletion<VoteOutcome>): Promise<VoteOutcome> {
    const outcome = await this.db.transaction(async (tx): Promise<VoteOutcome> => {
      // The note's row lock orders every vote on it: the previous vote read here is still current at the update.
      const [note] = await tx
        .select({ pk: posts.pk, contributorNo: posts.contributorNo, score: posts.score })
        .from(posts)
        .where(eq(posts.id, noteId))
        .for("update");
      if (!note) return answered(tx, completion, { kind: "missing" });
      if (note.contributorNo === contributorNo) return answered(tx, completion, { kind: "own_note" });
      const key = and(eq(votes.postPk, note.pk), eq(votes.contributorNo, contributorNo));
      const [previousRow] = await tx.select({ value: votes.value }).from(votes).where(key);
      const previous = (previousRow?.value ?? 0) as VoteValue;
      if (previous === value) return answered(tx, completion, { kind: "ok", score: note.score, value });
      if (value === 0) await tx.delete(votes).where(key);
      else {
        await tx
          .insert(votes)
          .values({ postPk: note.pk, contributorNo, value, createdAt: at })
          .onConflictDoUpdate({ target: [votes.postPk, votes.contributorNo], set: { value, createdAt: at } });
      }
      const [{ score }] = await tx
        .update(posts)
        .set({ score: sql`${posts.score} + ${value - previous}` })
        .where(eq(posts.pk, note.pk))
        .returning({ score: posts.score });
      await tx.update(noteTags).set({ score }).where(eq(noteTags.postPk, note.pk));
      return answered(tx, completion, { kind: "ok", score, value });
    });
    this.views.changed([noteId]);
    return outcome;
  }
}
