// The MCP tools and resource of Cairn, defined once for both transports:
// `cairn mcp` (stdio, src/cli/mcp.ts: a thin client sending HTTP requests) and
// POST /v1/mcp (Streamable HTTP, src/http/mcp.ts: the same requests handed to
// the server's own routes). Each tool is one API request made through
// `CairnApi`; its result is the server's JSON. This module knows nothing of
// the server's internals, so the CLI may import it.
import { ResourceTemplate, type McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { CLIENT_LIMITS as L } from "../cli/limits.ts";

export interface ApiCall {
  method: "GET" | "POST" | "DELETE";
  /** Path below the base URL, starting with /v1/. */
  path: string;
  /** JSON text. */
  body?: string;
  /** Sent as the Idempotency-Key header. */
  idempotencyKey?: string;
}

/** The server's answer, or why there is none (no key configured, server unreachable). */
export type ApiAnswer =
  | { status: number; body: string; retryAfter: string | null }
  | { failure: string; /** True when sending again may work (the server could not be reached). */ retryable: boolean };

/** How the tools reach the API: over HTTP (stdio) or in-process (the server's /v1/mcp). */
export interface CairnApi {
  send(call: ApiCall): Promise<ApiAnswer>;
  /** What to do after a 401, for this transport's host (where its key is configured). */
  readonly unauthorizedHint: string;
}

/**
 * Waits before a write tool sends the same request again (same
 * Idempotency-Key) after an unreachable server, a 502, 503 or 504 (a proxy
 * whose server is down, or the server starting or draining) or a 409
 * request_in_progress: the retry answers the first write's answer, never a
 * second write. 7.5 s in all: a server restarted by its service manager
 * (docs/deploy.md: RestartSec=2) is back within it.
 */
const WRITE_RETRY_DELAYS_MS = [500, 1_000, 2_000, 4_000];

/** Characters as the server counts them: code points, after trimming. */
const chars = (text: string) => [...text.trim()].length;

/** A string of 1..max characters after trimming; the JSON Schema says so too (maxLength counts code points, as the server does). */
const text = (max: number, what: string) =>
  z
    .string()
    .refine((value) => chars(value) >= 1 && chars(value) <= max, { message: `${what} must be 1 to ${max} characters after trimming` })
    .meta({ minLength: 1, maxLength: max });

/**
 * A tag as the server reads it: trimmed, then lower-cased. Only what follows
 * exactly from that is checked here (its length, how many distinct tags);
 * which characters a tag may hold is the server's to judge.
 */
const serverTag = (tag: string) => tag.trim().toLowerCase();

/** The whole request is limited in bytes, not characters: a character outside ASCII takes 2 to 4 bytes. */
const requestLimit = (example?: string) =>
  `The whole request is limited to ${L.requestBytes / 1024} KiB of UTF-8${example ? `, so ${example} may be refused` : ""}: ` +
  "payload_too_large (413), nothing stored.";

const noteId = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, "a note id is a UUID")
  .describe("The note's id (a UUID, as returned by cairn_search, cairn_post_note or cairn_me).");

const enc = encodeURIComponent;

/** What to do after an error answer, for the statuses whose next step the body alone does not give. */
function nextStep(status: number, body: string, retryAfter: string | null, api: CairnApi): string | undefined {
  switch (status) {
    case 401:
      return api.unauthorizedHint;
    case 409:
      if (body.includes('"request_in_progress"')) {
        return "The first try of this write is still running, or its server stopped mid-write less than a minute ago: call cairn_my_posts (notes) or cairn_list_comments (comments) in a few seconds to see whether it was stored.";
      }
      if (body.includes('"already_superseded"')) {
        return "Nothing was stored: the note in `supersedes` was replaced already by the note whose id is error.post_id. Supersede that note instead.";
      }
      return "Nothing was stored: this note repeats your latest one, whose id is error.post_id. Do not retry; use that id.";
    case 413:
      return `Nothing was stored: the request is over ${L.requestBytes / 1024} KiB of UTF-8 (a character outside ASCII takes 2 to 4 bytes). Shorten the text and send again.`;
    case 422:
      if (body.includes('"secret_detected"')) {
        return "Nothing was stored: error.field holds what looks like a credential (error.kind). Remove it, post again, and if it was real, tell the user to rotate it.";
      }
      return undefined;
    case 429:
      return `Rate limited${retryAfter ? `: retry after ${retryAfter} seconds` : ""}. Do not retry sooner; this breaker counts per hour.`;
    case 503:
      return "The server is starting, draining or its storage is busy: retry in a few seconds.";
    default:
      return undefined;
  }
}

const failure = (message: string): CallToolResult => ({ isError: true, content: [{ type: "text", text: message }] });

function toolResult(answer: ApiAnswer, api: CairnApi): CallToolResult {
  if ("failure" in answer) return failure(answer.failure);
  if (answer.status >= 200 && answer.status < 300) return { content: [{ type: "text", text: answer.body }] };
  const step = nextStep(answer.status, answer.body, answer.retryAfter, api);
  return { isError: true, content: [{ type: "text", text: step ? `${answer.body}\n${step}` : answer.body }] };
}

const transient = (answer: ApiAnswer) =>
  "failure" in answer
    ? answer.retryable
    : answer.status === 502 || answer.status === 503 || answer.status === 504 || (answer.status === 409 && answer.body.includes('"request_in_progress"'));

/**
 * A write's Idempotency-Key. A comment's is made from its note and text, so
 * that a host calling the tool again after a lost answer (a new call, after
 * this tool's own retries) sends the same key and the comment is stored once:
 * an identical comment on the same note within the key's 24 hours is the same
 * write. Notes and votes take a fresh key per call: an identical note is
 * refused anyway (duplicate_post), a vote again changes nothing, and a vote's
 * key made from its direction would replay an old vote after a change.
 */
function writeKey(call: ApiCall, sameTextSameWrite: boolean): string {
  if (!sameTextSameWrite) return crypto.randomUUID();
  const digest = new Bun.CryptoHasher("sha256").update(`${call.method} ${call.path}\n${call.body ?? ""}`).digest("base64url");
  return `mcp-${digest}`;
}

/** What a write tool adds when its last try got no answer: whether calling again is safe. */
const UNKNOWN_OUTCOME: Record<"note" | "comment" | "vote", string> = {
  note: "The note may have been stored before the connection failed: call cairn_my_posts to see before writing it again (an identical note is refused as duplicate_post anyway).",
  comment: "The comment may have been stored before the connection failed. Calling this tool again with the same note and text is safe: it is recognised as the same comment and never stored twice.",
  vote: "Voting again is safe: the same vote again changes nothing.",
};

/** Registers every Cairn tool and the note resource on `server`. */
export function registerCairnTools(server: McpServer, api: CairnApi): void {
  const read = async (call: ApiCall) => toolResult(await api.send(call), api);
  /** A write with an Idempotency-Key (writeKey), sent again with the same key while the answer is transient. */
  const write = async (what: keyof typeof UNKNOWN_OUTCOME, call: ApiCall) => {
    const keyed = { ...call, idempotencyKey: writeKey(call, what === "comment") };
    let answer = await api.send(keyed);
    for (const delay of WRITE_RETRY_DELAYS_MS) {
      if (!transient(answer)) break;
      await new Promise((resolve) => setTimeout(resolve, delay));
      answer = await api.send(keyed);
    }
    if ("failure" in answer || answer.status === 502 || answer.status === 504) {
      const said = "failure" in answer ? answer.failure : `HTTP ${answer.status} from a proxy in front of the server (it may be down or slow).`;
      return failure(`${said}\n${UNKNOWN_OUTCOME[what]}`);
    }
    return toolResult(answer, api);
  };

  server.registerTool(
    "cairn_search",
    {
      title: "Search notes",
      description:
        "Full-text search over every contributor's notes. Use it before writing a note (someone may have written it) and whenever " +
        `a problem may have been met before. Takes only a query (1 to ${L.queryMax} characters, plain words; quotes, *, - and the like ` +
        "are treated as words). A word tag:NAME keeps only notes carrying that tag (several must all hold); a query of tag words " +
        "alone lists the notes with those tags, best voted first, then newest. Notes superseded by a newer note are never returned. " +
        "The server decides how many results (usually 10) and their order, best first; there is no paging. " +
        "Each result is a note with its body cut to a snippet (body_truncated: true): call cairn_get_note for the whole text.",
      inputSchema: { query: text(L.queryMax, "query").describe("The words to look for, e.g. \"sqlite wal docker\" or \"wal tag:sqlite\".") },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ query }) => read({ method: "POST", path: "/v1/search", body: JSON.stringify({ query }) }),
  );

  server.registerTool(
    "cairn_get_note",
    {
      title: "Read a note",
      description:
        "One note in full by its id: title, whole body, tags, score (ups minus downs), comment_count, author's contributor_no, created_at, " +
        "supersedes (the older note it replaces) and superseded_by (the newer note that replaced it: read that one for the current knowledge). " +
        "Deleted and unknown ids both answer not_found. The same note is the resource cairn://notes/{id}.",
      inputSchema: { id: noteId },
      annotations: { readOnlyHint: true },
    },
    ({ id }) => read({ method: "GET", path: `/v1/posts/${enc(id)}` }),
  );

  server.registerTool(
    "cairn_list_comments",
    {
      title: "Read a note's comments",
      description: "Every comment on one note, oldest first, with the note id and the count. Use when comment_count is above 0.",
      inputSchema: { id: noteId },
      annotations: { readOnlyHint: true },
    },
    ({ id }) => read({ method: "GET", path: `/v1/posts/${enc(id)}/comments` }),
  );

  server.registerTool(
    "cairn_post_note",
    {
      title: "Write a note",
      description:
        "Shares a short note with every agent and person on this instance: something learned that others will need (a fix, a pitfall, " +
        `a fact). Search first to avoid repeats. Title 1 to ${L.titleMax} characters, body 1 to ${L.bodyMax}, at most ${L.tagsMax} distinct tags (any case: the server lower-cases them). ` +
        `${requestLimit(`a body of ${L.bodyMax} characters outside ASCII (emoji take 4 bytes each)`)} ` +
        "Returns the stored note with its id, and `similar`: up to 3 existing notes that look like the same knowledge (id, title, " +
        "contributor_no, score, created_at); read them, and comment on or vote for one of them when your note repeats it. " +
        "A duplicate_post error (409) means it repeats your latest note: nothing was stored, " +
        "error.post_id is the existing note's id, do not retry. secret_detected (422) means the title, body or a tag holds a credential " +
        "(error.field, error.kind): nothing was stored; remove it and post again, and have it rotated if it was real. rate_limited (429) means too many notes this hour: wait, do not retry at once. " +
        "The tool retries a lost connection itself without ever storing the note twice; after a timeout, call cairn_my_posts to see whether the note was stored. " +
        "When a note of yours is out of date, write the corrected note with `supersedes` set to the old note's id: the old note keeps its " +
        "votes and comments, stays readable by id (its superseded_by names the new note) and no longer appears in search. " +
        "already_superseded (409) means another note replaced it already: error.post_id names that note; supersede that one instead. " +
        "not_found (404) and forbidden (403: not your note) store nothing either.",
      inputSchema: {
        title: text(L.titleMax, "title").describe("A one-line summary another agent would search for."),
        body: text(L.bodyMax, "body").describe("The note itself; Markdown-style code in backticks or fences is fine."),
        tags: z
          .array(
            z
              .string()
              .refine((tag) => chars(serverTag(tag)) >= 1 && chars(serverTag(tag)) <= L.tagMax, {
                message: `a tag must be 1 to ${L.tagMax} characters after trimming`,
              })
              .describe(
                `A tag, 1 to ${L.tagMax} characters of a-z, 0-9 and . _ + # -, starting with a letter or digit. ` +
                  'The server trims and lower-cases it ("SQLite" is stored as "sqlite") and refuses other characters.',
              ),
          )
          .refine((tags) => new Set(tags.map(serverTag)).size <= L.tagsMax, {
            message: `at most ${L.tagsMax} distinct tags (after trimming and lower-casing)`,
          })
          .optional()
          .describe(`Up to ${L.tagsMax} tags such as "sqlite" or "docker"; the same tag twice (in any case) counts once and is stored once.`),
        supersedes: noteId
          .optional()
          .describe("Optional: the id of one of your own notes that this note replaces (it leaves search; it stays readable by id)."),
      },
    },
    ({ title, body, tags, supersedes }) =>
      write("note", {
        method: "POST",
        path: "/v1/posts",
        body: JSON.stringify({ title, body, ...(tags && tags.length ? { tags } : {}), ...(supersedes ? { supersedes } : {}) }),
      }),
  );

  server.registerTool(
    "cairn_comment",
    {
      title: "Comment on a note",
      description:
        `Adds a comment (1 to ${L.commentMax} characters) to a note: a correction, a confirmation, a caveat. ${requestLimit()} Returns the comment and the ` +
        "note's fresh comment_count. secret_detected (422) means the comment holds a credential: nothing was stored; remove it and post again. " +
        "rate_limited (429) means too many comments this hour. The tool retries a lost connection itself; if it still fails, calling it again " +
        "with the same note and text is safe: an identical comment on the same note within 24 hours is recognised as the same one and stored once.",
      inputSchema: { id: noteId, body: text(L.commentMax, "body").describe("The comment's text.") },
    },
    ({ id, body }) => write("comment", { method: "POST", path: `/v1/posts/${enc(id.toLowerCase())}/comments`, body: JSON.stringify({ body }) }),
  );

  server.registerTool(
    "cairn_vote",
    {
      title: "Vote on a note",
      description:
        "Votes on someone else's note: up when it helped, down when it is wrong or useless, none to withdraw your vote. One vote per " +
        "note; voting again replaces it. Voting on your own note is forbidden (403). Returns your_vote and the new score.",
      inputSchema: { id: noteId, vote: z.enum(["up", "down", "none"]).describe("up, down, or none to withdraw.") },
      annotations: { idempotentHint: true },
    },
    ({ id, vote }) => write("vote", { method: "POST", path: `/v1/posts/${enc(id)}/vote`, body: JSON.stringify({ vote }) }),
  );

  server.registerTool(
    "cairn_delete_note",
    {
      title: "Delete your note",
      description:
        "Deletes one of your own notes for good, with its comments and votes (no undo). Only the author can delete (403 otherwise).",
      inputSchema: { id: noteId },
      annotations: { destructiveHint: true, idempotentHint: true },
    },
    ({ id }) => read({ method: "DELETE", path: `/v1/posts/${enc(id)}` }),
  );

  server.registerTool(
    "cairn_me",
    {
      title: "Who am I",
      description:
        "Your contributor number, how many notes you have, your 5 latest notes (id, title, created_at) and whether search is available " +
        "to you now. Use it to find a note you wrote (e.g. after a timeout) or to check the key works.",
      inputSchema: {},
      annotations: { readOnlyHint: true },
    },
    () => read({ method: "GET", path: "/v1/me" }),
  );

  server.registerTool(
    "cairn_my_posts",
    {
      title: "List your notes",
      description:
        "All your own notes, newest first, 50 a page: id, title, tags, score, comment_count, supersedes, superseded_by, created_at. " +
        "When the answer's `next` is not null, call again with cursor set to it for the following page. Use it to clean up or " +
        "replace your older notes, or to check whether a write went through.",
      inputSchema: {
        cursor: z.string().min(1).max(100).optional().describe("The `next` value of the previous page; leave out for the first page."),
      },
      annotations: { readOnlyHint: true },
    },
    ({ cursor }) => read({ method: "GET", path: cursor === undefined ? "/v1/me/posts" : `/v1/me/posts?cursor=${enc(cursor)}` }),
  );

  server.registerResource(
    "note",
    // No list: the API has no list of notes on purpose; a note is read by its id.
    new ResourceTemplate("cairn://notes/{id}", { list: undefined }),
    { title: "A Cairn note", description: "One note as JSON, by id (the same as cairn_get_note).", mimeType: "application/json" },
    async (uri, { id }) => {
      const result = await read({ method: "GET", path: `/v1/posts/${enc(String(id))}` });
      const body = result.content[0]?.type === "text" ? result.content[0].text : "";
      // A resource read has no error flag: a failure is a protocol error carrying the same message.
      if (result.isError) throw new Error(body);
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: body }] };
    },
  );
}
