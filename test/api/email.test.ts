// Welcome e-mail, end to end: a real SMTP server (smtp-server) runs in this
// test process and a real Cairn server sends to it over TCP.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { call, register, unique } from "../helpers/api.ts";
import { MailSink } from "../helpers/mail-sink.ts";
import { command, startServer, tempDir, type RunningServer } from "../helpers/server.ts";
import { freePort } from "../helpers/ports.ts";

async function waitFor(what: string, condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

function emailEnv(sink: MailSink, extra: Record<string, string> = {}): Record<string, string> {
  return {
    EMAIL_ENABLED: "1",
    SMTP_URL: sink.url,
    EMAIL_FROM: "cairn@example.org",
    // Short retries so a test sees several attempts in a second or two.
    EMAIL_RETRY_BASE_MS: "100",
    EMAIL_RETRY_MAX_MS: "400",
    REGISTRATIONS_PER_HOUR: "0",
    ...extra,
  };
}

function outboxRows(dataDir: string): { recipient: string; attempts: number; sent_at: number | null; last_error: string | null }[] {
  const db = new Database(join(dataDir, "cairn.db"), { readonly: true });
  try {
    return db.query("SELECT recipient, attempts, sent_at, last_error FROM email_outbox ORDER BY id").all() as any;
  } finally {
    db.close();
  }
}

function expectNoAddressIn(logs: string, addresses: string[]) {
  for (const address of addresses) expect(logs).not.toContain(address);
  expect(logs).not.toMatch(/[A-Za-z0-9._%+-]+@example\.(org|net)/);
}

// Each test waits on real timers (retries, "no duplicate shows up" windows).
const SLOW = 60_000;

const cleanups: (() => Promise<unknown> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe("welcome e-mail", () => {
  test("EMAIL_ENABLED=1: one welcome mail per registration, to the right address, without the key", async () => {
    const sink = new MailSink(await freePort());
    await sink.up();
    cleanups.push(() => sink.down());
    const server = await startServer({ env: emailEnv(sink, { PUBLIC_BASE_URL: "https://notes.example.net/" }) });
    cleanups.push(() => server.stop());

    const people = [];
    for (let i = 0; i < 3; i++) people.push(await register(server.url, { email: `${unique("welcome")}@example.org` }));
    await waitFor("three welcome mails", () => sink.received.length >= 3);
    await Bun.sleep(1_500); // room for a duplicate to show up
    expect(sink.received.length).toBe(3);

    for (const person of people) {
      const mails = sink.to(person.email);
      expect(mails.length).toBe(1);
      const [mail] = mails;
      expect(mail.to).toEqual([person.email]);
      expect(mail.from).toBe("cairn@example.org");
      expect(mail.raw).toContain(`Subject: Welcome to Cairn, contributor #${person.no}`);
      expect(mail.raw).toContain(`you registered as contributor #${person.no} on the Cairn instance at`);
      expect(mail.raw).toContain("https://notes.example.net/docs");
      expect(mail.raw).toContain("cairn me");
      expect(mail.raw).toContain("Auto-Submitted: auto-generated");
      // Never the key, nor anything shaped like one.
      expect(mail.raw).not.toContain(person.key);
      expect(mail.raw).not.toContain(person.key.slice(0, 12));
      expect(mail.raw).not.toMatch(/cairn_[0-9A-Za-z]{6,}/);
    }
    const logs = server.logs();
    expect(logs).toContain('"msg":"mail sent"');
    expect(logs).toContain('"outboxId":');
    expectNoAddressIn(logs, people.map((p) => p.email));
  }, SLOW);

  test("logger or debug in SMTP_URL's query does not turn nodemailer's log on: no address in the server's output", async () => {
    // nodemailer reads options from the URL's query and lets them win over
    // the ones Cairn passes: ?logger=true&debug=true printed every RCPT TO and
    // the whole message to stdout.
    const sink = new MailSink(await freePort());
    await sink.up();
    cleanups.push(() => sink.down());
    const server = await startServer({ env: emailEnv(sink, { SMTP_URL: `${sink.url}&logger=true&debug=true` }) });
    cleanups.push(() => server.stop());
    const email = `${unique("debug")}@example.org`;
    await register(server.url, { email });
    await waitFor("the welcome mail", () => sink.to(email).length === 1);
    await waitFor("the mail recorded as sent", () => server.logs().includes('"msg":"mail sent"'));
    const logs = server.logs();
    expectNoAddressIn(logs, [email]);
    expect(logs).not.toContain("RCPT TO");
    expect(logs).not.toContain("Welcome to Cairn");
    expect(await server.stop()).toBe(0);
  }, SLOW);

  test("EMAIL_ENABLED=0 (the default): no mail, no outbox row, no SMTP connection", async () => {
    const sink = new MailSink(await freePort());
    await sink.up();
    cleanups.push(() => sink.down());
    const dataDir = tempDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    // SMTP settings present but the switch off: they must not be used.
    const env = { ...emailEnv(sink), EMAIL_ENABLED: "0" };
    const server = await startServer({ env, dataDir });
    for (let i = 0; i < 3; i++) await register(server.url);
    await Bun.sleep(1_500);
    expect(await server.stop()).toBe(0);
    expect(sink.connections).toBe(0);
    expect(sink.received.length).toBe(0);
    expect(outboxRows(dataDir)).toEqual([]);
    expect(server.logs()).not.toContain("mail");
  }, SLOW);

  test("EMAIL_ENABLED=1 without SMTP_URL or EMAIL_FROM refuses to start, saying which", async () => {
    const dataDir = tempDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const run = async (env: Record<string, string>) => {
      const proc = Bun.spawn([...command(false), "serve"], {
        env: { ...process.env, PORT: "0", DATA_DIR: dataDir, ...env },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
      return { code, stderr };
    };
    const noUrl = await run({ EMAIL_ENABLED: "1", EMAIL_FROM: "cairn@example.org" });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain("EMAIL_ENABLED=1 needs SMTP_URL");
    const noFrom = await run({ EMAIL_ENABLED: "1", SMTP_URL: "smtp://127.0.0.1:2525" });
    expect(noFrom.code).toBe(2);
    expect(noFrom.stderr).toContain("EMAIL_ENABLED=1 needs EMAIL_FROM");
    const badUrl = await run({ EMAIL_ENABLED: "1", SMTP_URL: "http://user:secret@mail", EMAIL_FROM: "cairn@example.org" });
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain("SMTP_URL must be an smtp:// or smtps:// URL");
    expect(badUrl.stderr).not.toContain("secret");
  }, SLOW);

  test("SMTP down: registration still answers 201 at full speed; the mail arrives once it is back", async () => {
    const sink = new MailSink(await freePort()); // not listening yet
    cleanups.push(() => sink.down());
    const server = await startServer({ env: emailEnv(sink) });
    cleanups.push(() => server.stop());

    const people = [];
    const timings: number[] = [];
    for (let i = 0; i < 20; i++) {
      const email = `${unique("down")}@example.org`;
      const started = performance.now();
      const res = await call(server.url, "POST", "/v1/register", { json: { email } });
      timings.push(performance.now() - started);
      expect(res.status).toBe(201);
      people.push({ email, no: res.data.contributor_no as number, key: res.data.api_key as string });
    }
    for (const ms of timings) expect(ms).toBeLessThan(200);

    // Down for a while: the sender fails and backs off, and sends nothing.
    await waitFor("a failed attempt", () => server.logs().includes("mail not sent; will retry"));
    await Bun.sleep(1_000);
    expect(sink.received.length).toBe(0);

    await sink.up();
    await waitFor("twenty welcome mails", () => sink.received.length >= 20);
    await Bun.sleep(1_500);
    expect(sink.received.length).toBe(20);
    for (const person of people) {
      const mails = sink.to(person.email);
      expect(mails.length).toBe(1);
      expect(mails[0].raw).toContain(`contributor #${person.no}`);
      expect(mails[0].raw).not.toContain(person.key);
    }
    const logs = server.logs();
    expect(logs).toMatch(/"msg":"mail not sent; will retry".*"error":"ESOCKET/);
    expectNoAddressIn(logs, people.map((p) => p.email));
  }, SLOW);

  test("a restart while mails are queued and SMTP is down loses none and sends none twice", async () => {
    const sink = new MailSink(await freePort()); // down
    cleanups.push(() => sink.down());
    const dataDir = tempDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env = emailEnv(sink);

    const first = await startServer({ env, dataDir });
    const people = [];
    for (let i = 0; i < 5; i++) people.push(await register(first.url, { email: `${unique("restart")}@example.org` }));
    await waitFor("a failed attempt", () => first.logs().includes("mail not sent; will retry"));
    expect(await first.stop("SIGTERM")).toBe(0);
    expect(first.logs()).toContain('"msg":"stopped"');
    const queued = outboxRows(dataDir);
    expect(queued.length).toBe(5);
    expect(queued.every((row) => row.sent_at === null)).toBe(true);
    expect(queued.some((row) => row.attempts > 0 && row.last_error !== null)).toBe(true);
    for (const row of queued) if (row.last_error) expect(row.last_error).not.toContain("@");

    // A new server on the same data directory, then SMTP comes back.
    const second: RunningServer = await startServer({ env, dataDir });
    await sink.up();
    await waitFor("five welcome mails", () => sink.received.length >= 5);
    await Bun.sleep(1_500);
    expect(await second.stop("SIGTERM")).toBe(0);

    // And once more: mails already sent are not sent again by a third server.
    const third = await startServer({ env, dataDir });
    await Bun.sleep(1_500);
    expect(await third.stop("SIGTERM")).toBe(0);

    expect(sink.received.length).toBe(5);
    for (const person of people) expect(sink.to(person.email).length).toBe(1);
    const rows = outboxRows(dataDir);
    expect(rows.length).toBe(5);
    expect(rows.every((row) => row.sent_at !== null)).toBe(true);
    for (const server of [first, second, third]) expectNoAddressIn(server.logs(), people.map((p) => p.email));
  }, SLOW);

  test("a relay that refuses to relay for Cairn (5xx to RCPT TO) keeps the mail queued; it goes out once the relay is fixed", async () => {
    // Postfix answers "554 5.7.1 <rcpt>: Relay access denied" at RCPT TO when
    // the client is not allowed to relay (no or wrong credentials, not in
    // mynetworks). That is the operator's setting, the same for every mail:
    // it must not give up every welcome mail of the meantime for good.
    const sink = new MailSink(await freePort());
    await sink.up();
    cleanups.push(() => sink.down());
    sink.refuseRecipients = { code: 554, text: "5.7.1 Relay access denied" };
    const dataDir = tempDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const server = await startServer({ env: emailEnv(sink), dataDir });
    cleanups.push(() => server.stop());
    const email = `${unique("relay")}@example.org`;
    await register(server.url, { email });
    await waitFor("a refused attempt", () => /"msg":"mail not sent; will retry".*Relay access denied/.test(server.logs()));
    expect(server.logs()).not.toContain('"msg":"mail given up"');
    expect(outboxRows(dataDir)[0].recipient).toBe(email);

    sink.refuseRecipients = null; // the operator fixed the relay
    await waitFor("the welcome mail", () => sink.to(email).length === 1);
    expect(await server.stop()).toBe(0);
    expectNoAddressIn(server.logs(), [email]);
  }, SLOW);
});

describe("personal data and third parties (issue 12)", () => {
  test("a sent or given-up mail keeps no address; the counts stay", async () => {
    const sink = new MailSink(await freePort());
    await sink.up();
    cleanups.push(() => sink.down());
    const dataDir = tempDir();
    const server = await startServer({ env: emailEnv(sink), dataDir });
    cleanups.push(() => server.stop());
    const sent = `${unique("kept")}@example.org`;
    await register(server.url, { email: sent });
    // Not one plain address: the sender gives it up without a try.
    await register(server.url, { email: `${unique("a")}@example.org,${unique("b")}@example.org` });
    await waitFor("one sent, one given up", () => {
      const rows = outboxRows(dataDir);
      return rows.length === 2 && rows.every((row) => row.sent_at !== null || row.last_error !== null);
    });
    await Bun.sleep(300);
    expect(sink.to(sent).length).toBe(1);
    expect(outboxRows(dataDir).map((row) => row.recipient)).toEqual(["", ""]);
    const stats = JSON.parse((await server.admin("stats")).stdout);
    expect(stats.email_outbox).toEqual({ pending: 0, sent: 1, gave_up: 1 });
  }, SLOW);

  test("at most one welcome mail per address a day, whatever the IP or letter case", async () => {
    const sink = new MailSink(await freePort());
    await sink.up();
    cleanups.push(() => sink.down());
    const server = await startServer({ env: emailEnv(sink, { TRUST_PROXY: "1" }) });
    cleanups.push(() => server.stop());
    const victim = `${unique("victim")}@example.org`;
    await register(server.url, { email: victim, headers: { "x-forwarded-for": "2001:db8:1::1" } });
    for (const [i, email] of [victim, victim.toUpperCase(), ` ${victim} `].entries()) {
      const again = await call(server.url, "POST", "/v1/register", { json: { email }, headers: { "x-forwarded-for": `198.51.100.${i + 1}` } });
      expect(again.status).toBe(429);
      expect(again.data.error.code).toBe("rate_limited");
      expect(Number(again.headers.get("retry-after"))).toBeGreaterThan(86_000);
    }
    await waitFor("the one welcome mail", () => sink.received.length >= 1);
    await Bun.sleep(500);
    expect(sink.received.length).toBe(1);
    // Another address is not affected.
    await register(server.url, { email: `${unique("other")}@example.org` });
  }, SLOW);
});
