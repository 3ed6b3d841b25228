// The e-mail outbox on PostgreSQL: rows are written in the registration's
// transaction (contributors.ts) and worked off by the sender in src/mail;
// claims are leases taken with FOR UPDATE SKIP LOCKED, so senders on several
// replicas claim disjoint rows.
import { and, eq, isNull, sql } from "drizzle-orm";
import type { MailKind, OutboxCounts, OutboxMail } from "../types.ts";
import type { Db } from "./connection.ts";
import { decodeText, emailOutbox } from "./schema.ts";

const MAX_ERROR_CHARS = 500;
/** A sent or given-up row's address: personal data needed only to deliver (as on SQLite, src/store/sqlite/outbox.ts). */
const FORGOTTEN = "";

export class PostgresOutbox {
  constructor(private readonly db: Db) {}

  async claimDue(now: number, limit: number, leaseMs: number): Promise<OutboxMail[]> {
    // SKIP LOCKED: senders on several replicas claim disjoint rows without
    // waiting on each other. The candidates are a MATERIALIZED CTE: as an
    // `IN (subquery)` PostgreSQL may run the subquery more than once, and each
    // run skips the rows the previous one locked, so a claim of 1 took every
    // due row (found by the two-replica suite).
    const rows = await this.db.execute<{ id: string; contributorNo: number; recipient: string; kind: string; createdAt: string; attempts: number }>(sql`
      WITH claimable AS MATERIALIZED (
        SELECT id FROM email_outbox
         WHERE sent_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= ${now}
           AND (leased_until IS NULL OR leased_until <= ${now})
         ORDER BY next_attempt_at, id
         LIMIT ${limit}
         FOR UPDATE SKIP LOCKED
      )
      UPDATE email_outbox o SET leased_until = ${now + leaseMs}, attempts = o.attempts + 1
        FROM claimable WHERE o.id = claimable.id
      RETURNING o.id, o.contributor_no AS "contributorNo", o.recipient, o.kind, o.created_at AS "createdAt", o.attempts`);
    return rows
      .map((row) => ({
        id: Number(row.id),
        contributorNo: Number(row.contributorNo),
        recipient: decodeText(row.recipient),
        kind: row.kind as MailKind,
        createdAt: Number(row.createdAt),
        attempts: Number(row.attempts),
      }))
      .sort((a, b) => a.id - b.id);
  }

  async markSent(id: number, at: number): Promise<void> {
    await this.db.update(emailOutbox).set({ sentAt: at, leasedUntil: null, recipient: FORGOTTEN }).where(and(eq(emailOutbox.id, id), isNull(emailOutbox.sentAt)));
  }

  async markFailed(id: number, error: string, nextAttemptAt: number): Promise<void> {
    await this.db
      .update(emailOutbox)
      .set({ leasedUntil: null, lastError: error.slice(0, MAX_ERROR_CHARS), nextAttemptAt })
      .where(and(eq(emailOutbox.id, id), isNull(emailOutbox.sentAt)));
  }

  async markGivenUp(id: number, error: string, at: number): Promise<void> {
    await this.db
      .update(emailOutbox)
      .set({ leasedUntil: null, lastError: error.slice(0, MAX_ERROR_CHARS), gaveUpAt: at, recipient: FORGOTTEN })
      .where(and(eq(emailOutbox.id, id), isNull(emailOutbox.sentAt)));
  }

  async counts(): Promise<OutboxCounts> {
    const [row] = await this.db
      .select({
        pending: sql<string>`count(*) FILTER (WHERE ${emailOutbox.sentAt} IS NULL AND ${emailOutbox.gaveUpAt} IS NULL)`,
        sent: sql<string>`count(${emailOutbox.sentAt})`,
        gaveUp: sql<string>`count(*) FILTER (WHERE ${emailOutbox.gaveUpAt} IS NOT NULL AND ${emailOutbox.sentAt} IS NULL)`,
      })
      .from(emailOutbox);
    return { pending: Number(row.pending), sent: Number(row.sent), gaveUp: Number(row.gaveUp) };
  }
}
