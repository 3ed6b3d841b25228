// Votes on SQLite: one vote per contributor and note, the note's net score
// moved by the difference in the same write (never on one's own note).
import { and, eq, sql } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type { IdempotencyCompletion, VoteOutcome, VoteValue } from "../types.ts";
import type { SqliteIdempotency } from "./idempotency.ts";
import type { GroupCommit } from "./group-commit.ts";
import type { SqliteNotes } from "./notes.ts";
import type * as schema from "./schema.ts";
import { posts, votes } from "./schema.ts";
import { onFirstUse } from "./on-first-use.ts";

export class SqliteVotes {
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
    const voteOf = and(eq(votes.postPk, postPk), eq(votes.contributorNo, sql.placeholder("contributorNo")));
    return {
      vote: db.select({ value: votes.value }).from(votes).where(voteOf).prepare(),
      delete: db.delete(votes).where(voteOf).prepare(),
      upsert: db
        .insert(votes)
        .values({ postPk, contributorNo: sql.placeholder("contributorNo"), value: sql.placeholder("value"), createdAt: sql.placeholder("at") })
        .onConflictDoUpdate({
          target: [votes.postPk, votes.contributorNo],
          set: { value: sql`excluded.value`, createdAt: sql`excluded.created_at` },
        })
        .prepare(),
      addScore: db
        .update(posts)
        .set({ score: sql`${posts.score} + ${sql.placeholder("delta")}` })
        .where(eq(posts.pk, postPk))
        .returning({ score: posts.score })
        .prepare(),
      score: db.select({ score: posts.score }).from(posts).where(eq(posts.pk, postPk)).prepare(),
    };
  }

  // The read of the previous vote and the writes run in one write
  // transaction: BEGIN IMMEDIATE keeps every other writer out meanwhile.
  set(noteId: string, contributorNo: number, value: VoteValue, at: number, completion?: IdempotencyCompletion<VoteOutcome>): Promise<VoteOutcome> {
    return this.commit.write((): VoteOutcome => {
      const outcome = this.apply(noteId, contributorNo, value, at);
      this.idempotency.complete(completion, outcome);
      return outcome;
    });
  }

  private apply(noteId: string, contributorNo: number, value: VoteValue, at: number): VoteOutcome {
    const note = this.notes.locate(noteId);
    if (!note) return { kind: "missing" };
    if (note.contributorNo === contributorNo) return { kind: "own_note" };
    this.notes.changed(noteId);
    const key = { postPk: note.pk, contributorNo };
    const previous = (this.statements().vote.get(key)?.value ?? 0) as VoteValue;
    if (previous === value) return { kind: "ok", score: this.statements().score.get(key)!.score, value };
    if (value === 0) this.statements().delete.run(key);
    else this.statements().upsert.run({ ...key, value, at });
    const { score } = this.statements().addScore.get({ ...key, delta: value - previous })!;
    this.notes.scored(note.pk, score);
    return { kind: "ok", score, value };
  }
}
