// Starts a real Cairn server on a temporary data directory and a free port;
// with `engine: "postgres"`, on a fresh database of the test process's
// throwaway PostgreSQL instead (test/helpers/postgres.ts).
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freshDatabase } from "./postgres.ts";

export type Engine = "sqlite" | "postgres";

export const ROOT = resolve(import.meta.dir, "../..");
export const BINARY = join(ROOT, "dist/cairn");

export interface RunningServer {
  url: string;
  engine: Engine;
  dataDir: string;
  /** The PostgreSQL database's URL (engine "postgres"), else null. */
  databaseUrl: string | null;
  /** The environment it runs with: a second server started with it shares its database. */
  env: Record<string, string>;
  proc: ReturnType<typeof Bun.spawn>;
  /** Everything the server wrote to stdout and stderr so far. */
  logs: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<number>;
  /** Run `cairn admin …` against this server's data directory. */
  admin: (...args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Use the compiled binary (dist/cairn) instead of `bun src/main.ts`. */
  binary?: boolean;
  dataDir?: string;
  /** "sqlite" (the default) or "postgres": a new database unless env names one (DATABASE_URL). */
  engine?: Engine;
}

export function command(binary: boolean): string[] {
  if (binary) {
    if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`bun run build\` first`);
    return [BINARY];
  }
  return [process.execPath, join(ROOT, "src/main.ts")];
}

export function tempDir(prefix = "cairn-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const dataDir = options.dataDir ?? tempDir();
  const ownsDir = options.dataDir === undefined;
  const engine = options.engine ?? (options.env?.DATABASE_URL ? "postgres" : "sqlite");
  const database: Record<string, string> = engine === "postgres" ? { DATABASE_URL: options.env?.DATABASE_URL ?? (await freshDatabase()) } : {};
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    HOST: "127.0.0.1",
    PORT: "0",
    DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    ...options.env,
    ...database,
  };
  const cmd = command(options.binary ?? false);
  const proc = Bun.spawn([...cmd, "serve"], { env, stdout: "pipe", stderr: "pipe", cwd: dataDir });
  let output = "";
  const decoder = new TextDecoder();
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) output += decoder.decode(chunk, { stream: true });
  };
  void pump(proc.stdout as ReadableStream<Uint8Array>);
  void pump(proc.stderr as ReadableStream<Uint8Array>);

  const deadline = Date.now() + 20_000;
  let url: string | null = null;
  while (Date.now() < deadline) {
    const match = output.match(/"listening","url":"(http:\/\/[^"]+)"/);
    if (match) {
      url = match[1];
      break;
    }
    if (proc.exitCode !== null) break;
    await Bun.sleep(20);
  }
  if (!url) {
    proc.kill();
    throw new Error(`server did not start:\n${output}`);
  }
  const server: RunningServer = {
    url,
    engine,
    dataDir,
    databaseUrl: env.DATABASE_URL ?? null,
    env: { ...options.env, ...database },
    proc,
    logs: () => output,
    stop: async (signal: NodeJS.Signals = "SIGTERM") => {
      if (proc.exitCode === null) proc.kill(signal);
      const code = await proc.exited;
      if (ownsDir) rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
    admin: async (...args: string[]) => {
      const child = Bun.spawn([...cmd, "admin", ...args], { env, stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, code] = await Promise.all([
        new Response(child.stdout).text(),
        new Response(child.stderr).text(),
        child.exited,
      ]);
      return { code, stdout, stderr };
    },
  };
  return server;
}

/** A small JSON client for tests: returns status, headers, raw text and parsed body. */
export async function call(
  base: string,
  method: string,
  path: string,
  options: { key?: string; json?: unknown; raw?: string | Uint8Array; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | Uint8Array | undefined;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers["content-type"] ??= "application/json";
  } else if (options.raw !== undefined) {
    body = options.raw;
  }
  const response = await fetch(base + path, { method, headers, body });
  const text = await response.text();
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  return { status: response.status, headers: response.headers, text, data };
}
