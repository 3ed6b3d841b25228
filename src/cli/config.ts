// The client's config file: {"url": ..., "api_key": ...}, mode 0600, written by `register`.
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

export type Env = Record<string, string | undefined>;
/** The fields the client reads; other keys are kept as they are. */
export type ConfigFile = { url?: string; api_key?: string } & Record<string, unknown>;

/** The fields the client reads, each a string when present. */
const STRING_FIELDS = ["url", "api_key"] as const;

/** A config file that exists but cannot be used: exit code 2, like a usage error. */
export class ConfigError extends Error {}

export function configPath(env: Env): string {
  const base = env.XDG_CONFIG_HOME?.trim() ? env.XDG_CONFIG_HOME : join(homedir(), ".config");
  return join(base, "cairn", "config.json");
}

/** The file's contents; `{}` when it does not exist. */
export function readConfig(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new ConfigError(`cannot read ${path}: ${(error as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new ConfigError(`${path} is not valid JSON: fix or remove it`);
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new ConfigError(`${path} must hold a JSON object: fix or remove it`);
  }
  for (const field of STRING_FIELDS) {
    const value = (data as Record<string, unknown>)[field];
    if (value !== undefined && typeof value !== "string") {
      throw new ConfigError(`${path}: "${field}" must be a string, not ${value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`}: fix or remove it`);
    }
  }
  return data as ConfigFile;
}

/** Merges `updates` into the file, keeping its other keys. Directory 0700, file 0600. */
export function saveConfig(path: string, updates: ConfigFile): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const data = { ...readConfig(path), ...updates };
  // Write a private temporary file and rename it over the old one, so the key
  // is never in a readable file and a crash never leaves half a config.
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
  chmodSync(path, 0o600);
}
