// Where the SQLite engine's worker threads' modules are: each an entry point
// of its own in the executable (build-common.ts), found there by its path
// under BUILD_ROOT beside the main module, and from source beside this file.
// The fold thread's (fold-thread.ts) and the search thread's (search-thread.ts).

/** The workers' modules, entry points of the executable besides src/main.ts. */
export const WORKER_ENTRIES = ["./src/store/sqlite/fold-worker.ts", "./src/store/sqlite/search-worker.ts"];
/** build-common.ts compiles with `root` BUILD_ROOT, so an entry is its path under it, beside the main module. */
export const BUILD_ROOT = "./src";

/**
 * The URL of worker module `name` ("fold-worker"): from source, the module
 * beside this one; in the executable (its embedded files are under
 * `/$bunfs/root/`, `~BUN/root/` on Windows), the embedded entry as a URL
 * beside the main module's. The entry's source path, resolved against the
 * working directory, found the source tree's file when the server ran from
 * the repository (every bench), and nothing elsewhere, so a deployed server
 * ran without the thread (docs/benchmarks.md, "Writes of ~2 KB notes, sixth
 * round"; test/api/binary.test.ts runs the executable from another directory).
 */
export function workerUrl(name: "fold-worker" | "search-worker", url = import.meta.url): string {
  const embedded = url.includes("/$bunfs/") || url.includes("~BUN");
  return new URL(embedded ? `./store/sqlite/${name}.js` : `./${name}.ts`, url).href;
}
