// POST /v1/mcp: the MCP tools of `cairn mcp` (defined once in src/mcp/tools.ts)
// over the MCP Streamable HTTP transport, stateless (a server and transport per
// request, JSON answers), keyed with the caller's Bearer header. Each tool's
// request goes through this server's own routes (`handle`), so it is
// authenticated, validated, size-limited and counted by the breakers exactly
// like the same request sent over the network.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { registerCairnTools, type ApiAnswer, type ApiCall, type CairnApi } from "../mcp/tools.ts";

/** Where in-process tool requests are addressed; only the path is routed. */
const INTERNAL_ORIGIN = "http://cairn.internal";

function inProcessApi(handle: (request: Request) => Promise<Response>, authorization: string, requestId: string | null): CairnApi {
  return {
    unauthorizedHint: "Next: check the Authorization: Bearer <api_key> header this host sends to /v1/mcp; if the key was revoked or rotated, use the current one.",
    async send(call: ApiCall): Promise<ApiAnswer> {
      const headers: Record<string, string> = { authorization, accept: "application/json" };
      if (call.body !== undefined) headers["content-type"] = "application/json";
      if (call.idempotencyKey !== undefined) headers["idempotency-key"] = call.idempotencyKey;
      if (requestId !== null) headers["x-request-id"] = requestId;
      const response = await handle(new Request(INTERNAL_ORIGIN + call.path, { method: call.method, headers, body: call.body }));
      return { status: response.status, body: await response.text(), retryAfter: response.headers.get("retry-after") };
    },
  };
}

export async function mcpResponse(
  request: Request,
  parsedBody: unknown,
  options: { handle: (request: Request) => Promise<Response>; version: string; requestId: string | null },
): Promise<Response> {
  const server = new McpServer({ name: "cairn", version: options.version });
  registerCairnTools(server, inProcessApi(options.handle, request.headers.get("authorization") ?? "", options.requestId));
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody });
  } finally {
    await server.close();
  }
}
