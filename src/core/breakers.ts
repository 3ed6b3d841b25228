// Runaway breakers: in-process counters per subject per clock hour.
// They are not quotas: a restart clears them and each replica counts alone.
import { AppError } from "./errors.ts";

export type BreakerName = "posts" | "comments" | "votes" | "searches" | "registrations" | "webEvents";

const HOUR_MS = 3_600_000;

/**
 * Distinct subjects counted per hour at most (a few MB). Past it, new
 * subjects share one count per breaker: under a flood of fresh addresses the
 * newcomers are limited together, and memory stays bounded.
 */
export const MAX_SUBJECTS = 100_000;
const OVERFLOW = "(overflow)";

const MESSAGES: Record<BreakerName, string> = {
  posts: "Too many notes this hour",
  comments: "Too many comments this hour",
  votes: "Too many votes this hour",
  searches: "Too many searches this hour",
  registrations: "Too many registrations from this address this hour",
  webEvents: "Too many events from this address this hour",
};

export class Breakers {
  private hour = -1;
  private counts = new Map<string, number>();

  constructor(
    private readonly limits: Record<BreakerName, number>,
    private readonly now: () => number = Date.now,
    private readonly maxSubjects = MAX_SUBJECTS,
  ) {}

  /** Subjects counted this hour (bounded by maxSubjects, plus one overflow count per breaker). */
  get subjects(): number {
    return this.counts.size;
  }

  private roll(): number {
    const now = this.now();
    const hour = Math.floor(now / HOUR_MS);
    if (hour !== this.hour) {
      this.hour = hour;
      this.counts.clear();
    }
    return now;
  }

  private secondsToReset(now: number): number {
    return Math.max(1, Math.ceil(((this.hour + 1) * HOUR_MS - now) / 1000));
  }

  /** Counts one event for `subject`; throws rate_limited once the hourly limit is passed. */
  hit(name: BreakerName, subject: string | number): void {
    const limit = this.limits[name];
    if (limit === 0) return;
    const now = this.roll();
    let key = `${name}:${subject}`;
    if (this.counts.size >= this.maxSubjects && !this.counts.has(key)) key = `${name}:${OVERFLOW}`;
    const count = this.counts.get(key) ?? 0;
    if (count >= limit) {
      const seconds = this.secondsToReset(now);
      throw new AppError(
        "rate_limited",
        `${MESSAGES[name]} (limit ${limit}); try again later, in ${seconds} seconds (at ${this.resetsAt().toISOString()}).`,
        seconds,
      );
    }
    this.counts.set(key, count + 1);
  }

  /** True when `subject` has used up `name` for this hour (does not count). */
  tripped(name: BreakerName, subject: string | number): boolean {
    const limit = this.limits[name];
    if (limit === 0) return false;
    this.roll();
    return (this.counts.get(`${name}:${subject}`) ?? 0) >= limit;
  }

  /** The start of the next UTC hour, when every count starts again (Retry-After rounds up to it). */
  resetsAt(): Date {
    this.roll();
    return new Date((this.hour + 1) * HOUR_MS);
  }
}
