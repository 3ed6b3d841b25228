// `bun run release`: five binaries for five platforms, each of the right
// format and CPU, listed in SHA256SUMS with their true digests; the one for
// this machine runs and reports its version and commit. Bun fetches the other
// platforms' runtimes from the npm registry only (no other network).
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./helpers/server.ts";

const OUT = join(ROOT, "dist/release");
const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

/** Executable format and CPU from the file's header. */
function platformOf(bytes: Buffer): string {
  if (bytes.readUInt32BE(0) === 0x7f454c46) {
    const machine = bytes.readUInt16LE(18);
    return `elf-${machine === 0x3e ? "x64" : machine === 0xb7 ? "arm64" : machine}`;
  }
  if (bytes.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = bytes.readUInt32LE(4);
    return `macho-${cpu === 0x01000007 ? "x64" : cpu === 0x0100000c ? "arm64" : cpu}`;
  }
  if (bytes.toString("latin1", 0, 2) === "MZ") {
    const pe = bytes.readUInt32LE(0x3c);
    return `pe-${bytes.readUInt16LE(pe + 4) === 0x8664 ? "x64" : bytes.readUInt16LE(pe + 4)}`;
  }
  return "unknown";
}

test(
  "bun run release: five platforms, SHA256SUMS true, the linux-x64 binary prints its version and commit",
  async () => {
    const run = Bun.spawnSync(["bun", "run", "release"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    if (run.exitCode !== 0) throw new Error(`release failed:\n${run.stdout}\n${run.stderr}`);

    const expected: Record<string, string> = {
      [`cairn-${version}-linux-x64`]: "elf-x64",
      [`cairn-${version}-linux-arm64`]: "elf-arm64",
      [`cairn-${version}-darwin-x64`]: "macho-x64",
      [`cairn-${version}-darwin-arm64`]: "macho-arm64",
      [`cairn-${version}-windows-x64.exe`]: "pe-x64",
    };
    expect(readdirSync(OUT).sort()).toEqual([...Object.keys(expected), "SHA256SUMS"].sort());
    const sums = readFileSync(join(OUT, "SHA256SUMS"), "utf8").trim().split("\n");
    expect(sums).toHaveLength(5);
    for (const line of sums) {
      const [digest, name] = line.split("  ");
      const bytes = readFileSync(join(OUT, name));
      expect({ name, digest }).toEqual({ name, digest: createHash("sha256").update(bytes).digest("hex") });
      expect({ name, platform: platformOf(bytes) }).toEqual({ name, platform: expected[name] });
    }
    // sha256sum itself agrees (what docs/install.md tells a user to run).
    const check = Bun.spawnSync(["sha256sum", "-c", "SHA256SUMS"], { cwd: OUT });
    expect(check.exitCode).toBe(0);

    if (process.platform === "linux" && process.arch === "x64") {
      const head = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: ROOT }).stdout.toString().trim();
      const out = Bun.spawnSync([join(OUT, `cairn-${version}-linux-x64`), "version"]).stdout.toString();
      expect(out).toMatch(new RegExp(`^cairn ${version.replaceAll(".", "\\.")} \\(commit ${head}(-dirty)?\\)\\n$`));
    }
  },
  { timeout: 300_000 },
);
