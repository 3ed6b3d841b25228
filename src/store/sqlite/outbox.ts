// The e-mail outbox on SQLite: rows are written inside the registration
// transaction (enqueue) and worked off by the sender in src/mail through the
// claim / mark methods. A claim is a lease: `leased_until` keeps other
// senders off the row while one delivers it, and a row whose lease ran out
// (the process died mid-send) is claimed again.
import type { Database } from "bun:sqlite";
import { and, asc, count, inArray, isNull, lte, or, sql } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type { MailKind, OutboxCounts, OutboxMail } from "../types.ts";
import type * as schema from "./schema.ts";
import { emailOutbox } from "./schema.ts";
import { onFirstUse } from "./on-first-use.ts";

/**
 * A row's address once it is sent or given up: the address is personal data
 * needed only to deliver, so it goes (the row stays, for the counts). The
 * column is NOT NULL, so an empty string rather than a migration.
 */
const FORGOTTEN = "";

/** last_error is a diagnostic, not a log: keep it short. */
const MAX_ERROR_CHARS = 500;

export class SqliteOutbox {
  /** Built on first use, after migrations have made the tables. */
  private readonly statements = onFirstUse(() => this.prepare());

  constructor(
    private readonly sqlite: Database,
    private readonly db: BunSQLiteDatabase<typeof schema>,
  ) {}

  private prepare() {
    const db = this.db;
    const now = sql.placeholder("now");
    const id = sql.placeholder("id");
    // Written so that SQLite can read the partial index email_outbox_pending.
    const due = and(
      isNull(emailOutbox.sentAt),
      isNull(emailOutbox.gaveUpAt),
      lte(emailOutbox.nextAttemptAt, now),
      or(isNull(emailOutbox.leasedUntil), lte(emailOutbox.leasedUntil, now)),
    );
    const pendingWithId = and(sql`${emailOutbox.id} = ${id}`, isNull(emailOutbox.sentAt));
    return {
      insert: db
        .insert(emailOutbox)
        .values({
          contributorNo: sql.placeholder("contributorNo"),
          recipient: sql.placeholder("recipient"),
          kind: sql.placeholder("kind"),
          createdAt: sql.placeholder("createdAt"),
          nextAttemptAt: sql.placeholder("createdAt"),
        })
        .prepare(),
      anyDue: db.select({ id: emailOutbox.id }).from(emailOutbox).where(due).limit(1).prepare(),
      claim: db
        .update(emailOutbox)
        .set({
          leasedUntil: sql`${sql.placeholder("leasedUntil")}`,
          attempts: sql`${emailOutbox.attempts} + 1`,
        })
        .where(
          inArray(
            emailOutbox.id,
            db
              .select({ id: emailOutbox.id })
              .from(emailOutbox)
              .where(due)
              .orderBy(asc(emailOutbox.nextAttemptAt), asc(emailOutbox.id))
              .limit(sql.placeholder("limit")),
          ),
        )
        .returning({
          id: emailOutbox.id,
          contributorNo: emailOutbox.contributorNo,
          recipient: emailOutbox.recipient,
          kind: emailOutbox.kind,
          createdAt: emailOutbox.createdAt,
          attempts: emailOutbox.attempts,
        })
        .prepare(),
      // `sent_at IS NULL` in every update: a row once sent is never touched again.
      sent: db
        .update(emailOutbox)
        .set({ sentAt: sql`${sql.placeholder("at")}`, leasedUntil: null, recipient: FORGOTTEN })
        .where(pendingWithId)
        .prepare(),
      failed: db
        .update(emailOutbox)
        .set({
          leasedUntil: null,
          lastError: sql`${sql.placeholder("error")}`,
          nextAttemptAt: sql`${sql.placeholder("nextAttemptAt")}`,
        })
        .where(pendingWithId)
        .prepare(),
      gaveUp: db
        .update(emailOutbox)
        .set({ leasedUntil: null, lastError: sql`${sql.placeholder("error")}`, gaveUpAt: sql`${sql.placeholder("at")}`, recipient: FORGOTTEN })
        .where(pendingWithId)
        .prepare(),
    };
  }

  /** Queues one mail; runs inside the caller's transaction. */
  enqueue(mail: { contributorNo: number; recipient: string; kind: MailKind; createdAt: number }): void {
    this.statements().insert.run(mail);
  }

  claimDue(now: number, limit: number, leaseMs: number): OutboxMail[] {
    // A plain read first: an idle poll takes no write lock.
    if (!this.statements().anyDue.get({ now })) return [];
    const claimed = this.sqlite
      .transaction(() => this.statements().claim.all({ now, limit, leasedUntil: now + leaseMs }))
      .immediate();
    return claimed.map((row) => ({ ...row, kind: row.kind as MailKind })).sort((a, b) => a.id - b.id);
  }

  markSent(id: number, at: number): void {
    this.statements().sent.run({ id, at });
  }

  markFailed(id: number, error: string, nextAttemptAt: number): void {
    this.statements().failed.run({ id, error: error.slice(0, MAX_ERROR_CHARS), nextAttemptAt });
  }

  markGivenUp(id: number, error: string, at: number): void {
    this.statements().gaveUp.run({ id, error: error.slice(0, MAX_ERROR_CHARS), at });
  }

  /** Drops the address of every sent or given-up row that still has one. */
  forgetFinishedAddresses(): void {
    this.sqlite
      .query("UPDATE email_outbox SET recipient = ? WHERE (sent_at IS NOT NULL OR gave_up_at IS NOT NULL) AND recipient <> ?")
      .run(FORGOTTEN, FORGOTTEN);
  }

  counts(): OutboxCounts {
    const row = this.db
      .select({
        pending: sql<number>`coalesce(sum(${emailOutbox.sentAt} IS NULL AND ${emailOutbox.gaveUpAt} IS NULL), 0)`,
        sent: count(emailOutbox.sentAt),
        gaveUp: sql<number>`coalesce(sum(${emailOutbox.gaveUpAt} IS NOT NULL AND ${emailOutbox.sentAt} IS NULL), 0)`,
      })
      .from(emailOutbox)
      .get()!;
    return { pending: Number(row.pending), sent: Number(row.sent), gaveUp: Number(row.gaveUp) };
  }
}
