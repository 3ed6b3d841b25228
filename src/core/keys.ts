// API keys: `cairn_` + 43 base62 characters from the CSPRNG (~256 bits).
// Only the 12-character lookup prefix and the SHA-256 digest are ever stored.
import { timingSafeEqual } from "node:crypto";

export const KEY_MARKER = "cairn_";
export const KEY_RANDOM_CHARS = 43;
/** The fewest random characters a key is accepted with (older or other minters' keys may be shorter than 43 or longer). */
export const KEY_RANDOM_MIN = 40;
export const KEY_PREFIX_LENGTH = 12;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const KEY_PATTERN = new RegExp(`^${KEY_MARKER}[0-9A-Za-z]{${KEY_RANDOM_MIN},200}$`);

export interface MintedKey {
  key: string;
  prefix: string;
  digest: Uint8Array;
}

function randomBase62(count: number): string {
  let out = "";
  // Rejection sampling keeps every character uniform: 248 = 4 * 62.
  while (out.length < count) {
    const bytes = crypto.getRandomValues(new Uint8Array(count * 2));
    for (const byte of bytes) {
      if (byte < 248 && out.length < count) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function digestKey(key: string): Uint8Array {
  // The static one-shot form: no hasher object per request.
  return Bun.SHA256.hash(key) as Uint8Array;
}

/** The same digest as base64 text, a Map key (see known-keys.ts). */
export function digestKeyText(key: string): string {
  return Bun.SHA256.hash(key, "base64") as string;
}

export function keyPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX_LENGTH);
}

export function mintKey(): MintedKey {
  const key = KEY_MARKER + randomBase62(KEY_RANDOM_CHARS);
  return { key, prefix: keyPrefix(key), digest: digestKey(key) };
}

/** Shape check only: anything that cannot be a key is refused before any lookup. */
export function looksLikeKey(candidate: string): boolean {
  return KEY_PATTERN.test(candidate);
}

/** Constant-time digest comparison (both sides are always 32 bytes). */
export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  return timingSafeEqual(a, b);
}

/** The bearer token of an Authorization header, or null. */
export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match ? match[1] : null;
}
