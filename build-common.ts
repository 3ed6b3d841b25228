// What build.ts (this platform) and release.ts (every platform) share: the
// compile options, and the commit stamped into `cairn version`.
import { BUILD_ROOT, FOLD_WORKER_ENTRY } from "./src/store/sqlite/fold-thread.ts";

/** The checked-out commit (with "-dirty" when the tree has changes), or "unknown" outside git. */
export function buildCommit(): string {
  const head = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { stderr: "ignore" });
  if (head.exitCode !== 0) return "unknown";
  const dirty = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=no"], { stderr: "ignore" });
  return head.stdout.toString().trim() + (dirty.stdout.toString().trim() ? "-dirty" : "");
}

export async function compile(options: { outfile: string; commit: string; target?: Bun.Build.CompileTarget }): Promise<void> {
  const result = await Bun.build({
    // The fold thread's worker is an entry point of its own (src/store/sqlite/fold-thread.ts names it).
    entrypoints: ["./src/main.ts", FOLD_WORKER_ENTRY],
    // Named: the worker is found in the executable by its path under the root (fold-thread.ts, workerSpecifier).
    root: BUILD_ROOT,
    compile: options.target ? { outfile: options.outfile, target: options.target } : { outfile: options.outfile },
    minify: true,
    target: "bun",
    // Precompiled bytecode: the client verbs start in ~23 ms instead of ~95 ms,
    // because the runtime no longer parses the whole bundle (server, MCP SDK)
    // on every start (docs/install.md has the figures).
    bytecode: true,
    format: "esm",
    define: { CAIRN_BUILD_COMMIT: JSON.stringify(options.commit) },
  });
  if (!result.success) {
    for (const message of result.logs) console.error(message);
    throw new Error(`compiling ${options.outfile} failed`);
  }
}
