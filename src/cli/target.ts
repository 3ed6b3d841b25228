// Where the client sends its requests and with which key: --url, CAIRN_URL or
// the config file, and CAIRN_API_KEY or the config file. Shared by the verbs
// and `cairn mcp`.
import { UsageError } from "./args.ts";
import type { ConfigFile, Env } from "./config.ts";

export const DEFAULT_URL = "http://127.0.0.1:8080";
export const DEFAULT_TIMEOUT_MS = 30_000;

export interface Target {
  /** Base URL without a trailing slash or `/v1` (paths start with /v1/). */
  base: string;
  /** Where the URL came from, for messages: "--url", "CAIRN_URL", "the config file's url", "the default". */
  source: string;
}

export function resolveTarget(flag: string | undefined, env: Env, config: () => ConfigFile): Target {
  const fromConfig = config().url;
  const [raw, source] =
    flag !== undefined
      ? [flag, "--url"]
      : env.CAIRN_URL?.trim()
        ? [env.CAIRN_URL.trim(), "CAIRN_URL"]
        : fromConfig?.trim()
          ? [fromConfig.trim(), "the config file's url"]
          : [DEFAULT_URL, "the default"];
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${source} is not a URL: "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`${source} must start with http:// or https://`);
  // Every path the client sends starts with /v1/, so a base URL copied from the
  // docs with its /v1 would double it (…/v1/v1/me, a confusing 404): drop it.
  return { base: raw.replace(/\/+$/, "").replace(/\/v1$/, ""), source };
}

/**
 * The base URL a redirect points to, for the message that shows it (it is
 * never followed): the Location, read against the request's URL, less the
 * request's own path (and so its query) when its path ends with it, e.g.
 * https://elsewhere.example for https://elsewhere.example/v1/me; else the
 * Location's origin. Undefined when the Location is not an http(s) URL.
 */
export function redirectBase(location: string, base: string, path: string): string | undefined {
  let url: URL;
  try {
    url = new URL(location, base + path);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  // The request's path as URL writes a path (percent-encoding included), without its query.
  const sent = new URL(path, url).pathname;
  const prefix = url.pathname.endsWith(sent) ? url.pathname.slice(0, -sent.length) : "";
  return url.origin + prefix.replace(/\/+$/, "");
}

/** CAIRN_API_KEY, else the config file's api_key; undefined when neither is set. */
export function resolveKey(env: Env, config: () => ConfigFile): string | undefined {
  const stored = config().api_key;
  return env.CAIRN_API_KEY?.trim() || stored?.trim() || undefined;
}

export function timeoutMs(env: Env): number {
  const raw = env.CAIRN_TIMEOUT_MS?.trim();
  if (!raw) return DEFAULT_TIMEOUT_MS;
  if (!/^\d+$/.test(raw) || Number(raw) === 0) throw new UsageError(`CAIRN_TIMEOUT_MS must be a positive whole number, got "${raw}"`);
  return Number(raw);
}

/** The next step after a failed connection, naming where the URL came from. */
export function unreachableHint(target: Target): string {
  return `is the server running there? The URL came from ${target.source}; give another with --url or CAIRN_URL`;
}
