// Request bodies: JSON only, read as a stream and refused once past the limit,
// so an oversized body is never held in memory whole.
import { AppError, invalid } from "../core/errors.ts";
import { LIMITS } from "../core/limits.ts";

export const tooLarge = (limit: number) =>
  new AppError(
    "payload_too_large",
    `The request body is over the limit of ${limit} bytes (${Math.round(limit / 1024)} KiB). Send a smaller body.`,
  );

const unsupported = () =>
  new AppError("unsupported_media_type", "Send the body as JSON with the header `Content-Type: application/json`.");

export function bodyLimitFor(path: string): number {
  return path === "/v1/web/events" ? LIMITS.webEventBytes : LIMITS.requestBytes;
}

/** Rejects a declared Content-Length over the limit before anything is read. */
export function checkDeclaredLength(request: Request, limit: number): void {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
}

export function isJsonType(contentType: string | null): boolean {
  if (!contentType) return false;
  const type = contentType.split(";")[0].trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/** The body's bytes, refused once past the limit; a body of a declared length (within the limit, checked before) is read whole, at once. */
async function readBytes(request: Request, body: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  if (request.headers.get("content-length") !== null && request.headers.get("transfer-encoding") === null) {
    // The server reads no more than the declared length: one native read, not a stream of chunks
    // (the stream's reads were ~2% of the serving thread under a write load of ~2 KB notes, docs/benchmarks.md).
    const bytes = await request.bytes();
    if (bytes.byteLength > limit) throw tooLarge(limit);
    return bytes;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

const decoder = new TextDecoder("utf-8", { fatal: false });

/** The client closed the connection (or stopped sending) before its body was whole: its fault, not a bug of ours. */
const bodyCutShort = () =>
  invalid("The request body ended before it was whole (the connection closed or stalled). Send the whole body again.");

export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  checkDeclaredLength(request, limit);
  if (!request.body) return undefined;
  let bytes: Uint8Array;
  try {
    bytes = await readBytes(request, request.body, limit);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw bodyCutShort();
  }
  if (bytes.byteLength === 0) return undefined;
  if (!isJsonType(request.headers.get("content-type"))) throw unsupported();
  const text = decoder.decode(bytes);
  if (nestingDepth(text) > MAX_DEPTH) {
    throw invalid(`The request body is nested more than ${MAX_DEPTH} levels deep; send a flat JSON object.`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid("The request body is not valid JSON. Send one JSON object, e.g. {\"title\": \"…\", \"body\": \"…\"}.");
  }
  dropCoercionTraps(value);
  return value;
}

/**
 * Removes `toString` and `valueOf` fields, at any depth: unknown fields are
 * ignored anyway, and an object whose toString is a string cannot be turned
 * into text, which made Elysia's validation error itself throw, a 500
 * (found by the property test: {"post_id": {"toString": ""}}).
 */
function dropCoercionTraps(value: unknown): void {
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const item of value) dropCoercionTraps(item);
    return;
  }
  const record = value as Record<string, unknown>;
  if (Object.hasOwn(record, "toString")) Reflect.deleteProperty(record, "toString");
  if (Object.hasOwn(record, "valueOf")) Reflect.deleteProperty(record, "valueOf");
  for (const key in record) dropCoercionTraps(record[key]);
}

/** No request of the contract nests beyond 3 levels; deep bodies are refused before parsing. */
export const MAX_DEPTH = 32;

/** The deepest [ / { nesting in a JSON text, ignoring brackets inside strings. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \\ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b /* [ { */) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x5d || c === 0x7d /* ] } */) depth--;
  }
  return deepest;
}
