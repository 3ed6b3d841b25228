// `cairn mcp` (dist/cairn) driven by the MCP SDK's own client over stdio,
// against a real server: the tools a host lists, each tool's answer, the
// note resource, and the error paths an agent must be able to act on.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { CLIENT_LIMITS } from "../src/cli/limits.ts";
import { NEVER_SEEN_ID, register, type Contributor } from "./helpers/api.ts";
import { freePort } from "./helpers/ports.ts";
import { BINARY, call, startServer, tempDir, type RunningServer } from "./helpers/server.ts";

let server: RunningServer;
let author: Contributor;
let reader: Contributor;
const clients: Client[] = [];
const dirs: string[] = [];

/** Starts `cairn mcp` as a host would, with only the given environment (plus PATH). */
async function connect(env: Record<string, string>): Promise<Client> {
  const xdg = tempDir("cairn-mcp-xdg-");
  dirs.push(xdg);
  const transport = new StdioClientTransport({
    command: BINARY,
    args: ["mcp"],
    env: { PATH: process.env.PATH ?? "", XDG_CONFIG_HOME: xdg, ...env },
    stderr: "pipe",
  });
  const client = new Client({ name: "cairn-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

type ToolResult = Awaited<ReturnType<Client["callTool"]>>;
const textOf = (result: ToolResult) => (result.content as { type: string; text: string }[])[0].text;
/** The server's JSON from a successful tool call. */
function ok(result: ToolResult): any {
  if (result.isError) throw new Error(`tool failed: ${textOf(result)}`);
  return JSON.parse(textOf(result));
}

let agent: Client;
let other: Client;

beforeAll(async () => {
  server = await startServer({ binary: true, env: { POSTS_PER_HOUR: "3" } });
  author = await register(server.url);
  reader = await register(server.url);
  agent = await connect({ CAIRN_URL: server.url, CAIRN_API_KEY: author.key });
  other = await connect({ CAIRN_URL: `${server.url}/v1`, CAIRN_API_KEY: reader.key });
});

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("tools", () => {
  test("lists the nine tools, with descriptions and the contract's limits in their schemas", async () => {
    const { tools } = await agent.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(Object.keys(byName).sort()).toEqual(
      ["cairn_comment", "cairn_delete_note", "cairn_get_note", "cairn_list_comments", "cairn_me", "cairn_my_posts", "cairn_post_note", "cairn_search", "cairn_vote"],
    );
    for (const tool of tools) expect(tool.description!.length).toBeGreaterThan(60);
    const props = (name: string) => (byName[name].inputSchema as any).properties;
    expect(Object.keys(props("cairn_search"))).toEqual(["query"]);
    expect(props("cairn_search").query.maxLength).toBe(CLIENT_LIMITS.queryMax);
    expect(props("cairn_post_note").title.maxLength).toBe(CLIENT_LIMITS.titleMax);
    expect(props("cairn_post_note").body.maxLength).toBe(CLIENT_LIMITS.bodyMax);
    // A tag's limits hold after the server trims and lower-cases it, so the JSON Schema
    // carries none that a host could apply to the raw text ("SQLite", " docker " are fine).
    expect(props("cairn_post_note").tags.items).toMatchObject({ type: "string" });
    for (const key of ["pattern", "maxLength"]) expect(props("cairn_post_note").tags.items[key]).toBeUndefined();
    expect(props("cairn_post_note").tags.maxItems).toBeUndefined();
    expect(props("cairn_comment").body.maxLength).toBe(CLIENT_LIMITS.commentMax);
    expect(props("cairn_vote").vote.enum).toEqual(["up", "down", "none"]);
    expect(byName.cairn_post_note.description).toContain("409");
    expect(byName.cairn_post_note.description).toContain("429");
    expect(byName.cairn_post_note.description).toContain("already_superseded");
    expect(props("cairn_post_note").supersedes.type).toBe("string");
    expect(byName.cairn_search.description).toContain("only a query");
    // The body limit counts characters, the request limit bytes: both descriptions say so.
    for (const name of ["cairn_post_note", "cairn_comment"]) expect(byName[name].description).toContain("limited to 64 KiB of UTF-8");
    expect(byName.cairn_post_note.description).toContain(`a body of ${CLIENT_LIMITS.bodyMax} characters outside ASCII`);
  });

  let noteId: string;

  test("post, get, search, comment, list comments, vote, me, delete: each returns the server's JSON", async () => {
    const title = `Bun mcp smoke ${Date.now()}`;
    const note = ok(await agent.callTool({ name: "cairn_post_note", arguments: { title, body: "Plain body of the note.", tags: ["mcp"] } }));
    noteId = note.id;
    expect(note).toMatchObject({ title, tags: ["mcp"], score: 0, comment_count: 0, contributor_no: author.no });

    const fetched = ok(await agent.callTool({ name: "cairn_get_note", arguments: { id: noteId } }));
    expect(fetched).toEqual((await call(server.url, "GET", `/v1/posts/${noteId}`, { key: author.key })).data);

    const found = ok(await other.callTool({ name: "cairn_search", arguments: { query: "smoke mcp" } }));
    expect(found.results.map((r: { id: string }) => r.id)).toContain(noteId);

    const comment = ok(await other.callTool({ name: "cairn_comment", arguments: { id: noteId, body: "Confirmed." } }));
    expect(comment).toMatchObject({ post_id: noteId, body: "Confirmed.", comment_count: 1, contributor_no: reader.no });
    const comments = ok(await agent.callTool({ name: "cairn_list_comments", arguments: { id: noteId } }));
    expect(comments).toMatchObject({ post_id: noteId, count: 1 });

    const vote = ok(await other.callTool({ name: "cairn_vote", arguments: { id: noteId, vote: "up" } }));
    expect(vote).toEqual({ post_id: noteId, your_vote: "up", score: 1 });

    const me = ok(await agent.callTool({ name: "cairn_me", arguments: {} }));
    expect(me.contributor_no).toBe(author.no);
    expect(me.recent_posts[0]).toMatchObject({ id: noteId, title });
  });

  test("a note is a resource by URI", async () => {
    const { resourceTemplates } = await agent.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["cairn://notes/{id}"]);
    const read = await agent.readResource({ uri: `cairn://notes/${noteId}` });
    expect(read.contents[0].mimeType).toBe("application/json");
    expect(JSON.parse((read.contents[0] as { text: string }).text).id).toBe(noteId);
    await expect(agent.readResource({ uri: `cairn://notes/${NEVER_SEEN_ID}` })).rejects.toThrow(/not_found/);
  });

  test("a repeated note is a tool error naming the existing note's id and saying not to retry", async () => {
    const args = { title: "Twice", body: "Same body." };
    const first = ok(await agent.callTool({ name: "cairn_post_note", arguments: args }));
    const second = await agent.callTool({ name: "cairn_post_note", arguments: args });
    expect(second.isError).toBe(true);
    const [json, hint] = textOf(second).split("\n");
    expect(JSON.parse(json).error).toMatchObject({ code: "duplicate_post", post_id: first.id });
    expect(hint).toContain("Do not retry");
  });

  test("cairn_post_note takes supersedes: the old note names the new one; a second supersede is a tool error naming the winner", async () => {
    // A third contributor: the others' posts count toward POSTS_PER_HOUR (3) in the tests around this one.
    const third = await register(server.url);
    const other = await connect({ CAIRN_URL: server.url, CAIRN_API_KEY: third.key });
    const old = ok(await other.callTool({ name: "cairn_post_note", arguments: { title: "Old way", body: "Do it the old way." } }));
    const replacement = ok(await other.callTool({ name: "cairn_post_note", arguments: { title: "New way", body: "Do it the new way.", supersedes: old.id } }));
    expect(replacement.supersedes).toBe(old.id);
    expect(ok(await other.callTool({ name: "cairn_get_note", arguments: { id: old.id } })).superseded_by).toBe(replacement.id);
    const again = await other.callTool({ name: "cairn_post_note", arguments: { title: "Newer way", body: "Another way.", supersedes: old.id } });
    expect(again.isError).toBe(true);
    const [json, hint] = textOf(again).split("\n");
    expect(JSON.parse(json).error).toMatchObject({ code: "already_superseded", post_id: replacement.id });
    expect(hint).toContain("Supersede that note instead");
  });

  test("past the hourly breaker: a tool error with the wait", async () => {
    // POSTS_PER_HOUR is 3 and this author has tried three times (the duplicate counts): the next is refused.
    const refused = await agent.callTool({ name: "cairn_post_note", arguments: { title: "Fourth", body: "Fourth body." } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("rate_limited");
    expect(textOf(refused)).toMatch(/retry after \d+ seconds/);
  });

  test("voting on one's own note, deleting another's: the server's 403 as a tool error", async () => {
    const own = await agent.callTool({ name: "cairn_vote", arguments: { id: noteId, vote: "up" } });
    expect(own.isError).toBe(true);
    expect(JSON.parse(textOf(own)).error.code).toBe("forbidden");
    const theirs = await other.callTool({ name: "cairn_delete_note", arguments: { id: noteId } });
    expect(JSON.parse(textOf(theirs)).error.code).toBe("forbidden");
    expect(ok(await agent.callTool({ name: "cairn_delete_note", arguments: { id: noteId } }))).toEqual({ deleted: true, id: noteId });
  });

  test("input past a limit is refused by the schema before any request", async () => {
    const long = await agent.callTool({ name: "cairn_search", arguments: { query: "x".repeat(CLIENT_LIMITS.queryMax + 1) } });
    expect(long.isError).toBe(true);
    expect(textOf(long)).toContain(`1 to ${CLIENT_LIMITS.queryMax} characters`);
    // The server counts code points: 200 emoji are a valid title, and so they are here.
    const emoji = ok(await other.callTool({ name: "cairn_post_note", arguments: { title: "😀".repeat(200), body: "Emoji title." } }));
    expect([...emoji.title]).toHaveLength(200);
    const badId = await agent.callTool({ name: "cairn_get_note", arguments: { id: "not-a-uuid" } });
    expect(badId.isError).toBe(true);
  });
});

describe("what the schema leaves to the server", () => {
  test("tags in any case and with surrounding spaces are taken, as by the HTTP API; only the exact limits are the schema's", async () => {
    const writer = await connect({ CAIRN_URL: server.url, CAIRN_API_KEY: (await register(server.url)).key });
    const tool = (tags: string[]) => writer.callTool({ name: "cairn_post_note", arguments: { title: `Tags ${tags.length} ${Date.now()}`, body: "Tag case.", tags } });
    // Nine entries but eight distinct tags once trimmed and lower-cased: the server takes them, so the schema does.
    const note = ok(await tool(["UPPER", " Docker ", "docker", "SQLite", "a", "b", "c", "d", "e"]));
    expect(note.tags).toEqual(["upper", "docker", "sqlite", "a", "b", "c", "d", "e"]);
    // Exactly the server's limits, counted as it counts: nine distinct tags, 33 characters after trimming.
    const nine = await tool(["a", "b", "c", "d", "e", "f", "g", "h", "i"]);
    expect(nine.isError).toBe(true);
    expect(textOf(nine)).toContain("at most 8 distinct tags");
    const long = await tool([` ${"x".repeat(CLIENT_LIMITS.tagMax + 1)} `]);
    expect(long.isError).toBe(true);
    expect(textOf(long)).toContain(`1 to ${CLIENT_LIMITS.tagMax} characters`);
    expect(ok(await tool([` ${"Y".repeat(CLIENT_LIMITS.tagMax)} `])).tags).toEqual(["y".repeat(CLIENT_LIMITS.tagMax)]);
    // Which characters a tag may hold is the server's to judge: its 400, as a tool error.
    const spaced = await tool(["two words"]);
    expect(spaced.isError).toBe(true);
    expect(JSON.parse(textOf(spaced)).error.code).toBe("invalid_request");
  });

  test("a body within the character limit but over 64 KiB of UTF-8: the server's 413 as a tool error with the next step", async () => {
    const writer = await connect({ CAIRN_URL: server.url, CAIRN_API_KEY: (await register(server.url)).key });
    const result = await writer.callTool({ name: "cairn_post_note", arguments: { title: "Emoji body", body: "😀".repeat(CLIENT_LIMITS.bodyMax) } });
    expect(result.isError).toBe(true);
    const [json, hint] = textOf(result).split("\n");
    expect(JSON.parse(json).error.code).toBe("payload_too_large");
    expect(hint).toContain("64 KiB of UTF-8");
  });
});

describe("errors an agent can act on, never a crash", () => {
  test("no key: says how to get one, and the server is still usable afterwards", async () => {
    const keyless = await connect({ CAIRN_URL: server.url });
    const result = await keyless.callTool({ name: "cairn_me", arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("CAIRN_API_KEY");
    expect(textOf(result)).toContain("cairn register");
    expect((await keyless.listTools()).tools.length).toBe(9);
  });

  test("a revoked or wrong key: the server's 401 and the next step", async () => {
    const wrong = await connect({ CAIRN_URL: server.url, CAIRN_API_KEY: `cairn_${"x".repeat(40)}` });
    const result = await wrong.callTool({ name: "cairn_me", arguments: {} });
    expect(result.isError).toBe(true);
    expect(JSON.parse(textOf(result).split("\n")[0]).error.code).toBe("unauthorized");
  });

  test("a server down when a comment is sent and back 2 s later (a systemd restart): the tool's retries store it once; a host's second call replays it", async () => {
    const port = await freePort();
    const dataDir = tempDir("cairn-mcp-restart-");
    dirs.push(dataDir);
    const env = { PORT: String(port) };
    let restartable = await startServer({ binary: true, dataDir, env });
    const who = await register(restartable.url);
    const note = (await call(restartable.url, "POST", "/v1/posts", { key: who.key, json: { title: "Restart me", body: "Comments follow." } })).data;
    const host = await connect({ CAIRN_URL: restartable.url, CAIRN_API_KEY: who.key });
    await restartable.stop("SIGKILL");
    const sent = host.callTool({ name: "cairn_comment", arguments: { id: note.id, body: "Sent while the server was down." } });
    await Bun.sleep(2_100);
    restartable = await startServer({ binary: true, dataDir, env });
    try {
      const first = ok(await sent);
      expect(first.comment_count).toBe(1);
      // The host calls again (it never saw the answer, say): the same note and text, the same comment.
      const again = ok(await host.callTool({ name: "cairn_comment", arguments: { id: note.id, body: "Sent while the server was down." } }));
      expect(again).toEqual(first);
      const listed = await call(restartable.url, "GET", `/v1/posts/${note.id}/comments`, { key: who.key });
      expect(listed.data.count).toBe(1);
    } finally {
      await restartable.stop();
    }
  }, 30_000);

  test("an unreachable server: names the URL and CAIRN_URL", async () => {
    const lost = await connect({ CAIRN_URL: "http://127.0.0.1:9", CAIRN_API_KEY: author.key });
    const result = await lost.callTool({ name: "cairn_search", arguments: { query: "anything" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("http://127.0.0.1:9");
    expect(textOf(result)).toContain("CAIRN_URL");
    expect((await lost.callTool({ name: "cairn_me", arguments: {} })).isError).toBe(true);
  });
});
