// Shared helpers for the black-box HTTP suites under test/api/: register a
// contributor, create a note, assert the error shape, read `admin stats`,
// and talk raw HTTP when fetch cannot say what a test needs to send.
import type { NoteView } from "../../src/core/views.ts";
import { expect } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { postgresBinDir } from "./postgres.ts";
import { call, type RunningServer } from "./server.ts";

export { call };

export const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const API_KEY = /^cairn_[0-9A-Za-z]{40,}$/;

export const NOTE_KEYS = ["body", "comment_count", "contributor_no", "created_at", "id", "score", "superseded_by", "supersedes", "tags", "title"];
/** The 201 answer of POST /v1/posts: the Note plus `similar` (shared/API.md, "Extensions, round 3"). */
export const CREATED_NOTE_KEYS = [...NOTE_KEYS, "similar"].sort();
export const SIMILAR_KEYS = ["contributor_no", "created_at", "id", "score", "title"];
export const SEARCH_RESULT_KEYS = [...NOTE_KEYS, "body_truncated"].sort();

/** Every route of the contract (shared/API.md) and the human pages, as "METHOD /path/{param}". */
export const CONTRACT_ROUTES = [
  "POST /v1/register",
  "GET /v1/me",
  "POST /v1/posts",
  "GET /v1/posts/{post_id}",
  "DELETE /v1/posts/{post_id}",
  "GET /v1/posts/{post_id}/comments",
  "POST /v1/posts/{post_id}/comments",
  "POST /v1/posts/{post_id}/vote",
  "POST /v1/search",
  "GET /v1/me/posts",
  "POST /v1/me/key",
  "POST /v1/mcp",
  "GET /v1/public/posts/{post_id}",
  "POST /v1/web/events",
  "GET /v1/healthz",
  "GET /v1/readyz",
  "GET /",
  "GET /docs",
  "GET /install",
  "GET /v1/openapi.json",
];

/** A well-formed UUID (v7 layout) that no server has ever issued. */
export const NEVER_SEEN_ID = "01890a5d-ac96-774b-bcce-b302099a8057";

/** Sorted own keys of an object, for exact-shape assertions. */
export const keysOf = (value: object) => Object.keys(value).sort();

/** Number of Unicode code points (the contract's "characters"). */
export const codePoints = (text: string) => [...text].length;

let counter = 0;
/** A short string unique within this test process (letters and digits only). */
export function unique(prefix = "u"): string {
  counter += 1;
  return `${prefix}${Date.now().toString(36)}${counter.toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
}

export interface Contributor {
  no: number;
  key: string;
  email: string;
  createdAt: string;
}

/** Registers a contributor (asserting 201) and returns its number and key. */
export async function register(
  base: string,
  options: { email?: string; headers?: Record<string, string> } = {},
): Promise<Contributor> {
  const email = options.email ?? `${unique("agent")}@example.org`;
  const res = await call(base, "POST", "/v1/register", { json: { email }, headers: options.headers });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`);
  return { no: res.data.contributor_no, key: res.data.api_key, email, createdAt: res.data.created_at };
}

export interface NoteFields {
  title?: string;
  body?: string;
  tags?: string[];
  [extra: string]: unknown;
}

/** Creates a note (asserting 201) and returns the Note object (the answer without its `similar` list, which must be an array). */
export async function createNote(base: string, key: string, fields: NoteFields = {}) {
  const marker = unique("note");
  const json = { title: `Title ${marker}`, body: `Body of ${marker}.`, ...fields };
  const res = await call(base, "POST", "/v1/posts", { key, json });
  if (res.status !== 201) throw new Error(`create note failed: ${res.status} ${res.text}`);
  const { similar, ...note } = res.data;
  if (!Array.isArray(similar)) throw new Error(`the 201 answer has no similar list: ${res.text.slice(0, 200)}`);
  return note as NoteView;
}

type Answer = Awaited<ReturnType<typeof call>>;

/** The error codes whose error object also carries "post_id". */
const WITH_POST_ID = new Set(["duplicate_post", "already_superseded"]);

/** Asserts the contract's error: status, JSON, exactly {"error": {"code", "message"}} (plus "post_id" for duplicate_post and already_superseded, "field" and "kind" for secret_detected). */
export function expectError(res: Answer, status: number, code: string) {
  if (res.status !== status) {
    throw new Error(`expected ${status} ${code}, got ${res.status}: ${res.text.slice(0, 400)}`);
  }
  expect(res.headers.get("content-type") ?? "").toContain("application/json");
  expect(res.data).not.toBeNull();
  expect(keysOf(res.data)).toEqual(["error"]);
  const extra = WITH_POST_ID.has(code) ? ["post_id"] : code === "secret_detected" ? ["field", "kind"] : [];
  expect(keysOf(res.data.error)).toEqual(["code", "message", ...extra].sort());
  if (WITH_POST_ID.has(code)) expect(res.data.error.post_id).toMatch(UUID);
  expect(res.data.error.code).toBe(code);
  expect(typeof res.data.error.message).toBe("string");
  expect(res.data.error.message.length).toBeGreaterThan(10);
  return res.data.error.message as string;
}

/** Asserts a 201/200 (with the body in the failure message). */
export function expectStatus(res: Answer, status: number) {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text.slice(0, 400)}`);
}

export interface Stats {
  contributors: number;
  active_contributors: number;
  notes: number;
  comments: number;
  votes: number;
  email_outbox: { pending: number; sent: number; gave_up: number };
  web_events: { day: string; event: string; post_id: string | null; count: number }[];
}

/** Runs `cairn admin …` and parses its JSON output (asserting exit 0). */
export async function adminJson(server: RunningServer, ...args: string[]): Promise<any> {
  const run = await server.admin(...args);
  if (run.code !== 0) throw new Error(`cairn admin ${args.join(" ")} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

export const stats = (server: RunningServer): Promise<Stats> => adminJson(server, "stats");

/** Sum of web event counters for one event (optionally one note). */
export function eventCount(s: Stats, event: string, postId?: string | null): number {
  return s.web_events
    .filter((row) => row.event === event && (postId === undefined || row.post_id === postId))
    .reduce((sum, row) => sum + row.count, 0);
}

/** Every file of the data directory, as bytes (cairn.db, -wal, -shm, …). */
export function dataFiles(dir: string): { name: string; bytes: Buffer }[] {
  const out: { name: string; bytes: Buffer }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isFile()) out.push({ name, bytes: readFileSync(path) });
  }
  return out;
}

/**
 * Where a server's stored data holds `needle` (as UTF-8 bytes): the names of
 * its data files (SQLite: cairn.db, -wal, …), and on PostgreSQL also
 * "pg_dump" when a plain dump of its database holds it. The engine-neutral
 * way for a test to say "this is never stored".
 */
export async function storedIn(server: RunningServer, needle: string): Promise<string[]> {
  const places = filesContaining(server.dataDir, needle);
  if (server.databaseUrl !== null) {
    const dump = Bun.spawn([join(postgresBinDir()!, "pg_dump"), "--no-owner", "--dbname", server.databaseUrl], { stdout: "pipe", stderr: "pipe" });
    const [bytes, code] = await Promise.all([new Response(dump.stdout).arrayBuffer(), dump.exited]);
    if (code !== 0) throw new Error(`pg_dump exited ${code}: ${await new Response(dump.stderr).text()}`);
    if (Buffer.from(bytes).includes(Buffer.from(needle, "utf8"))) places.push("pg_dump");
  }
  return places;
}

/** Names of the data files in which `needle` occurs (as UTF-8 bytes). */
export function filesContaining(dir: string, needle: string): string[] {
  const bytes = Buffer.from(needle, "utf8");
  return dataFiles(dir)
    .filter((file) => file.bytes.includes(bytes))
    .map((file) => file.name);
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends bytes over a plain TCP connection and reads one HTTP response: for
 * requests fetch will not make (chunked bodies without Content-Length, raw bytes).
 */
export function rawHttp(base: string, payload: string | Uint8Array, timeoutMs = 10_000): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    let settled = false;
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(typeof payload === "string" ? Buffer.from(payload, "utf8") : payload);
    });
    const timer = setTimeout(() => finish(new Error("raw request timed out")), timeoutMs);
    const parse = (): RawAnswer | null => {
      const end = data.indexOf("\r\n\r\n");
      if (end < 0) return null;
      const head = data.subarray(0, end).toString("latin1").split("\r\n");
      const status = Number(head[0].split(" ")[1]);
      const headers: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const rest = data.subarray(end + 4);
      if (headers["content-length"] !== undefined) {
        const length = Number(headers["content-length"]);
        if (rest.length < length) return null;
        return { status, headers, body: rest.subarray(0, length).toString("utf8") };
      }
      if ((headers["transfer-encoding"] ?? "").includes("chunked")) {
        let offset = 0;
        const parts: Buffer[] = [];
        for (;;) {
          const lineEnd = rest.indexOf("\r\n", offset);
          if (lineEnd < 0) return null;
          const size = parseInt(rest.subarray(offset, lineEnd).toString("latin1"), 16);
          if (size === 0) return { status, headers, body: Buffer.concat(parts).toString("utf8") };
          if (rest.length < lineEnd + 2 + size + 2) return null;
          parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
          offset = lineEnd + 2 + size + 2;
        }
      }
      return null;
    };
    function finish(error?: Error) {
      if (settled) return;
      const answer = parse();
      if (!answer && !error) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (answer) resolve(answer);
      else reject(error);
    }
    socket.on("data", (chunk) => {
      data = Buffer.concat([data, Buffer.from(chunk)]);
      finish();
    });
    // The server may answer (413) and close before the whole body was written.
    socket.on("error", (error) => finish(error));
    socket.on("close", () => finish(new Error(`connection closed without a full response: ${data.toString("latin1").slice(0, 200)}`)));
  });
}

/** A chunked request body (Transfer-Encoding: chunked, no Content-Length). */
export function chunkedRequest(
  path: string,
  host: string,
  body: Uint8Array,
  headers: Record<string, string> = {},
  chunkSize = 8192,
): Buffer {
  const lines = [`POST ${path} HTTP/1.1`, `Host: ${host}`, "Transfer-Encoding: chunked", "Connection: close"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  const parts: Buffer[] = [Buffer.from(lines.join("\r\n") + "\r\n\r\n", "latin1")];
  for (let i = 0; i < body.length; i += chunkSize) {
    const chunk = body.subarray(i, i + chunkSize);
    parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`, "latin1"), Buffer.from(chunk), Buffer.from("\r\n", "latin1"));
  }
  parts.push(Buffer.from("0\r\n\r\n", "latin1"));
  return Buffer.concat(parts);
}

/** Runs `count` async jobs with at most `width` in flight; results in order. */
export async function inBatches<T>(count: number, width: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await job(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker));
  return results;
}

/** Default settings for suites that are not about breakers: every breaker off. */
export const NO_BREAKERS: Record<string, string> = {
  POSTS_PER_HOUR: "0",
  COMMENTS_PER_HOUR: "0",
  VOTES_PER_HOUR: "0",
  SEARCHES_PER_HOUR: "0",
  REGISTRATIONS_PER_HOUR: "0",
  WEB_EVENTS_PER_HOUR: "0",
};
