// Idempotent writes (docs/design.md, "Idempotent writes"): a contributor's
// `Idempotency-Key` on POST /v1/posts, …/comments and …/vote. The first
// request reserves the key (one atomic step in the store), runs, and its
// answer is stored in the same transaction as the write it answers; a replay
// of the same key and request gets that answer again and changes nothing.
import type { IdempotencyCompletion, IdempotencyReservation, StoredAnswer } from "../store/types.ts";
import { AppError, invalid } from "./errors.ts";

/** How long a key holds its first answer. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/**
 * How long a reservation blocks other requests with its key when its request
 * never finished (the process died). Longer than any request may take; a
 * request still running past it cannot store its write (the store checks the
 * reservation's token in the write's transaction).
 */
export const IDEMPOTENCY_LEASE_MS = 60_000;
/** Keys kept per contributor at most; past it the oldest go first. */
export const IDEMPOTENCY_KEYS_PER_CONTRIBUTOR = 1_000;
/** Expired keys removed per new reservation at most (found by an index on the expiry: no scan). */
export const IDEMPOTENCY_PRUNE_BATCH = 32;

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** The header's value, or undefined when absent; a present but malformed key is 400. */
export function parseIdempotencyKey(raw: string | null | undefined): string | undefined {
  if (raw === null || raw === undefined) return undefined;
  if (!KEY_PATTERN.test(raw)) {
    throw invalid("`Idempotency-Key` must be 1 to 255 printable ASCII characters (a UUID is a good choice).");
  }
  return raw;
}

/**
 * What identifies "the same request" for a key: the route (with its note id)
 * and the body as JSON with every object's keys sorted (a client that
 * re-serialises a map in another order sends the same request). With it,
 * when it differs, the fingerprint versions before sorted keys stored (the
 * body's keys in the order sent): still matched, so a retry across an upgrade
 * replays. Such keys expire within IDEMPOTENCY_TTL_MS of the upgrade.
 */
export function requestFingerprints(route: string, body: unknown): { fingerprint: string; formerFingerprint?: string } {
  const sorted = JSON.stringify(sortedKeys(body ?? null));
  const sent = JSON.stringify(body ?? null);
  const fingerprint = fingerprintOf(route, sorted);
  return sent === sorted ? { fingerprint } : { fingerprint, formerFingerprint: fingerprintOf(route, sent) };
}

function fingerprintOf(route: string, json: string): string {
  return new Bun.CryptoHasher("sha256").update(route).update("\n").update(json).digest("hex");
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== "object") return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortedKeys((value as Record<string, unknown>)[key]);
  return sorted;
}

/** An idempotent call as the HTTP layer describes it: the key, what the request was, and how an answer is written down. */
export interface IdempotentCall {
  key: string;
  fingerprint: string;
  /** The same request as versions before sorted keys fingerprinted it, when that differs (requestFingerprints). */
  formerFingerprint?: string;
  /** The answer the caller would get for a value (or error) of the core method, as it is stored and sent. */
  render: (outcome: { value: unknown } | { error: AppError }) => StoredAnswer;
}

/**
 * Handed to a core write method: the store completes the reservation with the
 * answer `answer` builds from the store's outcome, inside the write's
 * transaction (both or neither).
 */
export type AnswerSlot = Omit<IdempotencyCompletion<unknown>, "answer"> & { render: IdempotentCall["render"]; recorded?: StoredAnswer };

/**
 * The completion the store runs: interprets its outcome as the core method
 * would, and keeps what it stored. `noteOf` names the note the answer is
 * about: deleting that note later empties the stored answer (a replay is then
 * the note's 404), so no text outlives its note.
 */
export function completionFor<O>(slot: AnswerSlot | undefined, interpret: (outcome: O) => unknown, noteOf: (outcome: O) => string | null): IdempotencyCompletion<O> | undefined {
  if (!slot) return undefined;
  return {
    contributorNo: slot.contributorNo,
    key: slot.key,
    token: slot.token,
    answer(outcome) {
      let answer: StoredAnswer;
      try {
        answer = slot.render({ value: interpret(outcome) });
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        answer = slot.render({ error });
      }
      slot.recorded = answer;
      return { ...answer, noteId: noteOf(outcome) };
    },
  };
}

export const keyReused = () =>
  new AppError(
    "idempotency_key_reused",
    "This Idempotency-Key was already used with another request (another body or route); nothing was done. Use a fresh key for a new write.",
  );

export const requestInProgress = () =>
  new AppError(
    "request_in_progress",
    "The first request with this Idempotency-Key is still running, or its server stopped without answering less than a minute ago; nothing was done by this one. Retry with the same key in a few seconds: you get the first request's answer, or, once its server is known to have stopped (within a minute), this request runs.",
  );

/** What a reservation means for the request that asked. */
export function reservationError(reservation: IdempotencyReservation): AppError | null {
  switch (reservation.kind) {
    case "mismatch":
      return keyReused();
    case "in_progress":
      return requestInProgress();
    default:
      return null;
  }
}
