// The shared MCP tool definition (src/mcp/tools.ts) with a scripted API in
// place of the network: every logical write carries an Idempotency-Key (a
// fresh one per note and vote, one made from the note and text per comment),
// and the tool's own retry (server unreachable, 502, 503, 504,
// request_in_progress) sends the same key again, so a retry can never write twice.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { expect, test } from "bun:test";
import { registerCairnTools, type ApiAnswer, type ApiCall } from "../../src/mcp/tools.ts";

async function toolsWith(answers: ApiAnswer[]) {
  const sent: ApiCall[] = [];
  const server = new McpServer({ name: "cairn", version: "test" });
  registerCairnTools(server, {
    unauthorizedHint: "check the key",
    async send(call) {
      sent.push(call);
      return answers.shift() ?? { status: 500, body: "{}", retryAfter: null };
    },
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "t", version: "1" });
  await client.connect(clientSide);
  return { client, sent };
}

const NOTE = '{"id":"01890a5d-ac96-774b-bcce-b302099a8057"}';

test("a write retried after an unreachable server and a 409 request_in_progress sends one key throughout", async () => {
  const { client, sent } = await toolsWith([
    { failure: "cannot reach", retryable: true },
    { status: 409, body: '{"error":{"code":"request_in_progress","message":"m"}}', retryAfter: null },
    { status: 201, body: NOTE, retryAfter: null },
  ]);
  const result = await client.callTool({ name: "cairn_post_note", arguments: { title: "t", body: "b" } });
  expect(result.isError).toBeFalsy();
  expect(sent).toHaveLength(3);
  expect(sent[0].idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  expect(new Set(sent.map((call) => call.idempotencyKey)).size).toBe(1);
}, 10_000);

test("each logical write gets a fresh key; reads carry none; a final refusal is not retried", async () => {
  const { client, sent } = await toolsWith([
    { status: 201, body: NOTE, retryAfter: null },
    { status: 200, body: "{}", retryAfter: null },
    { status: 201, body: "{}", retryAfter: null },
    { status: 429, body: '{"error":{"code":"rate_limited","message":"m"}}', retryAfter: "60" },
  ]);
  await client.callTool({ name: "cairn_post_note", arguments: { title: "t", body: "b" } });
  await client.callTool({ name: "cairn_me", arguments: {} });
  await client.callTool({ name: "cairn_comment", arguments: { id: "01890a5d-ac96-774b-bcce-b302099a8057", body: "c" } });
  const limited = await client.callTool({ name: "cairn_vote", arguments: { id: "01890a5d-ac96-774b-bcce-b302099a8057", vote: "up" } });
  expect(limited.isError).toBe(true);
  expect(sent).toHaveLength(4);
  expect(sent[1].idempotencyKey).toBeUndefined();
  const keys = [sent[0], sent[2], sent[3]].map((call) => call.idempotencyKey);
  expect(new Set(keys).size).toBe(3);
});

test("a comment's key is made from its note and text: a host's second call after a lost answer sends the same key", async () => {
  const answers = Array.from({ length: 4 }, () => ({ status: 201, body: "{}", retryAfter: null }) as ApiAnswer);
  const { client, sent } = await toolsWith(answers);
  const id = "01890a5d-ac96-774b-bcce-b302099a8057";
  await client.callTool({ name: "cairn_comment", arguments: { id, body: "Confirmed on 3.46." } });
  await client.callTool({ name: "cairn_comment", arguments: { id: id.toUpperCase(), body: "Confirmed on 3.46." } });
  await client.callTool({ name: "cairn_comment", arguments: { id, body: "Confirmed on 3.47." } });
  await client.callTool({ name: "cairn_comment", arguments: { id: "01890a5d-ac96-774b-bcce-b302099a8058", body: "Confirmed on 3.46." } });
  const keys = sent.map((call) => call.idempotencyKey!);
  expect(keys[0]).toMatch(/^mcp-[A-Za-z0-9_-]{43}$/);
  expect(keys[1]).toBe(keys[0]);
  expect(new Set(keys).size).toBe(3);
});

test("a proxy's 502 and 504 are retried with the same key; when no try is answered, the error says whether calling again is safe", async () => {
  const gateway = (status: number): ApiAnswer => ({ status, body: "<html>Bad Gateway</html>", retryAfter: null });
  const { client, sent } = await toolsWith([gateway(502), gateway(504), { status: 201, body: NOTE, retryAfter: null }]);
  const stored = await client.callTool({ name: "cairn_post_note", arguments: { title: "t", body: "b" } });
  expect(stored.isError).toBeFalsy();
  expect(sent).toHaveLength(3);
  expect(new Set(sent.map((call) => call.idempotencyKey)).size).toBe(1);

  const lost = await toolsWith(Array.from({ length: 5 }, () => ({ failure: "cannot reach the server", retryable: true }) as ApiAnswer));
  const result = await lost.client.callTool({ name: "cairn_comment", arguments: { id: "01890a5d-ac96-774b-bcce-b302099a8057", body: "c" } });
  expect(result.isError).toBe(true);
  expect(lost.sent).toHaveLength(5);
  const text = (result.content as { text: string }[])[0].text;
  expect(text).toContain("cannot reach the server");
  expect(text).toContain("Calling this tool again with the same note and text is safe");
}, 20_000);
