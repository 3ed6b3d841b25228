// The welcome-mail sender's rules: retry timing, what a failure means, when to
// give up, and how an error is described without the address in it. No I/O.

export interface RetryPolicy {
  /** Delay after the first failed attempt. */
  baseMs: number;
  /** Ceiling of the delay, however many attempts failed. */
  maxMs: number;
}

/** Delays are shortened by up to this fraction at random, so rows queued together spread out. */
export const RETRY_JITTER = 0.2;
/** A mail still undelivered this long after registration is given up (a late welcome helps no one). */
export const GIVE_UP_AFTER_MS = 7 * 24 * 3600_000;
/** How long a claimed row is held by one sender; longer than the longest send (SEND_TIMEOUT_MS). */
export const LEASE_MS = 120_000;
/** A send that has not finished by then is aborted and retried. */
export const SEND_TIMEOUT_MS = 60_000;
/** How often an idle sender looks for new rows. */
export const POLL_MS = 1_000;
/** How long stop() waits for an in-flight send before aborting it. */
export const STOP_GRACE_MS = 5_000;

/**
 * Delay before the next attempt after `attempt` failed attempts (1 = the first
 * failure): base × 2^(attempt−1), capped at max, then shortened by up to 20 %
 * (`random` in [0, 1)). Never below 80 % of base, never above max.
 */
export function retryDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const n = Number.isFinite(attempt) ? Math.max(1, Math.floor(attempt)) : 1;
  // 2^40 × any sane base is past every ceiling; the cap keeps the number finite.
  const exponential = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(n - 1, 40));
  const jitter = 1 - RETRY_JITTER * Math.min(Math.max(random(), 0), 1);
  return Math.max(1, Math.round(exponential * jitter));
}

/**
 * What a send failure means:
 * - `server`: the SMTP server cannot take any mail now (unreachable, timed out,
 *   TLS or authentication trouble, 421, the sender address refused). Retry the
 *   row later and pause the whole sender, so a dead server costs one attempt
 *   per backoff period, not one per queued mail.
 * - `message`: this message was refused for now (a 4xx reply to the recipient
 *   or the data, greylisting). Retry this row later; others go on.
 * - `refused`: refused for good (a permanent 5xx reply to the recipient or the
 *   data, or an address the mail library will not send to). Give up the row.
 */
export type FailureKind = "server" | "message" | "refused";

interface SmtpErrorShape {
  code?: unknown;
  command?: unknown;
  responseCode?: unknown;
  permanent?: unknown;
  /** The server's reply as received (nodemailer). */
  response?: unknown;
  message?: unknown;
}

const SERVER_CODES = new Set([
  "ECONNECTION",
  "ETIMEDOUT",
  "ESOCKET",
  "EDNS",
  "ETLS",
  "EREQUIRETLS",
  "EPROTOCOL",
  "EAUTH",
  "ENOAUTH",
  "EOAUTH2",
  "EPROXY",
  "EABORT",
  "ECONFIG",
]);

/**
 * Refusals that name us, not the recipient: the relay does not relay for this
 * client (missing or wrong credentials, not in its networks), or refuses the
 * client, its EHLO name or the sender address. Postfix gives its client, EHLO
 * and sender refusals at RCPT TO (smtpd_delay_reject), and a relay refuses
 * relaying there, as a 5xx. Every mail gets the same answer until the operator
 * fixes the settings, so they are the server's failures, like bad credentials:
 * giving each row up would lose every welcome mail of the meantime for good.
 */
const REFUSES_US =
  /relay(ing)? access denied|relaying denied|relay(ing)? not (permitted|allowed)|unable to relay|client host rejected|helo command rejected|sender address rejected|authentication required/i;

export function classifyFailure(error: unknown): FailureKind {
  const e = (typeof error === "object" && error !== null ? error : {}) as SmtpErrorShape;
  const code = typeof e.code === "string" ? e.code : "";
  const command = typeof e.command === "string" ? e.command.toUpperCase() : "";
  const reply = typeof e.responseCode === "number" ? e.responseCode : null;
  // Nodemailer refused the envelope before talking to the server: a malformed
  // recipient is this row's problem, a malformed sender the operator's.
  if (code === "EENVELOPE" && command === "API") {
    const message = typeof e.message === "string" ? e.message : "";
    return /sender/i.test(message) ? "server" : "refused";
  }
  if (reply === null || SERVER_CODES.has(code) || reply === 421) return "server";
  if (command.startsWith("MAIL FROM") || command.startsWith("EHLO") || command.startsWith("HELO") || command === "CONN") {
    return "server";
  }
  // 530: authentication required (RFC 4954), whatever the command.
  const text = [e.response, e.message].filter((part) => typeof part === "string").join(" ");
  if (reply === 530 || REFUSES_US.test(text)) return "server";
  const permanent = typeof e.permanent === "boolean" ? e.permanent : reply >= 500 && reply !== 503;
  if (permanent && (command.startsWith("RCPT") || command === "DATA")) return "refused";
  return "message";
}

/** True when the row is old enough to stop trying. */
export function tooOld(createdAt: number, now: number): boolean {
  return now - createdAt >= GIVE_UP_AFTER_MS;
}

/**
 * One plain address and nothing else: registration accepts any text with an
 * `@`, and a list ("a@x, b@y"), a display name or a line break must never turn
 * one welcome mail into several recipients or extra headers.
 */
export function isSingleAddress(recipient: string): boolean {
  return recipient.length <= 254 && /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/.test(recipient);
}

const ADDRESS_LIKE = /[^\s<>()[\]\\,;:"'=]+@[^\s<>()[\]\\,;:"'=]+/g;

/** Replaces anything shaped like an e-mail address (or user:pass@host) with `<address>`. */
export function scrubAddresses(text: string): string {
  return text.replace(ADDRESS_LIKE, "<address>");
}

/**
 * A short description of a failure for logs and `last_error`: error code,
 * SMTP command and reply code, and the message with every address removed.
 * The raw server reply is left out (it often repeats the recipient).
 */
export function describeFailure(error: unknown): string {
  if (typeof error !== "object" || error === null) return scrubAddresses(String(error)).slice(0, 300);
  const e = error as SmtpErrorShape & { message?: unknown; originalCode?: unknown };
  const parts: string[] = [];
  if (typeof e.code === "string") parts.push(e.code);
  if (typeof e.originalCode === "string" && e.originalCode !== e.code) parts.push(`(${e.originalCode})`);
  if (typeof e.command === "string") parts.push(`on ${e.command}`);
  if (typeof e.responseCode === "number") parts.push(`reply ${e.responseCode}`);
  const message = typeof e.message === "string" ? scrubAddresses(e.message).replace(/\s+/g, " ").trim() : "";
  const head = parts.join(" ");
  return (head && message ? `${head}: ${message}` : head || message || "unknown error").slice(0, 300);
}
