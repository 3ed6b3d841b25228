// The outbox on a real SQLite store and the sender loop with a scripted
// transport: transactions, leases, at-most-once after acceptance, backoff,
// giving up, and a bounded stop.
import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { MailSender, type MailTransport, type OutgoingMail } from "../../src/mail/sender.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import { tempDir } from "../helpers/server.ts";

const open: { store: SqliteStore; dir: string }[] = [];
afterEach(async () => {
  for (const { store, dir } of open.splice(0)) {
    await store.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
});

async function newStore(): Promise<SqliteStore> {
  const dir = tempDir("cairn-mail-");
  const store = new SqliteStore({ dataDir: dir });
  await store.migrate();
  open.push({ store, dir });
  return store;
}

let counter = 0;
async function registerWithMail(store: SqliteStore, email: string, at = Date.now()) {
  counter += 1;
  const prefix = `cairn_${counter.toString().padStart(6, "0")}`;
  return store.createContributor({ email, keyPrefix: prefix, keyDigest: new Uint8Array(32), createdAt: at }, { kind: "welcome" });
}

function rows(store: SqliteStore) {
  return store.sqlite.query("SELECT * FROM email_outbox ORDER BY id").all() as {
    id: number;
    recipient: string;
    attempts: number;
    next_attempt_at: number;
    leased_until: number | null;
    last_error: string | null;
    sent_at: number | null;
    gave_up_at: number | null;
  }[];
}

/** A transport whose behaviour each test scripts; records every message handed to it. */
class ScriptedTransport implements MailTransport {
  readonly calls: OutgoingMail[] = [];
  readonly delivered: OutgoingMail[] = [];
  closed = false;
  constructor(public behaviour: (mail: OutgoingMail, signal: AbortSignal) => Promise<void> = async () => {}) {}
  async send(mail: OutgoingMail, signal: AbortSignal) {
    this.calls.push(mail);
    await this.behaviour(mail, signal);
    this.delivered.push(mail);
  }
  close() {
    this.closed = true;
  }
}

const logged: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
const log = {
  info: (msg: string, fields?: Record<string, unknown>) => logged.push({ level: "info", msg, fields }),
  warn: (msg: string, fields?: Record<string, unknown>) => logged.push({ level: "warn", msg, fields }),
  error: (msg: string, fields?: Record<string, unknown>) => logged.push({ level: "error", msg, fields }),
};

function sender(store: SqliteStore, transport: MailTransport, extra: Partial<ConstructorParameters<typeof MailSender>[0]> = {}) {
  return new MailSender({
    store,
    transport,
    log,
    from: "cairn@example.org",
    site: { publicBaseUrl: null },
    retry: { baseMs: 50, maxMs: 200 },
    pollMs: 20,
    random: () => 0,
    ...extra,
  });
}

async function waitFor(what: string, condition: () => boolean, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

const refusedConnection = () =>
  Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:25"), { code: "ESOCKET", originalCode: "ECONNREFUSED", command: "CONN" });

describe("outbox store", () => {
  test("the welcome row is written with the contributor, in one transaction", async () => {
    const store = await newStore();
    const contributor = await registerWithMail(store, "ann@example.org", 1_000);
    expect(rows(store)).toEqual([
      expect.objectContaining({ id: 1, recipient: "ann@example.org", attempts: 0, next_attempt_at: 1_000, sent_at: null }),
    ]);
    expect((store.sqlite.query("SELECT contributor_no FROM email_outbox").get() as any).contributor_no).toBe(contributor.contributorNo);
    // Without the mail argument (EMAIL_ENABLED=0, admin provision) nothing is queued.
    await store.createContributor({ email: "bo@example.org", keyPrefix: "cairn_zzzzzz", keyDigest: new Uint8Array(32), createdAt: 1 });
    expect(rows(store).length).toBe(1);
  });

  test("when the outbox row cannot be written, the contributor is not created either", async () => {
    const store = await newStore();
    store.sqlite.exec("DROP TABLE email_outbox");
    await expect(registerWithMail(store, "ann@example.org")).rejects.toThrow();
    expect((store.sqlite.query("SELECT count(*) AS n FROM contributors").get() as any).n).toBe(0);
  });

  test("a claim is a lease: nobody else gets the row until it runs out or is released", async () => {
    const store = await newStore();
    await registerWithMail(store, "ann@example.org", 1_000);
    const [first] = await store.claimDueMail(2_000, 5, 1_000);
    expect(first).toMatchObject({ id: 1, recipient: "ann@example.org", kind: "welcome", attempts: 1 });
    expect(await store.claimDueMail(2_999, 5, 1_000)).toEqual([]);
    // The holder died: at the end of the lease the row is claimed again.
    expect(await store.claimDueMail(3_000, 5, 1_000)).toMatchObject([{ id: 1, attempts: 2 }]);
    await store.markMailFailed(1, "ESOCKET", 10_000);
    expect(await store.claimDueMail(9_999, 5, 1_000)).toEqual([]);
    expect(await store.claimDueMail(10_000, 5, 1_000)).toMatchObject([{ id: 1, attempts: 3 }]);
  });

  test("a sent row is final: later failures or give-ups do not touch it, and it is never claimed again", async () => {
    const store = await newStore();
    await registerWithMail(store, "ann@example.org", 1_000);
    await store.claimDueMail(2_000, 1, 1_000);
    await store.markMailSent(1, 2_100);
    await store.markMailFailed(1, "late failure", 2_200);
    await store.markMailGivenUp(1, "late give-up", 2_300);
    expect(rows(store)[0]).toMatchObject({ sent_at: 2_100, gave_up_at: null, leased_until: null, last_error: null });
    expect(await store.claimDueMail(1e15, 10, 1_000)).toEqual([]);
    expect(await store.outboxCounts()).toEqual({ pending: 0, sent: 1, gaveUp: 0 });
  });

  test("claims take the oldest due rows first, up to the limit", async () => {
    const store = await newStore();
    for (let i = 0; i < 5; i++) await registerWithMail(store, `p${i}@example.org`, 1_000 + i);
    expect((await store.claimDueMail(5_000, 2, 1_000)).map((m) => m.id)).toEqual([1, 2]);
    expect((await store.claimDueMail(5_000, 10, 1_000)).map((m) => m.id)).toEqual([3, 4, 5]);
  });
});

describe("sender", () => {
  test("sends each due mail once and marks it sent", async () => {
    const store = await newStore();
    for (const name of ["ann", "bo", "cy"]) await registerWithMail(store, `${name}@example.org`);
    const transport = new ScriptedTransport();
    const mailer = sender(store, transport);
    mailer.start();
    await waitFor("three mails", () => transport.delivered.length === 3);
    await Bun.sleep(100); // several polls: nothing is sent twice
    await mailer.stop();
    expect(transport.calls.map((m) => m.to).sort()).toEqual(["ann@example.org", "bo@example.org", "cy@example.org"]);
    expect(transport.calls.every((m) => m.from === "cairn@example.org" && m.subject.startsWith("Welcome to Cairn"))).toBe(true);
    expect(rows(store).every((row) => row.sent_at !== null && row.attempts === 1)).toBe(true);
    expect(transport.closed).toBe(true);
  });

  test("a mail queued while the sender runs goes out at the next poll", async () => {
    const store = await newStore();
    const transport = new ScriptedTransport();
    const mailer = sender(store, transport);
    mailer.start();
    await Bun.sleep(50);
    await registerWithMail(store, "late@example.org");
    await waitFor("the mail", () => transport.delivered.length === 1);
    await mailer.stop();
  });

  test("while the server is down: one attempt per backoff period, not one per queued mail; all go out once it is back", async () => {
    const store = await newStore();
    for (let i = 0; i < 10; i++) await registerWithMail(store, `q${i}@example.org`);
    let up = false;
    const transport = new ScriptedTransport(async () => {
      if (!up) throw refusedConnection();
    });
    const mailer = sender(store, transport, { retry: { baseMs: 40, maxMs: 80 } });
    mailer.start();
    await Bun.sleep(400);
    // Pauses of 40, 80, 80, … ms: about five attempts in 400 ms, far fewer than 10 rows × retries.
    const failedCalls = transport.calls.length;
    expect(failedCalls).toBeGreaterThanOrEqual(3);
    expect(failedCalls).toBeLessThanOrEqual(9);
    const failed = rows(store).filter((row) => row.attempts > 0);
    expect(failed.every((row) => row.sent_at === null && row.leased_until === null)).toBe(true);
    expect(failed.every((row) => row.last_error === "ESOCKET (ECONNREFUSED) on CONN: connect ECONNREFUSED 127.0.0.1:25")).toBe(true);
    up = true;
    await waitFor("all ten", () => transport.delivered.length === 10);
    await Bun.sleep(150);
    await mailer.stop();
    expect(transport.delivered.length).toBe(10);
    expect(new Set(transport.delivered.map((m) => m.to)).size).toBe(10);
    expect(rows(store).every((row) => row.sent_at !== null)).toBe(true);
    // Logs name outbox ids and contributor numbers, never an address.
    expect(JSON.stringify(logged)).not.toMatch(/q\d@example\.org/);
    expect(logged.some((line) => line.msg === "mail not sent; will retry" && typeof line.fields?.outboxId === "number")).toBe(true);
  });

  test("a row's own retry time grows with its attempts", async () => {
    const store = await newStore();
    await registerWithMail(store, "slow@example.org", 0);
    const transport = new ScriptedTransport(async () => {
      throw Object.assign(new Error("greylisted"), { code: "EENVELOPE", command: "RCPT TO", responseCode: 451, permanent: false });
    });
    let clock = 1_000;
    const mailer = sender(store, transport, { now: () => clock, retry: { baseMs: 100, maxMs: 350 } });
    mailer.start();
    const nextAfter = async (calls: number) => {
      await waitFor(`attempt ${calls}`, () => transport.calls.length === calls && rows(store)[0].leased_until === null);
      return rows(store)[0].next_attempt_at - clock;
    };
    expect(await nextAfter(1)).toBe(100);
    clock += 100;
    expect(await nextAfter(2)).toBe(200);
    clock += 200;
    expect(await nextAfter(3)).toBe(350);
    clock += 350;
    expect(await nextAfter(4)).toBe(350);
    await mailer.stop();
  });

  test("a permanent refusal of the recipient is given up, not retried", async () => {
    const store = await newStore();
    await registerWithMail(store, "nobody@example.org");
    const transport = new ScriptedTransport(async () => {
      throw Object.assign(new Error("Recipient command failed: 550 5.1.1 <nobody@example.org> unknown"), {
        code: "EENVELOPE",
        command: "RCPT TO",
        responseCode: 550,
        permanent: true,
      });
    });
    const mailer = sender(store, transport);
    mailer.start();
    await waitFor("the give-up", () => rows(store)[0].gave_up_at !== null);
    await Bun.sleep(100);
    await mailer.stop();
    expect(transport.calls.length).toBe(1);
    expect(rows(store)[0].last_error).toBe("EENVELOPE on RCPT TO reply 550: Recipient command failed: 550 5.1.1 <<address>> unknown");
    expect(await store.outboxCounts()).toEqual({ pending: 0, sent: 0, gaveUp: 1 });
  });

  test("a recipient that is not one plain address is never handed to SMTP", async () => {
    const store = await newStore();
    await registerWithMail(store, "a@example.org, victim@example.net");
    const transport = new ScriptedTransport();
    const mailer = sender(store, transport);
    mailer.start();
    await waitFor("the give-up", () => rows(store)[0].gave_up_at !== null);
    await mailer.stop();
    expect(transport.calls.length).toBe(0);
  });

  test("a mail older than a week is given up at its next failure", async () => {
    const store = await newStore();
    const now = Date.now();
    await registerWithMail(store, "old@example.org", now - 8 * 24 * 3600_000);
    const transport = new ScriptedTransport(async () => {
      throw refusedConnection();
    });
    const mailer = sender(store, transport);
    mailer.start();
    await waitFor("the give-up", () => rows(store)[0].gave_up_at !== null);
    await mailer.stop();
    expect(transport.calls.length).toBe(1);
  });

  test("accepted but not recorded (crash right after SMTP said yes): sent again after the lease — the documented window", async () => {
    const store = await newStore();
    await registerWithMail(store, "twice@example.org");
    // A sender claimed the row, the server accepted, and the process died before markMailSent.
    await store.claimDueMail(Date.now(), 1, 200);
    const transport = new ScriptedTransport();
    const mailer = sender(store, transport, { leaseMs: 200 });
    mailer.start();
    await Bun.sleep(100);
    expect(transport.calls.length).toBe(0); // the lease still holds
    await waitFor("the resend", () => transport.delivered.length === 1);
    await mailer.stop();
    expect(rows(store)[0]).toMatchObject({ attempts: 2 });
    expect(rows(store)[0].sent_at).not.toBeNull();
  });

  test("stop waits for a send in flight, then records its outcome", async () => {
    const store = await newStore();
    await registerWithMail(store, "inflight@example.org");
    const transport = new ScriptedTransport(() => Bun.sleep(150));
    const mailer = sender(store, transport);
    mailer.start();
    await waitFor("the send to start", () => transport.calls.length === 1);
    await mailer.stop();
    expect(transport.delivered.length).toBe(1);
    expect(rows(store)[0].sent_at).not.toBeNull();
    expect(mailer.isRunning).toBe(false);
  });

  test("stop is bounded: a hung send is aborted and the row is retried later", async () => {
    const store = await newStore();
    await registerWithMail(store, "hung@example.org");
    const transport = new ScriptedTransport(
      (_mail, signal) =>
        new Promise<void>((_resolve, reject) => {
          signal.addEventListener("abort", () => reject(Object.assign(new Error("aborted"), { code: "EABORT" })));
        }),
    );
    const mailer = sender(store, transport, { stopGraceMs: 100 });
    mailer.start();
    await waitFor("the send to start", () => transport.calls.length === 1);
    const started = performance.now();
    await mailer.stop();
    expect(performance.now() - started).toBeLessThan(1_000);
    const [row] = rows(store);
    expect(row.sent_at).toBeNull();
    expect(row.leased_until).toBeNull();
    expect(row.last_error).toContain("EABORT");
    expect(await store.claimDueMail(row.next_attempt_at, 1, 1_000)).toMatchObject([{ id: row.id }]);
  });

  test("a send that never finishes is aborted after the send timeout", async () => {
    const store = await newStore();
    await registerWithMail(store, "slowpoke@example.org");
    const transport = new ScriptedTransport(
      (_mail, signal) => new Promise<void>((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
    );
    const mailer = sender(store, transport, { sendTimeoutMs: 50 });
    mailer.start();
    await waitFor("the timeout", () => rows(store)[0].last_error !== null);
    await mailer.stop();
    expect(rows(store)[0].last_error).toContain("send timed out");
  });

  test("stop before start, and start twice, are harmless", async () => {
    const store = await newStore();
    const transport = new ScriptedTransport();
    const mailer = sender(store, transport);
    await mailer.stop();
    mailer.start();
    mailer.start();
    await mailer.stop();
    await mailer.stop();
    expect(mailer.isRunning).toBe(false);
  });
});
