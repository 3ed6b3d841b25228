// The subject a per-address breaker counts: a client's IP address, parsed.
// Counting the raw string let anyone pick a fresh key per request: any text in
// X-Forwarded-For (10,000 values of 12 KB grew RSS by 113 MB), or a fresh
// address from one's own IPv6 /64, which every home or server gets whole.
import { isIP } from "node:net";

/**
 * The breaker subject for an address: an IPv4 address as is (also when
 * written IPv4-mapped, ::ffff:a.b.c.d), an IPv6 address as its /64 prefix;
 * null when `raw` is not an IP address (it is then no subject at all).
 */
export function addressSubject(raw: string): string | null {
  let text = raw.trim();
  if (text.length > 64) return null;
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  const zone = text.indexOf("%");
  if (zone !== -1) text = text.slice(0, zone);
  const kind = isIP(text);
  if (kind === 4) return text;
  if (kind !== 6) return null;
  const groups = ipv6Groups(text);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6] >> 8}.${groups[6] & 255}.${groups[7] >> 8}.${groups[7] & 255}`;
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (isIP said so). */
function ipv6Groups(text: string): number[] {
  let address = text;
  // A trailing dotted IPv4 part is two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    address = address.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = address.split("::");
  const parse = (part: string | undefined) => (part ? part.split(":").map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const zeros = tail === undefined ? [] : new Array(8 - left.length - right.length).fill(0);
  return [...left, ...zeros, ...right];
}
