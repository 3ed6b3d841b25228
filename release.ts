// `bun run release`: cross-compiles cairn for every supported platform into
// dist/release/ and writes SHA256SUMS (the `sha256sum -c` format).
// Bun fetches each target's runtime once from the npm registry
// (@oven/bun-<platform>) into its cache; no other network is needed.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { version } from "./package.json";
import { buildCommit, compile } from "./build-common.ts";

export const TARGETS = [
  { name: "linux-x64", target: "bun-linux-x64" },
  { name: "linux-arm64", target: "bun-linux-arm64" },
  { name: "darwin-x64", target: "bun-darwin-x64" },
  { name: "darwin-arm64", target: "bun-darwin-arm64" },
  { name: "windows-x64", target: "bun-windows-x64" },
] as const;

const OUT = "dist/release";

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
const commit = buildCommit();
const sums: string[] = [];
for (const { name, target } of TARGETS) {
  const file = `cairn-${version}-${name}${name.startsWith("windows") ? ".exe" : ""}`;
  const started = performance.now();
  await compile({ outfile: join(OUT, file), commit, target });
  const digest = createHash("sha256").update(readFileSync(join(OUT, file))).digest("hex");
  sums.push(`${digest}  ${file}`);
  const mb = (statSync(join(OUT, file)).size / 1e6).toFixed(1);
  console.log(`${file}  ${mb} MB  ${Math.round(performance.now() - started)} ms`);
}
writeFileSync(join(OUT, "SHA256SUMS"), `${sums.join("\n")}\n`);
console.log(`${OUT}/SHA256SUMS written (commit ${commit})`);
