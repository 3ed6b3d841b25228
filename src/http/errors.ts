// The one place where Cairn's errors become HTTP responses.
import { AppError, type ErrorCode } from "../core/errors.ts";

export const STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  duplicate_post: 409,
  secret_detected: 422,
  already_superseded: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
  idempotency_key_reused: 422,
  request_in_progress: 409,
};

const JSON_TYPE = "application/json";

export function errorBody(code: ErrorCode, message: string, postId?: string, secret?: { field: string; kind: string }) {
  if (secret !== undefined) return { error: { code, message, field: secret.field, kind: secret.kind } };
  return { error: postId === undefined ? { code, message } : { code, message, post_id: postId } };
}

export function errorResponse(error: AppError): Response {
  const headers: Record<string, string> = { "content-type": JSON_TYPE };
  if (error.code === "unauthorized") headers["www-authenticate"] = 'Bearer realm="cairn"';
  if (error.code === "rate_limited" && error.retryAfter !== undefined) headers["retry-after"] = String(error.retryAfter);
  if (error.code === "method_not_allowed") headers.allow = "POST";
  return new Response(JSON.stringify(errorBody(error.code, error.message, error.postId, error.secret)), { status: STATUS[error.code], headers });
}

export const routeNotFound = () =>
  new AppError("not_found", "No such route. The API lives under /v1; see /v1/openapi.json for every route and method.");

/**
 * GET or DELETE on /v1/mcp: the Streamable HTTP transport asks a server that
 * offers no stream and no sessions to answer 405, and the MCP SDK's client
 * reads only 405 as "none offered" (any other status is an error it reports).
 * Only POST is allowed, the one method of this kind (the header says so).
 */
export const mcpMethodNotAllowed = () =>
  new AppError(
    "method_not_allowed",
    "/v1/mcp takes POST only: this server offers no server-to-client stream (GET) and no sessions to end (DELETE). Send each JSON-RPC message as a POST.",
  );

export const internalError = (requestId: string) =>
  new AppError(
    "internal_error",
    `Something went wrong on the server (request id ${requestId}). It has been logged; retry later, or report the request id to the operator.`,
  );
