// At most N welcome e-mails per e-mail address per rolling day, whatever the
// IP: without it, an open instance could be used to mail a third party any
// number of times (20 per IP per hour, unbounded from rotating IPv6 addresses).
// Like the breakers it counts in memory, per process, and a restart clears it.
// Addresses are held as SHA-256 digests of their lower-cased form, never as text.
import { AppError } from "./errors.ts";

const DAY_MS = 86_400_000;
/** Addresses remembered at most; past it the oldest is forgotten (re-mailing one takes this many fresh registrations). */
export const MAX_ADDRESSES = 100_000;

export class AddressThrottle {
  /** Digest → times of the mails counted in the last day, oldest first (Map order: oldest entry first). */
  private readonly sent = new Map<string, number[]>();

  constructor(
    private readonly perDay: number,
    private readonly now: () => number = Date.now,
    private readonly maxAddresses = MAX_ADDRESSES,
  ) {}

  get size(): number {
    return this.sent.size;
  }

  /** Counts one welcome mail to `address`; throws rate_limited when it already had `perDay` in the last 24 hours. */
  hit(address: string): void {
    if (this.perDay === 0) return;
    const now = this.now();
    const digest = new Bun.CryptoHasher("sha256").update(address.trim().toLowerCase()).digest("base64");
    const recent = (this.sent.get(digest) ?? []).filter((at) => at > now - DAY_MS);
    if (recent.length >= this.perDay) {
      const seconds = Math.max(1, Math.ceil((recent[0] + DAY_MS - now) / 1000));
      throw new AppError(
        "rate_limited",
        `This e-mail address was sent a welcome e-mail in the last 24 hours (limit ${this.perDay} a day); try again in ${seconds} seconds (at ${new Date(now + seconds * 1000).toISOString()}).`,
        seconds,
      );
    }
    recent.push(now);
    this.sent.delete(digest);
    this.sent.set(digest, recent);
    while (this.sent.size > this.maxAddresses) this.sent.delete(this.sent.keys().next().value as string);
  }
}
