// `cairn serve`: open the store, apply migrations, listen; drain on SIGTERM/SIGINT.
import { ConfigError, loadConfig } from "../config.ts";
import { Cairn } from "../core/service.ts";
import { createMailer } from "../mail/index.ts";
import { DatabaseFromNewerRelease, openStore, UnsuitableDatabase, SIGNAL_CHECK_MS, sqliteFilesOpenToOthers, storeLocation } from "../store/index.ts";
import type { Store } from "../store/types.ts";
import { createApp } from "./app.ts";
import { createLogger } from "./log.ts";

const DRAIN_TIMEOUT_MS = 10_000;

const HELP = `cairn serve — run the Cairn server

Settings come from the environment (see README): PORT (8080), HOST (127.0.0.1),
DATA_DIR (./data), DATABASE_URL (postgres://… selects PostgreSQL instead of the
SQLite file in DATA_DIR; docs/deploy.md), DATABASE_POOL_SIZE (5), REGISTRATION (open|closed), SEARCH_RESULTS, SNIP_CHARS,
PUBLIC_BASE_URL, SOURCE_URL (the source's web address, linked from the landing page),
TRUST_PROXY, LOG_LEVEL, DURABILITY (normal|full), SHUTDOWN_GRACE_MS,
NOTE_CACHE_MB, SEARCH_ENABLED (1; 0: search answers 503), SEARCH_MEMORY_MB,
SEARCH_THREAD (1: the postings on a thread of their own), SECRET_SCAN (1: refuse credentials),
SIMILAR_NOTES (1: list near-duplicates in the answer of a new note), WELCOME_MAILS_PER_ADDRESS_PER_DAY, the
*_PER_HOUR breakers, and the welcome e-mail: EMAIL_ENABLED (0), SMTP_URL,
EMAIL_FROM, EMAIL_RETRY_BASE_MS, EMAIL_RETRY_MAX_MS (docs/email.md).
Flags mirror the most common ones: --port N, --host H, --data-dir D,
--database-url URL.
`;

function applyFlags(args: string[], env: Record<string, string | undefined>): Record<string, string | undefined> {
  const names: Record<string, string> = { "--port": "PORT", "--host": "HOST", "--data-dir": "DATA_DIR", "--database-url": "DATABASE_URL" };
  const out = { ...env };
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].split(/=(.*)/s, 2);
    const name = names[flag];
    if (!name) throw new ConfigError(`unknown flag ${args[i]} (see cairn serve --help)`);
    const value = inline ?? args[++i];
    if (value === undefined) throw new ConfigError(`${flag} needs a value`);
    out[name] = value;
  }
  return out;
}

export async function runServe(args: string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(HELP);
    return 0;
  }
  let config;
  try {
    config = loadConfig(applyFlags(args, process.env));
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`cairn serve: ${error.message}`);
      return 2;
    }
    throw error;
  }
  const log = createLogger(config.logLevel);
  let accepting = false;

  let store: Store;
  try {
    store = openStore(config);
    await store.migrate();
  } catch (error) {
    if (error instanceof DatabaseFromNewerRelease || error instanceof UnsuitableDatabase) {
      console.error(`cairn serve: ${error.message}`);
      return 1;
    }
    console.error(
      config.databaseUrl !== null
        ? `cairn serve: cannot open the PostgreSQL database (${(error as Error).message}). Check DATABASE_URL or --database-url and that the server answers.`
        : `cairn serve: cannot open the database in ${config.dataDir} (${(error as Error).message}). ` +
            "Give a directory this user can write with --data-dir or DATA_DIR, or fix its permissions.",
    );
    return 1;
  }
  if (config.databaseUrl === null) {
    for (const { path, mode } of sqliteFilesOpenToOthers(config.dataDir)) {
      log.warn("other users of this machine can read this path, which holds e-mail addresses and key digests: chmod 600 it", { path, mode });
    }
  }
  // A signal file removed or replaced under a running server would leave it
  // deaf to revokes and other servers' note changes: map the new one, say so.
  // Postings that served searches and stopped (over budget after growth, the
  // search thread failed) are said once too.
  let postingsServed = false;
  const signalCheck = setInterval(() => {
    for (const path of store.remapReplacedSignals()) {
      log.warn("a change-signal file was removed or replaced while running; mapped the new one and forgot what it remembered", { path });
    }
    const reason = store.searchMemoryOffReason;
    if (reason === null) postingsServed = true;
    else if (postingsServed && reason !== "closed") {
      postingsServed = false;
      log.warn("search stays on the database index (exact, slower)", { reason });
    }
  }, SIGNAL_CHECK_MS);
  signalCheck.unref();
  if (store.keySignalOffReason !== null) {
    log.warn("API keys are read from the database on every request (slower): the key-change signal is unavailable", { reason: store.keySignalOffReason });
  }
  if (store.searchMemoryOffReason !== null) {
    log.info("search answers from the database index for now (exact, slower than in-memory postings)", { reason: store.searchMemoryOffReason });
    const building = performance.now();
    void store.searchMemoryBuilt().then(() => {
      const reason = store.searchMemoryOffReason;
      if (reason === null) log.info("search postings are in memory: search answers from them", { ms: Math.round(performance.now() - building) });
      else if (!/SEARCH_MEMORY_MB is 0/.test(reason)) log.warn("search stays on the database index (exact, slower)", { reason });
    });
  }
  if (store.noteSignalOffReason !== null) {
    log.warn("notes are read from the database on every request (slower): the note-change signal is unavailable", { reason: store.noteSignalOffReason });
  }
  const cairn = new Cairn(store, config);
  const app = createApp({ cairn, store, config, log, isAccepting: () => accepting });
  try {
    // reusePort off: Elysia turns it on, and then a second server on the same
    // port starts too and the kernel splits requests between two databases.
    app.listen({ port: config.port, hostname: config.host, maxRequestBodySize: 16 * 1024 * 1024, reusePort: false });
  } catch (error) {
    const inUse = (error as NodeJS.ErrnoException).code === "EADDRINUSE";
    console.error(
      inUse
        ? `cairn serve: ${config.host}:${config.port} is already in use (another Cairn server?). Stop that process or choose another port with --port or PORT.`
        : `cairn serve: cannot listen on ${config.host}:${config.port} (HOST, PORT or --host, --port): ${(error as Error).message}. HOST must be an address of this machine, e.g. 127.0.0.1, 0.0.0.0 or ::`,
    );
    await store.close();
    return 1;
  }
  const server = app.server!;
  accepting = true;
  // An IPv6 address is bracketed in a URL.
  const hostInUrl = server.hostname?.includes(":") ? `[${server.hostname}]` : server.hostname;
  log.notice("listening", { url: `http://${hostInUrl}:${server.port}`, ...storeLocation(config) });
  const mailer = config.emailEnabled ? createMailer({ config, store, log }) : null;
  mailer?.start();

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    accepting = false;
    // First readyz turns 503 while requests are still served, so a load
    // balancer stops sending; then the listener closes and in-flight requests finish.
    const grace = signal === "SIGTERM" ? config.shutdownGraceMs : 0;
    log.notice("draining", { signal, graceMs: grace });
    if (grace > 0) await Bun.sleep(grace);
    const drained = server.stop(false);
    const timedOut = await Promise.race([drained.then(() => false), Bun.sleep(DRAIN_TIMEOUT_MS).then(() => true)]);
    if (timedOut) {
      log.warn("drain timed out; closing remaining connections", { timeoutMs: DRAIN_TIMEOUT_MS });
      await server.stop(true);
    }
    await mailer?.stop();
    clearInterval(signalCheck);
    await store.close();
    log.notice("stopped");
    log.flush();
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  return -1; // keep running
}
