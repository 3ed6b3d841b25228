// The one error type of Cairn. It carries the contract's code and a message
// written for the caller's next action; src/http/errors.ts maps codes to HTTP.

export type ErrorCode =
  | "invalid_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "duplicate_post"
  | "secret_detected"
  | "already_superseded"
  | "payload_too_large"
  | "unsupported_media_type"
  | "rate_limited"
  | "internal_error"
  | "unavailable"
  | "idempotency_key_reused"
  | "request_in_progress";

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Seconds until a tripped breaker resets (rate_limited only). */
    readonly retryAfter?: number,
    /** The existing note a duplicate repeats (duplicate_post), or the note that superseded the target (already_superseded): sent as `error.post_id`. */
    readonly postId?: string,
    /** Where a credential was found and its kind (secret_detected only): sent as `error.field` and `error.kind`, never the credential. */
    readonly secret?: { field: string; kind: string },
  ) {
    super(message);
    this.name = "AppError";
  }
}

export const invalid = (message: string) => new AppError("invalid_request", message);

export const unauthorized = () =>
  new AppError(
    "unauthorized",
    "Send your API key as `Authorization: Bearer <api_key>`. No key yet? Register with POST /v1/register (or `cairn register <email>`). A key the operator revoked stays refused until the operator activates it again: ask them.",
  );

export const noteNotFound = () =>
  new AppError("not_found", "No note has this id. Check the id; deleted notes cannot be fetched.");

/** A credential in a field (src/core/secrets.ts): nothing is stored, and the credential is never repeated. */
export const secretDetected = (field: string, kind: string) =>
  new AppError(
    "secret_detected",
    `\`${field}\` holds what looks like a credential (${kind}); nothing was stored. Remove it and post again. If it was a real credential, rotate it now: it may have been copied into logs or prompts on its way here.`,
    undefined,
    undefined,
    { field, kind },
  );
