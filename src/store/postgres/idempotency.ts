// Idempotency keys on PostgreSQL (rules in src/core/idempotency.ts). A
// reservation is one transaction holding the key's row lock: requests with
// one key on any replica are ordered by it (the second waits for the first's
// reservation to commit, then sees it). The answer is stored by `complete`,
// in the transaction of the write it answers.
import { sql } from "drizzle-orm";
import {
  IdempotencyReservationLost,
  type IdempotencyCompletion,
  type IdempotencyReservation,
  type ReserveIdempotencyKey,
} from "../types.ts";
import type { ReservedSQL } from "bun";
import type { Db, Tx } from "./connection.ts";

export class PostgresIdempotency {
  constructor(private readonly db: Db) {}

  async reserve(input: ReserveIdempotencyKey): Promise<IdempotencyReservation> {
    const { contributorNo, key } = input;
    // A new key (the usual case) in one statement, one round trip: the insert,
    // a bounded batch of expired keys (found by the expiry index; rows another
    // replica is pruning are skipped) and the contributor's keys past the cap
    // (index on contributor, created_at). A key that exists already waits here
    // for a concurrent reservation to commit, then is examined below.
    const [fresh] = await this.db.execute<{ inserted: number }>(sql`
      WITH inserted AS (
        INSERT INTO idempotency_keys (contributor_no, key, fingerprint, token, created_at, expires_at, leased_until)
        VALUES (${contributorNo}, ${key}, ${input.fingerprint}, ${input.token}, ${input.now}, ${input.expiresAt}, ${input.leasedUntil})
        ON CONFLICT (contributor_no, key) DO NOTHING RETURNING 1),
      pruned AS (
        DELETE FROM idempotency_keys WHERE (contributor_no, key) IN (
          SELECT contributor_no, key FROM idempotency_keys WHERE expires_at <= ${input.now}
           ORDER BY expires_at LIMIT ${input.pruneBatch} FOR UPDATE SKIP LOCKED) RETURNING 1),
      capped AS (
        DELETE FROM idempotency_keys WHERE contributor_no = ${contributorNo} AND created_at < (
          SELECT created_at FROM idempotency_keys WHERE contributor_no = ${contributorNo}
           ORDER BY created_at DESC LIMIT 1 OFFSET ${input.keepPerContributor - 1}) RETURNING 1)
      SELECT (SELECT count(*) FROM inserted)::int AS inserted, (SELECT count(*) FROM pruned) + (SELECT count(*) FROM capped) AS removed`);
    if (Number(fresh.inserted) === 1) return { kind: "reserved" };
    return this.db.transaction(async (tx): Promise<IdempotencyReservation> => {
      const [row] = await tx.execute<{ fingerprint: string; status: number | null; response: string | null; expires_at: string; leased_until: string }>(sql`
        SELECT fingerprint, status, response, expires_at, leased_until FROM idempotency_keys
         WHERE contributor_no = ${contributorNo} AND key = ${key} FOR UPDATE`);
      if (row === undefined) {
        // Released (or pruned) since: claim it afresh, or let the request that did win.
        const again = await tx.execute(sql`
          INSERT INTO idempotency_keys (contributor_no, key, fingerprint, token, created_at, expires_at, leased_until)
          VALUES (${contributorNo}, ${key}, ${input.fingerprint}, ${input.token}, ${input.now}, ${input.expiresAt}, ${input.leasedUntil})
          ON CONFLICT (contributor_no, key) DO NOTHING RETURNING 1 AS inserted`);
        return again.length === 1 ? { kind: "reserved" } : { kind: "in_progress" };
      }
      const live = Number(row.expires_at) > input.now;
      if (live && row.fingerprint !== input.fingerprint && row.fingerprint !== input.formerFingerprint) return { kind: "mismatch" };
      if (live && row.status !== null) return row.response === null ? { kind: "gone" } : { kind: "replay", answer: { status: row.status, body: row.response } };
      if (live && Number(row.leased_until) > input.now) return { kind: "in_progress" };
      // Expired, or its request never finished: taken over.
      await tx.execute(sql`
        UPDATE idempotency_keys SET fingerprint = ${input.fingerprint}, token = ${input.token}, status = NULL, response = NULL,
               created_at = ${input.now}, expires_at = ${input.expiresAt}, leased_until = ${input.leasedUntil}
         WHERE contributor_no = ${contributorNo} AND key = ${key}`);
      return { kind: "reserved" };
    });
  }

  async release(contributorNo: number, key: string, token: string): Promise<void> {
    await this.db.execute(sql`
      DELETE FROM idempotency_keys WHERE contributor_no = ${contributorNo} AND key = ${key} AND token = ${token} AND status IS NULL`);
  }
}

/** Inside a write's transaction: stores the answer on the reservation, or throws (rolling the write back) when it is no longer ours. */
export async function completeIdempotency<O>(tx: Tx, completion: IdempotencyCompletion<O> | undefined, outcome: O): Promise<void> {
  if (!completion) return;
  const answer = completion.answer(outcome);
  const updated = await tx.execute(sql`
    UPDATE idempotency_keys SET status = ${answer.status}, response = ${answer.body}, note_id = ${answer.noteId}
     WHERE contributor_no = ${completion.contributorNo} AND key = ${completion.key} AND token = ${completion.token} AND status IS NULL
     RETURNING 1 AS done`);
  if (updated.length !== 1) throw new IdempotencyReservationLost("the idempotency key's reservation was taken over");
}

/** The outcome, after its answer is stored (when the write is idempotent): `return answered(tx, completion, outcome)`. */
export async function answered<O>(tx: Tx, completion: IdempotencyCompletion<O> | undefined, outcome: O): Promise<O> {
  await completeIdempotency(tx, completion, outcome);
  return outcome;
}

// The same two steps on a Bun.SQL transaction (the note writes of notes.ts run there, not in Drizzle's).

/** Inside a write's transaction on a reserved connection: stores the answer, or throws (the write rolls back) when the reservation is no longer ours. */
export async function answeredOn<O, V extends O>(tx: ReservedSQL, completion: IdempotencyCompletion<O> | undefined, outcome: V): Promise<V> {
  if (!completion) return outcome;
  const answer = completion.answer(outcome);
  const updated = (await tx`
    UPDATE idempotency_keys SET status = ${answer.status}, response = ${answer.body}, note_id = ${answer.noteId}
     WHERE contributor_no = ${completion.contributorNo} AND key = ${completion.key} AND token = ${completion.token} AND status IS NULL
     RETURNING 1 AS done`) as unknown[];
  if (updated.length !== 1) throw new IdempotencyReservationLost("the idempotency key's reservation was taken over");
  return outcome;
}

/** Inside a note's delete on a reserved connection: the answers about it lose their text. */
export async function forgetNoteAnswersOn(tx: ReservedSQL, id: string): Promise<void> {
  await tx`UPDATE idempotency_keys SET response = NULL WHERE note_id = ${id} AND status IS NOT NULL`;
}
