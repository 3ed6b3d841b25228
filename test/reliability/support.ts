// Shared bits of the reliability suites: the compiled binary, process memory
// from /proc, and the contract's error table.
import { existsSync, readFileSync } from "node:fs";
import { BINARY, ROOT } from "../helpers/server.ts";
import { prefersHtml } from "../../src/http/request-parts.ts";

/** Builds dist/cairn with `bun run build` when it is missing (CI's `bun run test` builds it first). */
export function ensureBinary(): void {
  if (existsSync(BINARY)) return;
  const build = Bun.spawnSync([process.execPath, "run", "build"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(`bun run build failed:\n${build.stdout}\n${build.stderr}`);
}

/** One field of /proc/<pid>/status in KiB (VmRSS: resident now; VmHWM: resident peak). */
export function procKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]);
}

/**
 * 20,000 CJK characters from a seeded generator (memory.test.ts,
 * bench/cjk-memory.ts): notes of many distinct character pairs, though they
 * repeat across notes (~14,100 distinct pairs a note, 133,406 over 300 notes:
 * docs/reliability.md, "What holds the memory at its peak").
 */
export function cjkBody(seed: number): string {
  const chars: string[] = [];
  let x = seed * 7919 + 1;
  for (let i = 0; i < 20_000; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    chars.push(String.fromCharCode(0x4e00 + (x % 20_000)));
  }
  return chars.join("");
}

/** The contract's error table: code → status. */
export const ERROR_STATUS: Record<string, number> = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  duplicate_post: 409,
  already_superseded: 409,
  request_in_progress: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  secret_detected: 422,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
};

/**
 * Why a non-2xx answer breaks the contract's error shape, or null when it is
 * exactly {"error": {"code", "message"}} with a code of the table matching the status.
 */
export function errorShapeProblem(status: number, contentType: string | null, text: string): string | null {
  if (!(contentType ?? "").includes("application/json")) return `content-type ${contentType}`;
  let data: any;
  try {
    data = JSON.parse(text);
  } catch {
    return "body is not JSON";
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) return "body is not an object";
  if (Object.keys(data).join() !== "error") return `top-level keys ${Object.keys(data).join(",")}`;
  const error = data.error;
  if (error === null || typeof error !== "object" || Array.isArray(error)) return "error is not an object";
  // duplicate_post and already_superseded also name a note (shared/API.md);
  // secret_detected names the field and the kind of credential.
  const keys =
    error.code === "duplicate_post" || error.code === "already_superseded"
      ? "code,message,post_id"
      : error.code === "secret_detected"
        ? "code,field,kind,message"
        : "code,message";
  if (Object.keys(error).sort().join() !== keys) return `error keys ${Object.keys(error).join(",")}`;
  if (typeof error.code !== "string" || !(error.code in ERROR_STATUS)) return `code ${JSON.stringify(error.code)} not in the table`;
  if (ERROR_STATUS[error.code] !== status) return `code ${error.code} with status ${status}`;
  if (typeof error.message !== "string" || error.message.length === 0) return "empty message";
  return null;
}

/**
 * Why an error answer breaks the contract, or null. The one answer that is not
 * error JSON by design: a browser (Accept preferring HTML) asking for a public
 * note that is not there gets a small HTML page with the JSON's status
 * (docs/api.md, GET /v1/public/posts/{post_id}).
 */
export function errorAnswerProblem(
  req: { method: string; path: string; accept?: string },
  status: number,
  contentType: string | null,
  text: string,
): string | null {
  const notePage =
    req.method.toUpperCase() === "GET" &&
    [req.path, normalisedPath(req.path)].some((path) => /^\/v1\/public\/posts\/[^/?#]+\/?(\?.*)?$/.test(path)) &&
    prefersHtml(req.accept ?? null) &&
    (status === 400 || status === 404);
  // (A path that normalises to another route, `/v1/public/posts/..`, still answers error JSON.)
  if (notePage && (contentType ?? "").startsWith("text/html")) {
    return text.includes("<title>No note here") ? null : "the missing-note page lacks its title";
  }
  return errorShapeProblem(status, contentType, text);
}

/** The path as fetch sends it (dot segments resolved). */
function normalisedPath(path: string): string {
  try {
    return new URL(path, "http://localhost").pathname;
  } catch {
    return path;
  }
}
