// Idempotency keys on SQLite (rules in src/core/idempotency.ts): a
// reservation is one write (BEGIN IMMEDIATE serialises every writer of the
// file, across processes), so two requests with one key never both run; the
// answer is stored by `complete`, inside the write it answers.
import type { Database } from "bun:sqlite";
import {
  IdempotencyReservationLost,
  type IdempotencyCompletion,
  type IdempotencyReservation,
  type ReserveIdempotencyKey,
} from "../types.ts";
import type { GroupCommit } from "./group-commit.ts";
import { onFirstUse } from "./on-first-use.ts";

interface KeyRow {
  fingerprint: string;
  status: number | null;
  response: string | null;
  expiresAt: number;
  leasedUntil: number;
}

export class SqliteIdempotency {
  private readonly statements = onFirstUse(() => this.prepare());

  constructor(
    private readonly sqlite: Database,
    private readonly commit: GroupCommit,
  ) {}

  private prepare() {
    const q = this.sqlite;
    return {
      row: q.query<KeyRow, [number, string]>(
        `SELECT fingerprint, status, response, expires_at AS expiresAt, leased_until AS leasedUntil
           FROM idempotency_keys WHERE contributor_no = ? AND key = ?`,
      ),
      // Inserts, or takes over a row that expired or whose request never finished.
      claim: q.query<unknown, [number, string, string, string, number, number, number]>(
        `INSERT INTO idempotency_keys (contributor_no, key, fingerprint, token, status, response, created_at, expires_at, leased_until)
         VALUES (?1, ?2, ?3, ?4, NULL, NULL, ?5, ?6, ?7)
         ON CONFLICT (contributor_no, key) DO UPDATE SET
           fingerprint = excluded.fingerprint, token = excluded.token, status = NULL, response = NULL,
           created_at = excluded.created_at, expires_at = excluded.expires_at, leased_until = excluded.leased_until`,
      ),
      // Keys older than the contributor's cap-th newest go (index on contributor, created_at).
      cap: q.query<unknown, [number, number]>(
        `DELETE FROM idempotency_keys WHERE contributor_no = ?1 AND created_at < (
           SELECT created_at FROM idempotency_keys WHERE contributor_no = ?1 ORDER BY created_at DESC LIMIT 1 OFFSET ?2 - 1)`,
      ),
      // A bounded batch of expired keys, found by the expiry index.
      prune: q.query<unknown, [number, number]>(
        `DELETE FROM idempotency_keys WHERE rowid IN (
           SELECT rowid FROM idempotency_keys WHERE expires_at <= ?1 ORDER BY expires_at LIMIT ?2)`,
      ),
      complete: q.query<unknown, [number, string, number, string, string, string | null]>(
        `UPDATE idempotency_keys SET status = ?3, response = ?4, note_id = ?6
          WHERE contributor_no = ?1 AND key = ?2 AND token = ?5 AND status IS NULL`,
      ),
      forgetNote: q.query<unknown, [string]>("UPDATE idempotency_keys SET response = NULL WHERE note_id = ? AND status IS NOT NULL"),
      release: q.query<unknown, [number, string, string]>(
        "DELETE FROM idempotency_keys WHERE contributor_no = ? AND key = ? AND token = ? AND status IS NULL",
      ),
    };
  }

  reserve(input: ReserveIdempotencyKey): Promise<IdempotencyReservation> {
    return this.commit.write((): IdempotencyReservation => {
      const s = this.statements();
      const row = s.row.get(input.contributorNo, input.key);
      const live = row !== null && row.expiresAt > input.now;
      if (live && row.fingerprint !== input.fingerprint && row.fingerprint !== input.formerFingerprint) return { kind: "mismatch" };
      if (live && row.status !== null) return row.response === null ? { kind: "gone" } : { kind: "replay", answer: { status: row.status, body: row.response } };
      if (live && row.leasedUntil > input.now) return { kind: "in_progress" };
      s.claim.run(input.contributorNo, input.key, input.fingerprint, input.token, input.now, input.expiresAt, input.leasedUntil);
      s.cap.run(input.contributorNo, input.keepPerContributor);
      s.prune.run(input.now, input.pruneBatch);
      return { kind: "reserved" };
    });
  }

  release(contributorNo: number, key: string, token: string): Promise<void> {
    return this.commit.write(() => {
      this.statements().release.run(contributorNo, key, token);
    });
  }

  /** The outcome, after its answer is stored (when the write is idempotent): `return answered(completion, outcome)`. */
  answered<O>(completion: IdempotencyCompletion<O> | undefined, outcome: O): O {
    this.complete(completion, outcome);
    return outcome;
  }

  /** Inside a note's delete: the answers about it lose their text (a replay is then the note's 404). */
  forgetNote(id: string): void {
    this.statements().forgetNote.run(id);
  }

  /** Inside a write: stores the answer on the reservation, or throws (rolling the write back) when the reservation is no longer ours. */
  complete<O>(completion: IdempotencyCompletion<O> | undefined, outcome: O): void {
    if (!completion) return;
    const answer = completion.answer(outcome);
    const changed = this.statements().complete.run(completion.contributorNo, completion.key, answer.status, answer.body, completion.token, answer.noteId).changes;
    if (changed !== 1) throw new IdempotencyReservationLost("the idempotency key's reservation was taken over");
  }
}
