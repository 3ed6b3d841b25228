// One HTTP exchange with the server; the answer's body is kept as raw bytes.

export interface ApiRequest {
  method: "GET" | "POST" | "DELETE";
  /** Path below the base URL, starting with /v1/. */
  path: string;
  /** Sent unchanged as application/json. */
  body?: string | Uint8Array;
  /** Sent as the Idempotency-Key header (POST /v1/posts, comments, vote). */
  idempotencyKey?: string;
}

export interface ApiResponse {
  status: number;
  body: Uint8Array;
  location: string | null;
  /** The Retry-After header of a 429, in seconds as sent. */
  retryAfter: string | null;
}

/** The server could not be reached (refused, DNS, timeout, cut off): exit code 3. */
export class UnreachableError extends Error {}

export async function send(
  base: string,
  request: ApiRequest,
  options: { key?: string; timeoutMs: number; userAgent: string },
): Promise<ApiResponse> {
  const headers: Record<string, string> = { accept: "application/json", "user-agent": options.userAgent };
  if (request.body !== undefined) headers["content-type"] = "application/json";
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (request.idempotencyKey !== undefined) headers["idempotency-key"] = request.idempotencyKey;
  try {
    const response = await fetch(base + request.path, {
      method: request.method,
      headers,
      body: request.body,
      // A redirect is shown, not followed: following could turn a POST into a
      // GET or carry the key to another host.
      redirect: "manual",
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const body = new Uint8Array(await response.arrayBuffer());
    return { status: response.status, body, location: response.headers.get("location"), retryAfter: response.headers.get("retry-after") };
  } catch (error) {
    throw new UnreachableError(`cannot reach ${base}: ${reason(error, options.timeoutMs)}`);
  }
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "host not found",
  ECONNRESET: "connection reset",
};

function reason(error: unknown, timeoutMs: number): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === "TimeoutError") return `no answer within ${timeoutMs} ms (CAIRN_TIMEOUT_MS)`;
  const code = (error as NodeJS.ErrnoException).code;
  return (code && REASONS[code]) || error.message;
}
