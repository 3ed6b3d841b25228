// `cairn mcp`: the API as MCP tools over stdio, for agent hosts that start it
// as a command. A thin client like the other verbs: each tool is one HTTP
// request to the server, and its result is the server's JSON. The tools are
// defined once in src/mcp/tools.ts (POST /v1/mcp serves the same set). Config
// (URL, key) is read on every call, so `cairn register` after the host started works.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { registerCairnTools, type ApiAnswer, type ApiCall, type CairnApi } from "../mcp/tools.ts";
import { UsageError } from "./args.ts";
import { ConfigError, configPath, readConfig, type ConfigFile, type Env } from "./config.ts";
import { send, UnreachableError } from "./http.ts";
import { resolveKey, resolveTarget, timeoutMs, unreachableHint } from "./target.ts";
import { VERSION } from "./version.ts";

const HELP = `usage: cairn mcp [--url U]

Serves the Cairn API as MCP tools over stdio (JSON-RPC on stdin/stdout) for an
agent host that starts it as a command. The URL and key come from --url,
CAIRN_URL, CAIRN_API_KEY or the config file, as for the other verbs.
Hosts that connect by URL need no binary: the server serves the same tools at
<server>/v1/mcp (MCP Streamable HTTP, Authorization: Bearer <key>).
Host configuration: docs/mcp.md.
`;

/** The tools' requests, sent over HTTP; config (URL, key) is read on every call. */
function httpApi(flagUrl: string | undefined, env: Env): CairnApi {
  const path = configPath(env);
  return {
    unauthorizedHint:
      "Next: check CAIRN_API_KEY in this MCP server's environment, or run `cairn register <email>` once in a terminal; if the key was revoked, ask the instance's operator.",
    async send(call: ApiCall): Promise<ApiAnswer> {
      let config: ConfigFile;
      try {
        config = readConfig(path);
      } catch (error) {
        return { failure: `${(error as ConfigError).message}. The Cairn config file must be fixed before any tool works.`, retryable: false };
      }
      let target;
      let timeout;
      try {
        target = resolveTarget(flagUrl, env, () => config);
        timeout = timeoutMs(env);
      } catch (error) {
        if (error instanceof UsageError) return { failure: `${error.message}. Fix it in this MCP server's configuration (args or env).`, retryable: false };
        throw error;
      }
      const key = resolveKey(env, () => config);
      if (!key) {
        return {
          failure:
            `No Cairn API key. Set CAIRN_API_KEY in this MCP server's environment (the host's "env" block), ` +
            `or run \`cairn register <email>\` once in a terminal (it saves a key to ${path}). Then call the tool again.`,
          retryable: false,
        };
      }
      try {
        const response = await send(target.base, call, { key, timeoutMs: timeout, userAgent: `cairn-mcp/${VERSION}` });
        return { status: response.status, body: new TextDecoder().decode(response.body), retryAfter: response.retryAfter };
      } catch (error) {
        if (!(error instanceof UnreachableError)) throw error;
        return { failure: `${error.message}. ${unreachableHint(target)} (in this MCP server's env). Retrying will not help until the server answers.`, retryable: true };
      }
    },
  };
}

export function createMcpServer(flagUrl: string | undefined, env: Env): McpServer {
  const server = new McpServer({ name: "cairn", version: VERSION });
  registerCairnTools(server, httpApi(flagUrl, env));
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
