// Issue 19, point 4: POST /v1/mcp driven by the MCP SDK's own
// StreamableHTTPClientTransport against a real server, looped over every
// engine: an agent host with only a URL and a key lists and calls every tool;
// the tool set is the one `cairn mcp` serves over stdio; no key is 401;
// breakers and body limits hold.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { call, expectError, NO_BREAKERS, register, type Contributor } from "./helpers/api.ts";
import { forEachEngine } from "./helpers/engines.ts";
import { BINARY, startServer, type RunningServer } from "./helpers/server.ts";

const TOOLS = [
  "cairn_comment",
  "cairn_delete_note",
  "cairn_get_note",
  "cairn_list_comments",
  "cairn_me",
  "cairn_my_posts",
  "cairn_post_note",
  "cairn_search",
  "cairn_vote",
];

type ToolResult = Awaited<ReturnType<Client["callTool"]>>;
const textOf = (result: ToolResult) => (result.content as { type: string; text: string }[])[0].text;
function ok(result: ToolResult): any {
  if (result.isError) throw new Error(`tool failed: ${textOf(result)}`);
  return JSON.parse(textOf(result));
}

forEachEngine((engine) => {
  let server: RunningServer;
  let author: Contributor;
  let reader: Contributor;
  const clients: Client[] = [];

  /** An agent host that knows only the URL and a key. */
  async function connect(base: string, key: string | undefined): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), {
      requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} },
    });
    const client = new Client({ name: "cairn-http-test", version: "1.0.0" });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    // The compiled server: its MCP SDK is a dynamic import, which the executable must carry.
    server = await startServer({ engine, binary: true, env: { ...NO_BREAKERS, POSTS_PER_HOUR: "5" } });
    author = await register(server.url);
    reader = await register(server.url);
  }, 60_000);
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await server?.stop();
  });

  test("lists every tool of `cairn mcp`, with the same schemas and descriptions as over stdio", async () => {
    const agent = await connect(server.url, author.key);
    const { tools } = await agent.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOLS);
    const { resourceTemplates } = await agent.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["cairn://notes/{id}"]);
    // One definition: `cairn mcp` over stdio lists exactly the same tools.
    const stdio = new Client({ name: "cairn-stdio-test", version: "1.0.0" });
    await stdio.connect(new StdioClientTransport({ command: BINARY, args: ["mcp"], env: { PATH: process.env.PATH ?? "", CAIRN_URL: server.url, CAIRN_API_KEY: author.key } }));
    clients.push(stdio);
    expect((await stdio.listTools()).tools).toEqual(tools);
  });

  test("calls every tool and reads the note resource, each answering the server's JSON", async () => {
    const agent = await connect(server.url, author.key);
    const other = await connect(server.url, reader.key);
    const title = `Over HTTP ${Date.now()}`;
    const note = ok(await agent.callTool({ name: "cairn_post_note", arguments: { title, body: "Reached by URL alone.", tags: ["mcp"] } }));
    expect(note).toMatchObject({ title, tags: ["mcp"], contributor_no: author.no });
    expect(ok(await agent.callTool({ name: "cairn_get_note", arguments: { id: note.id } }))).toEqual(
      (await call(server.url, "GET", `/v1/posts/${note.id}`, { key: author.key })).data,
    );
    const found = ok(await other.callTool({ name: "cairn_search", arguments: { query: "reached by url" } }));
    expect(found.results.map((r: { id: string }) => r.id)).toContain(note.id);
    expect(ok(await other.callTool({ name: "cairn_comment", arguments: { id: note.id, body: "Seen." } }))).toMatchObject({ post_id: note.id, comment_count: 1 });
    expect(ok(await agent.callTool({ name: "cairn_list_comments", arguments: { id: note.id } }))).toMatchObject({ post_id: note.id, count: 1 });
    expect(ok(await other.callTool({ name: "cairn_vote", arguments: { id: note.id, vote: "up" } }))).toEqual({ post_id: note.id, your_vote: "up", score: 1 });
    expect(ok(await agent.callTool({ name: "cairn_me", arguments: {} })).recent_posts[0].id).toBe(note.id);
    const mine = ok(await agent.callTool({ name: "cairn_my_posts", arguments: {} }));
    expect(mine.posts[0]).toMatchObject({ id: note.id, score: 1, comment_count: 1 });
    expect(mine.next).toBeNull();
    const resource = await agent.readResource({ uri: `cairn://notes/${note.id}` });
    expect(JSON.parse((resource.contents[0] as { text: string }).text).id).toBe(note.id);
    expect(ok(await agent.callTool({ name: "cairn_delete_note", arguments: { id: note.id } }))).toEqual({ deleted: true, id: note.id });
    // Each logical write carries a fresh key: the same note again is the duplicate rule's 409, not a replay.
    const again = { title: `Twice ${Date.now()}`, body: "Same." };
    ok(await agent.callTool({ name: "cairn_post_note", arguments: again }));
    const second = await agent.callTool({ name: "cairn_post_note", arguments: again });
    expect(second.isError).toBe(true);
    expect(textOf(second)).toContain("duplicate_post");
  });

  test("no key, or a wrong one: 401 before any MCP message is read", async () => {
    const raw = await call(server.url, "POST", "/v1/mcp", {
      json: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      headers: { accept: "application/json, text/event-stream" },
    });
    expectError(raw, 401, "unauthorized");
    await expect(connect(server.url, undefined)).rejects.toThrow(/401|nauthorized/);
    await expect(connect(server.url, `cairn_${"x".repeat(43)}`)).rejects.toThrow(/401|nauthorized/);
  });

  test("GET and DELETE are 405 with Allow: POST (no stream, no sessions), after the key check; the SDK client reports no error", async () => {
    const who = await register(server.url);
    for (const method of ["GET", "DELETE"]) {
      const answer = await call(server.url, method, "/v1/mcp", { key: who.key, headers: { accept: "text/event-stream" } });
      expectError(answer, 405, "method_not_allowed");
      expect(answer.headers.get("allow")).toBe("POST");
      expectError(await call(server.url, method, "/v1/mcp", { headers: { accept: "text/event-stream" } }), 401, "unauthorized");
    }
    // The transport probes GET for a stream after initialising: 405 means "none offered", anything else is an error.
    const errors: Error[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${who.key}` } },
    });
    const agent = new Client({ name: "cairn-http-probe", version: "1.0.0" });
    agent.onerror = (error) => errors.push(error);
    await agent.connect(transport);
    clients.push(agent);
    ok(await agent.callTool({ name: "cairn_me", arguments: {} }));
    await Bun.sleep(200);
    expect(errors.map(String)).toEqual([]);
  });

  test("breakers and the body limit apply as on every route", async () => {
    const who = await register(server.url);
    const agent = await connect(server.url, who.key);
    // POSTS_PER_HOUR is 5: five notes, then the tool answers the breaker's 429 with the wait.
    for (let i = 0; i < 5; i++) ok(await agent.callTool({ name: "cairn_post_note", arguments: { title: `Limit ${i} ${Date.now()}`, body: "x" } }));
    const refused = await agent.callTool({ name: "cairn_post_note", arguments: { title: `Limit over ${Date.now()}`, body: "x" } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("rate_limited");
    expect(textOf(refused)).toMatch(/retry after \d+ seconds/);
    const huge = await call(server.url, "POST", "/v1/mcp", {
      key: who.key,
      raw: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(70_000) } }),
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    });
    expectError(huge, 413, "payload_too_large");
    // A body within the character limit but over 64 KiB of UTF-8 makes the MCP message itself too large:
    // the host's transport gets the 413 payload_too_large (the tool's description says the request is limited in bytes).
    await expect(agent.callTool({ name: "cairn_post_note", arguments: { title: "Emoji body", body: "😀".repeat(20_000) } })).rejects.toThrow(/payload_too_large/);
  });
});
