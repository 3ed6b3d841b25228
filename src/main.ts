// One executable: `serve` runs the server, `admin …` the operator's verbs,
// anything else is the thin client. Each part is loaded only when used, so the
// client starts without loading the server.
const [verb, ...rest] = process.argv.slice(2);

async function main(): Promise<number> {
  if (verb === "serve") {
    const { runServe } = await import("./http/serve.ts");
    return runServe(rest);
  }
  if (verb === "admin") {
    const { runAdmin } = await import("./admin/main.ts");
    return runAdmin(rest);
  }
  if (verb === "mcp") {
    // Loaded only here: the MCP SDK is most of the client's code and none of the other verbs need it.
    const { runMcp } = await import("./cli/mcp.ts");
    return runMcp(rest);
  }
  const { runCli } = await import("./cli/main.ts");
  return runCli(process.argv.slice(2));
}

main().then(
  (code) => {
    if (code !== -1) process.exit(code);
  },
  (error) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  },
);
