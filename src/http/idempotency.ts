// The HTTP side of idempotent writes (rules in src/core/idempotency.ts): the
// Idempotency-Key header, the request's fingerprint, how an answer is
// written down, and the stored answer sent back (with Idempotent-Replayed on
// a replay).
import type { AppError } from "../core/errors.ts";
import { parseIdempotencyKey, requestFingerprints, type AnswerSlot } from "../core/idempotency.ts";
import type { Cairn } from "../core/service.ts";
import type { StoredAnswer } from "../store/types.ts";
import { errorBody, STATUS } from "./errors.ts";

export const IDEMPOTENCY_HEADER = "idempotency-key";
const JSON_CONTENT_TYPE = "application/json;charset=utf-8";

/** The key of a request, or undefined without the header (a malformed key is 400). */
export const idempotencyKeyOf = (request: Request): string | undefined => parseIdempotencyKey(request.headers.get(IDEMPOTENCY_HEADER));

function renderAs(okStatus: number) {
  return (outcome: { value: unknown } | { error: AppError }): StoredAnswer =>
    "error" in outcome
      ? { status: STATUS[outcome.error.code], body: JSON.stringify(errorBody(outcome.error.code, outcome.error.message, outcome.error.postId, outcome.error.secret)) }
      : { status: okStatus, body: JSON.stringify(outcome.value) };
}

/**
 * Runs `write` under the request's key and answers the stored answer: the same
 * status and bytes for the first request and every replay.
 */
export async function idempotentResponse(
  cairn: Cairn,
  contributorNo: number,
  key: string,
  route: string,
  body: unknown,
  okStatus: number,
  set: { headers: Record<string, string | number> },
  write: (slot: AnswerSlot) => Promise<unknown>,
): Promise<Response> {
  const { answer, replayed } = await cairn.idempotent(contributorNo, { key, ...requestFingerprints(route, body), render: renderAs(okStatus) }, write);
  const headers: Record<string, string> = { "content-type": JSON_CONTENT_TYPE };
  if (replayed) headers["idempotent-replayed"] = "true";
  for (const name in set.headers) {
    headers[name] = String(set.headers[name]);
    delete set.headers[name];
  }
  return new Response(answer.body, { status: answer.status, headers });
}
