// The background sender: claims one due outbox row at a time, hands it to the
// SMTP transport, and records the outcome. It never runs inside a request;
// registration only writes the row.
//
// Delivery guarantee: a row is marked sent right after the SMTP server
// accepted the message, so a delivered mail is never sent again, except in
// one window: the process dies (or storage fails) between the server's
// acceptance and that update. The row's lease then runs out and the mail is
// sent a second time (at-least-once; see docs/email.md).
import type { Store, OutboxMail } from "../store/types.ts";
import {
  classifyFailure,
  describeFailure,
  isSingleAddress,
  LEASE_MS,
  POLL_MS,
  retryDelay,
  SEND_TIMEOUT_MS,
  STOP_GRACE_MS,
  tooOld,
  type FailureKind,
  type RetryPolicy,
} from "./policy.ts";
import { renderMail, type Site } from "./welcome.ts";

export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
}

/** What the sender needs from a mail library (src/mail/smtp.ts wraps nodemailer). */
export interface MailTransport {
  /** Resolves once the server accepted the message; rejects otherwise or when `signal` aborts. */
  send(mail: OutgoingMail, signal: AbortSignal): Promise<void>;
  close(): void;
}

/** The logger's shape (src/http/log.ts). Fields never hold an address: outbox id and contributor number only. */
export interface MailLog {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface SenderOptions {
  store: Store;
  transport: MailTransport;
  log: MailLog;
  from: string;
  site: Site;
  retry: RetryPolicy;
  now?: () => number;
  random?: () => number;
  pollMs?: number;
  leaseMs?: number;
  sendTimeoutMs?: number;
  stopGraceMs?: number;
}

type Outcome = "sent" | "none" | FailureKind;

export class MailSender {
  private running: Promise<void> | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;
  private inFlight: AbortController | null = null;
  /** Consecutive failures that said the server cannot take mail; paces the whole sender. */
  private serverFailures = 0;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(private readonly options: SenderOptions) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  get isRunning(): boolean {
    return this.running !== null;
  }

  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.running = this.loop();
    // Never the SMTP URL: it may hold a password.
    this.options.log.info("mail sender started", { retryBaseMs: this.options.retry.baseMs, retryMaxMs: this.options.retry.maxMs });
  }

  /** Looks for due rows now instead of at the next poll. */
  poke(): void {
    this.wake?.();
  }

  /**
   * Stops the loop: no new row is claimed; a send in flight may finish for
   * `stopGraceMs`, then it is aborted (the row is retried later). Resolves
   * when the loop has ended or the bound has passed.
   */
  async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.stopping = true;
    this.wake?.();
    const grace = this.options.stopGraceMs ?? STOP_GRACE_MS;
    if (!(await settlesWithin(running, grace))) {
      this.options.log.warn("mail sender: send still in flight at shutdown; aborting it", { graceMs: grace });
      this.inFlight?.abort(new Error("sender stopping"));
      await settlesWithin(running, 1_000);
    }
    this.options.transport.close();
    this.running = null;
    this.options.log.info("mail sender stopped");
  }

  private async loop(): Promise<void> {
    const pollMs = this.options.pollMs ?? POLL_MS;
    while (!this.stopping) {
      let outcome: Outcome;
      try {
        outcome = await this.step();
      } catch (error) {
        // Storage trouble (busy, disk full): say so and try again later.
        this.options.log.error("mail sender: outbox not readable", { error: describeFailure(error) });
        outcome = "none";
      }
      if (this.stopping) break;
      if (outcome === "server") await this.pause(retryDelay(this.serverFailures, this.options.retry, this.random));
      else if (outcome === "none") await this.pause(pollMs);
      // After a sent or refused row, the next one is looked for at once.
    }
  }

  /** Claims and works off one due row. */
  private async step(): Promise<Outcome> {
    const { store } = this.options;
    const [mail] = await store.claimDueMail(this.now(), 1, this.options.leaseMs ?? LEASE_MS);
    if (!mail) return "none";
    return this.deliver(mail);
  }

  private async deliver(mail: OutboxMail): Promise<Outcome> {
    const { store, log } = this.options;
    const ids = { outboxId: mail.id, contributorNo: mail.contributorNo, kind: mail.kind };
    if (!isSingleAddress(mail.recipient)) {
      await store.markMailGivenUp(mail.id, "the recipient is not one plain e-mail address", this.now());
      log.warn("mail given up: recipient is not one plain address", ids);
      return "refused";
    }
    const rendered = renderMail(mail.kind, mail, this.options.site);
    const controller = new AbortController();
    this.inFlight = controller;
    const timeout = setTimeout(
      () => controller.abort(new Error("send timed out")),
      this.options.sendTimeoutMs ?? SEND_TIMEOUT_MS,
    );
    try {
      await this.options.transport.send({ from: this.options.from, to: mail.recipient, ...rendered }, controller.signal);
    } catch (error) {
      return this.failed(mail, error);
    } finally {
      clearTimeout(timeout);
      this.inFlight = null;
    }
    // Accepted by the server: record it before anything else can happen.
    try {
      await store.markMailSent(mail.id, this.now());
    } catch (error) {
      log.error("mail sent but not recorded; it will be sent again when its lease runs out", {
        ...ids,
        error: describeFailure(error),
      });
    }
    this.serverFailures = 0;
    log.info("mail sent", { ...ids, attempts: mail.attempts });
    return "sent";
  }

  private async failed(mail: OutboxMail, error: unknown): Promise<Outcome> {
    const { store, log } = this.options;
    const ids = { outboxId: mail.id, contributorNo: mail.contributorNo, kind: mail.kind };
    const kind = classifyFailure(error);
    const summary = describeFailure(error);
    const now = this.now();
    if (kind === "refused" || tooOld(mail.createdAt, now)) {
      await store.markMailGivenUp(mail.id, summary, now);
      log.warn("mail given up", { ...ids, attempts: mail.attempts, reason: kind === "refused" ? "refused" : "too old", error: summary });
      return kind;
    }
    if (kind === "server") this.serverFailures += 1;
    const delay = retryDelay(mail.attempts, this.options.retry, this.random);
    await store.markMailFailed(mail.id, summary, now + delay);
    log.warn("mail not sent; will retry", { ...ids, attempts: mail.attempts, retryInMs: delay, error: summary });
    return kind;
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wake === done) this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}

async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const settled = await Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  return settled;
}
