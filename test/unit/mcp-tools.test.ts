// The shared MCP tool definition (src/mcp/tools.ts) with a scripted API in
// place of the network: every logical write carries a fresh Idempotency-Key,
// and the tool's own retry (server unreachable, 503, request_in_progress)
// sends the same key again, so a retry can never write twice.
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
