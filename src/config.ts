// The one place that reads the environment. Everything else receives a Config.
import { totalmem } from "node:os";

export interface Breakers {
  postsPerHour: number;
  commentsPerHour: number;
  votesPerHour: number;
  searchesPerHour: number;
  registrationsPerHour: number;
  webEventsPerHour: number;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** postgres://… selects the PostgreSQL engine; null keeps the embedded SQLite file in dataDir. */
  databaseUrl: string | null;
  /** Connections each process keeps to PostgreSQL (unused on SQLite). */
  databasePoolSize: number;
  publicBaseUrl: string | null;
  /** Where the source lives (a web address), linked from the landing page; null hides the link. */
  sourceUrl: string | null;
  registration: "open" | "closed";
  emailEnabled: boolean;
  smtpUrl: string | null;
  emailFrom: string | null;
  /** First retry delay of the welcome-mail sender; doubles per failed attempt up to emailRetryMaxMs. */
  emailRetryBaseMs: number;
  emailRetryMaxMs: number;
  trustProxy: boolean;
  searchEnabled: boolean;
  searchResults: number;
  snipChars: number;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** SQLite `synchronous` pragma: NORMAL (default, WAL-safe) or FULL (fsync every commit). */
  durability: "normal" | "full";
  /** On SIGTERM, how long readyz answers 503 while requests are still served, before the listener closes. */
  shutdownGraceMs: number;
  /** Byte budget of the in-memory note cache (NOTE_CACHE_MB, estimated from the notes' text). */
  noteCacheBytes: number;
  /**
   * Byte budget of the in-memory search postings (SEARCH_MEMORY_MB; 0: none,
   * search then runs on the database's index alone: exact, slower). See
   * docs/design.md, "Search".
   */
  searchMemoryBytes: number;
  /** The in-memory postings on a thread of their own, off the thread that serves requests (SEARCH_THREAD; docs/design.md, "The search thread"). */
  searchThread: boolean;
  /** List near-duplicates in the answer of POST /v1/posts (SIMILAR_NOTES; docs/design.md, "Similar notes"). */
  similarNotes: boolean;
  /** Refuse titles, bodies, tags and comments holding a credential (SECRET_SCAN; docs/design.md, "Secrets"). */
  secretScan: boolean;
  /** With EMAIL_ENABLED=1: welcome e-mails to one address in a rolling day at most (0: no limit). */
  welcomeMailsPerAddressPerDay: number;
  breakers: Breakers;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

/**
 * SEARCH_MEMORY_MB's default: a quarter of the machine's memory, at least
 * 256 MB and at most 4096 MB (the share databases commonly give their caches;
 * what the postings cost per note: docs/benchmarks.md).
 */
export function defaultSearchMemoryMb(totalBytes = totalmem()): number {
  return Math.min(4096, Math.max(256, Math.floor(totalBytes / 4 / 1048576)));
}

function intSetting(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolSetting(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new ConfigError(`${name} must be 0 or 1, got "${env[name]}"`);
}

function choiceSetting<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  if (!(choices as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${choices.join(", ")}, got "${env[name]}"`);
  }
  return raw as T;
}

function stringSetting(env: Env, name: string): string | null {
  const raw = env[name]?.trim();
  return raw ? raw : null;
}

/** An http(s) address, or null when unset. */
function urlSetting(env: Env, name: string): string | null {
  const raw = stringSetting(env, name);
  if (raw === null) return null;
  if (!/^https?:\/\/[^\s"<>]+$/.test(raw)) throw new ConfigError(`${name} must be an http:// or https:// address, got "${raw}"`);
  return raw;
}

export function loadConfig(env: Env = process.env): Config {
  const config: Config = {
    port: intSetting(env, "PORT", 8080, 0, 65535),
    host: stringSetting(env, "HOST") ?? "127.0.0.1",
    dataDir: stringSetting(env, "DATA_DIR") ?? "./data",
    databaseUrl: stringSetting(env, "DATABASE_URL"),
    // Few connections a replica: a plain create is one statement, and PostgreSQL spent less CPU per
    // create with fewer backends (docs/benchmarks.md, "Issue 20: two replicas against one").
    databasePoolSize: intSetting(env, "DATABASE_POOL_SIZE", 5, 1, 1000),
    publicBaseUrl: urlSetting(env, "PUBLIC_BASE_URL")?.replace(/\/+$/, "") ?? null,
    sourceUrl: urlSetting(env, "SOURCE_URL"),
    registration: choiceSetting(env, "REGISTRATION", ["open", "closed"] as const, "open"),
    emailEnabled: boolSetting(env, "EMAIL_ENABLED", false),
    smtpUrl: stringSetting(env, "SMTP_URL"),
    emailFrom: stringSetting(env, "EMAIL_FROM"),
    emailRetryBaseMs: intSetting(env, "EMAIL_RETRY_BASE_MS", 5_000, 10, 3_600_000),
    emailRetryMaxMs: intSetting(env, "EMAIL_RETRY_MAX_MS", 600_000, 10, 86_400_000),
    trustProxy: boolSetting(env, "TRUST_PROXY", false),
    searchEnabled: boolSetting(env, "SEARCH_ENABLED", true),
    searchResults: intSetting(env, "SEARCH_RESULTS", 10, 1, 100),
    snipChars: intSetting(env, "SNIP_CHARS", 400, 20, 20000),
    logLevel: choiceSetting(env, "LOG_LEVEL", ["debug", "info", "warn", "error", "silent"] as const, "info"),
    durability: choiceSetting(env, "DURABILITY", ["normal", "full"] as const, "normal"),
    shutdownGraceMs: intSetting(env, "SHUTDOWN_GRACE_MS", 1000, 0, 60_000),
    welcomeMailsPerAddressPerDay: intSetting(env, "WELCOME_MAILS_PER_ADDRESS_PER_DAY", 1),
    noteCacheBytes: intSetting(env, "NOTE_CACHE_MB", 64, 0, 65_536) * 1024 * 1024,
    searchMemoryBytes: intSetting(env, "SEARCH_MEMORY_MB", defaultSearchMemoryMb(), 0, 1_048_576) * 1024 * 1024,
    searchThread: boolSetting(env, "SEARCH_THREAD", true),
    secretScan: boolSetting(env, "SECRET_SCAN", true),
    similarNotes: boolSetting(env, "SIMILAR_NOTES", true),
    breakers: {
      postsPerHour: intSetting(env, "POSTS_PER_HOUR", 30),
      commentsPerHour: intSetting(env, "COMMENTS_PER_HOUR", 120),
      votesPerHour: intSetting(env, "VOTES_PER_HOUR", 600),
      searchesPerHour: intSetting(env, "SEARCHES_PER_HOUR", 600),
      registrationsPerHour: intSetting(env, "REGISTRATIONS_PER_HOUR", 20),
      webEventsPerHour: intSetting(env, "WEB_EVENTS_PER_HOUR", 600),
    },
  };
  if (config.databaseUrl !== null && !/^postgres(ql)?:\/\//.test(config.databaseUrl)) {
    // The URL itself is not repeated: it may hold a password.
    throw new ConfigError("DATABASE_URL must be a postgres:// or postgresql:// URL (unset it to use the embedded SQLite file)");
  }
  if (config.emailEnabled) checkEmailSettings(config);
  return config;
}

/** With EMAIL_ENABLED=1 the sender must be able to run: fail at start, not at the first mail. */
function checkEmailSettings(config: Config): void {
  if (!config.smtpUrl) {
    throw new ConfigError("EMAIL_ENABLED=1 needs SMTP_URL (for example smtp://mail.example.org:587 or smtps://user:pass@mail.example.org)");
  }
  let url: URL | null = null;
  try {
    url = new URL(config.smtpUrl);
  } catch {
    url = null;
  }
  // The URL itself is not repeated: it may hold the SMTP password.
  if (!url || !["smtp:", "smtps:"].includes(url.protocol) || !url.hostname) {
    throw new ConfigError("SMTP_URL must be an smtp:// or smtps:// URL with a host name");
  }
  if (!config.emailFrom) {
    throw new ConfigError('EMAIL_ENABLED=1 needs EMAIL_FROM, the sender address (for example "Cairn <cairn@example.org>")');
  }
  if (!config.emailFrom.includes("@")) throw new ConfigError("EMAIL_FROM must be an e-mail address");
  if (config.emailRetryMaxMs < config.emailRetryBaseMs) {
    throw new ConfigError("EMAIL_RETRY_MAX_MS must not be below EMAIL_RETRY_BASE_MS");
  }
}
