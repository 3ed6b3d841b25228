// The client (src/cli) keeps its own copy of the contract's limits because it
// may not import server code; this keeps the copy honest.
import { expect, test } from "bun:test";
import { CLIENT_LIMITS } from "../../src/cli/limits.ts";
import { LIMITS } from "../../src/core/limits.ts";

test("the client's limits equal the server's", () => {
  for (const [name, value] of Object.entries(CLIENT_LIMITS)) {
    expect({ name, value: value as number }).toEqual({ name, value: LIMITS[name as keyof typeof LIMITS] });
  }
});

test("no file under src/cli imports server code", async () => {
  const glob = new Bun.Glob("src/cli/**/*.ts");
  for await (const file of glob.scan({ cwd: `${import.meta.dir}/../..` })) {
    const text = await Bun.file(`${import.meta.dir}/../../${file}`).text();
    expect({ file, imports: text.match(/from\s+["']\.\.\/(core|http|store|admin|mail|web|config)\b[^"']*["']/g) ?? [] }).toEqual({ file, imports: [] });
  }
});

test("the MCP tool definition the CLI shares with the server (src/mcp) imports no server code either", async () => {
  const glob = new Bun.Glob("src/mcp/**/*.ts");
  let files = 0;
  for await (const file of glob.scan({ cwd: `${import.meta.dir}/../..` })) {
    files++;
    const text = await Bun.file(`${import.meta.dir}/../../${file}`).text();
    expect({ file, imports: text.match(/from\s+["']\.\.\/(core|http|store|admin|mail|web|config)\b[^"']*["']/g) ?? [] }).toEqual({ file, imports: [] });
  }
  expect(files).toBeGreaterThan(0);
});
