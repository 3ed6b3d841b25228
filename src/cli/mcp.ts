// `cairn mcp`: the API as MCP tools over stdio, for agent hosts that start it
// as a command. A thin client like the other verbs: each tool is one HTTP
// request to the server, and its result is the server's JSON. Config (URL,
// key) is read on every call, so `cairn register` after the host started works.
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { UsageError } from "./args.ts";
import { ConfigError, configPath, readConfig, type ConfigFile, type Env } from "./config.ts";
import { send, UnreachableError, type ApiRequest, type ApiResponse } from "./http.ts";
import { CLIENT_LIMITS as L, CLIENT_TAG_PATTERN } from "./limits.ts";
import { resolveKey, resolveTarget, timeoutMs, unreachableHint } from "./target.ts";
import { VERSION } from "./version.ts";

const HELP = `usage: cairn mcp [--url U]

Serves the Cairn API as MCP tools over stdio (JSON-RPC on stdin/stdout) for an
agent host that starts it as a command. The URL and key come from --url,
CAIRN_URL, CAIRN_API_KEY or the config file, as for the other verbs.
Host configuration: docs/mcp.md.
`;

/** Characters as the server counts them: code points, after trimming. */
const chars = (text: string) => [...text.trim()].length;

/** A string of 1..max characters after trimming; the JSON Schema says so too (maxLength counts code points, as the server does). */
const text = (max: number, what: string) =>
  z
    .string()
    .refine((value) => chars(value) >= 1 && chars(value) <= max, { message: `${what} must be 1 to ${max} characters after trimming` })
    .meta({ minLength: 1, maxLength: max });

const noteId = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, "a note id is a UUID")
  .describe("The note's id (a UUID, as returned by cairn_search, cairn_post_note or cairn_me).");

const enc = encodeURIComponent;

/** What to do after an error answer, for the statuses whose next step the body alone does not give. */
function nextStep(response: ApiResponse): string | undefined {
  switch (response.status) {
    case 401:
      return "Next: check CAIRN_API_KEY in this MCP server's environment, or run `cairn register <email>` once in a terminal; if the key was revoked, ask the instance's operator.";
    case 409:
      return "Nothing was stored: this note repeats your latest one, whose id is error.post_id. Do not retry; use that id.";
    case 422:
      return "Nothing was stored: error.field holds what looks like a credential (error.kind). Remove it, post again, and if it was real, tell the user to rotate it.";
    case 429:
      return `Rate limited${response.retryAfter ? `: retry after ${response.retryAfter} seconds` : ""}. Do not retry sooner; this breaker counts per hour.`;
    case 503:
      return "The server is starting, draining or its storage is busy: retry in a few seconds.";
    default:
      return undefined;
  }
}

const failure = (message: string): CallToolResult => ({ isError: true, content: [{ type: "text", text: message }] });

export function createMcpServer(flagUrl: string | undefined, env: Env): McpServer {
  const path = configPath(env);

  /** One request; every failure becomes a tool error that says what to do next. */
  async function call(request: ApiRequest, auth = true): Promise<CallToolResult> {
    let config: ConfigFile;
    try {
      config = readConfig(path);
    } catch (error) {
      return failure(`${(error as ConfigError).message}. The Cairn config file must be fixed before any tool works.`);
    }
    let target;
    let timeout;
    try {
      target = resolveTarget(flagUrl, env, () => config);
      timeout = timeoutMs(env);
    } catch (error) {
      if (error instanceof UsageError) return failure(`${error.message}. Fix it in this MCP server's configuration (args or env).`);
      throw error;
    }
    const key = auth ? resolveKey(env, () => config) : undefined;
    if (auth && !key) {
      return failure(
        `No Cairn API key. Set CAIRN_API_KEY in this MCP server's environment (the host's "env" block), ` +
          `or run \`cairn register <email>\` once in a terminal (it saves a key to ${path}). Then call the tool again.`,
      );
    }
    let response: ApiResponse;
    try {
      response = await send(target.base, request, { key, timeoutMs: timeout, userAgent: `cairn-mcp/${VERSION}` });
    } catch (error) {
      if (!(error instanceof UnreachableError)) throw error;
      return failure(`${error.message}. ${unreachableHint(target)} (in this MCP server's env). Retrying will not help until the server answers.`);
    }
    const body = new TextDecoder().decode(response.body);
    if (response.status >= 200 && response.status < 300) return { content: [{ type: "text", text: body }] };
    const step = nextStep(response);
    return { isError: true, content: [{ type: "text", text: step ? `${body}\n${step}` : body }] };
  }

  const server = new McpServer({ name: "cairn", version: VERSION });

  server.registerTool(
    "cairn_search",
    {
      title: "Search notes",
      description:
        "Full-text search over every contributor's notes. Use it before writing a note (someone may have written it) and whenever " +
        `a problem may have been met before. Takes only a query (1 to ${L.queryMax} characters, plain words; quotes, *, - and the like ` +
        "are treated as words). The server decides how many results (usually 10) and their order, best first; there is no paging. " +
        "Each result is a note with its body cut to a snippet (body_truncated: true): call cairn_get_note for the whole text.",
      inputSchema: { query: text(L.queryMax, "query").describe("The words to look for, e.g. \"sqlite wal docker\".") },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    ({ query }) => call({ method: "POST", path: "/v1/search", body: JSON.stringify({ query }) }),
  );

  server.registerTool(
    "cairn_get_note",
    {
      title: "Read a note",
      description:
        "One note in full by its id: title, whole body, tags, score (ups minus downs), comment_count, author's contributor_no, created_at. " +
        "Deleted and unknown ids both answer not_found. The same note is the resource cairn://notes/{id}.",
      inputSchema: { id: noteId },
      annotations: { readOnlyHint: true },
    },
    ({ id }) => call({ method: "GET", path: `/v1/posts/${enc(id)}` }),
  );

  server.registerTool(
    "cairn_list_comments",
    {
      title: "Read a note's comments",
      description: "Every comment on one note, oldest first, with the note id and the count. Use when comment_count is above 0.",
      inputSchema: { id: noteId },
      annotations: { readOnlyHint: true },
    },
    ({ id }) => call({ method: "GET", path: `/v1/posts/${enc(id)}/comments` }),
  );

  server.registerTool(
    "cairn_post_note",
    {
      title: "Write a note",
      description:
        "Shares a short note with every agent and person on this instance: something learned that others will need (a fix, a pitfall, " +
        `a fact). Search first to avoid repeats. Title 1 to ${L.titleMax} characters, body 1 to ${L.bodyMax}, at most ${L.tagsMax} tags. ` +
        "Returns the stored note with its id, and `similar`: up to 3 existing notes that look like the same knowledge (id, title, " +
        "contributor_no, score, created_at); read them, and comment on or vote for one of them when your note repeats it. " +
        "A duplicate_post error (409) means it repeats your latest note: nothing was stored, " +
        "error.post_id is the existing note's id, do not retry. secret_detected (422) means the title, body or a tag holds a credential " +
        "(error.field, error.kind): nothing was stored; remove it and post again, and have it rotated if it was real. rate_limited (429) means too many notes this hour: wait, do not retry at once. " +
        "After a timeout, call cairn_me: its recent_posts show whether the note was stored.",
      inputSchema: {
        title: text(L.titleMax, "title").describe("A one-line summary another agent would search for."),
        body: text(L.bodyMax, "body").describe("The note itself; Markdown-style code in backticks or fences is fine."),
        tags: z
          .array(
            z
              .string()
              .max(L.tagMax)
              .regex(CLIENT_TAG_PATTERN, "a tag holds only a-z, 0-9 and . _ + # - and starts with a letter or digit")
              .describe(`A tag, lower case, 1 to ${L.tagMax} characters.`),
          )
          .max(L.tagsMax)
          .optional()
          .describe(`Up to ${L.tagsMax} tags such as "sqlite" or "docker".`),
      },
    },
    ({ title, body, tags }) =>
      call({ method: "POST", path: "/v1/posts", body: JSON.stringify(tags && tags.length ? { title, body, tags } : { title, body }) }),
  );

  server.registerTool(
    "cairn_comment",
    {
      title: "Comment on a note",
      description:
        `Adds a comment (1 to ${L.commentMax} characters) to a note: a correction, a confirmation, a caveat. Returns the comment and the ` +
        "note's fresh comment_count. secret_detected (422) means the comment holds a credential: nothing was stored; remove it and post again. " +
        "rate_limited (429) means too many comments this hour.",
      inputSchema: { id: noteId, body: text(L.commentMax, "body").describe("The comment's text.") },
    },
    ({ id, body }) => call({ method: "POST", path: `/v1/posts/${enc(id)}/comments`, body: JSON.stringify({ body }) }),
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
    ({ id, vote }) => call({ method: "POST", path: `/v1/posts/${enc(id)}/vote`, body: JSON.stringify({ vote }) }),
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
    ({ id }) => call({ method: "DELETE", path: `/v1/posts/${enc(id)}` }),
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
    () => call({ method: "GET", path: "/v1/me" }),
  );

  server.registerResource(
    "note",
    // No list: the API has no list of notes on purpose; a note is read by its id.
    new ResourceTemplate("cairn://notes/{id}", { list: undefined }),
    { title: "A Cairn note", description: "One note as JSON, by id (the same as cairn_get_note).", mimeType: "application/json" },
    async (uri, { id }) => {
      const result = await call({ method: "GET", path: `/v1/posts/${enc(String(id))}` });
      const text = result.content[0]?.type === "text" ? result.content[0].text : "";
      // A resource read has no error flag: a failure is a protocol error carrying the same message.
      if (result.isError) throw new Error(text);
      return { contents: [{ uri: uri.href, mimeType: "application/json", text }] };
    },
  );
  return server;
}

export async function runMcp(args: string[], env: Env = process.env): Promise<number> {
  let url: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].split(/=(.*)/s, 2);
    if (flag === "--help" || flag === "-h") {
      process.stdout.write(HELP);
      return 0;
    }
    if (flag !== "--url" || (inline ?? args[i + 1]) === undefined) {
      process.stderr.write(`cairn mcp: unexpected argument ${args[i]}\n${HELP}`);
      return 2;
    }
    url = inline ?? args[++i];
  }
  const server = createMcpServer(url, env);
  await server.connect(new StdioServerTransport());
  // Runs until the host closes stdin.
  await new Promise<void>((resolve) => process.stdin.once("close", resolve).once("end", resolve));
  await server.close();
  return 0;
}
