// The welcome-mail rules: backoff, failure classes, address hygiene, the text,
// and the e-mail settings.
import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import {
  classifyFailure,
  describeFailure,
  GIVE_UP_AFTER_MS,
  isSingleAddress,
  LEASE_MS,
  retryDelay,
  scrubAddresses,
  SEND_TIMEOUT_MS,
  tooOld,
} from "../../src/mail/policy.ts";
import { withoutLockedOptions } from "../../src/mail/smtp.ts";
import { renderMail } from "../../src/mail/welcome.ts";

const policy = { baseMs: 5_000, maxMs: 600_000 };
const noJitter = () => 0;
const fullJitter = () => 0.999999;

describe("retryDelay", () => {
  test("doubles from the base per failed attempt", () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelay(n, policy, noJitter))).toEqual([
      5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000,
    ]);
  });

  test("is capped at the maximum however many attempts failed", () => {
    expect(retryDelay(8, policy, noJitter)).toBe(600_000);
    expect(retryDelay(50, policy, noJitter)).toBe(600_000);
    expect(retryDelay(1_000_000, policy, noJitter)).toBe(600_000);
    expect(retryDelay(Number.MAX_SAFE_INTEGER, policy, noJitter)).toBe(600_000);
  });

  test("jitter only shortens, by at most 20 %, and never passes the cap", () => {
    for (let attempt = 1; attempt <= 30; attempt++) {
      const plain = retryDelay(attempt, policy, noJitter);
      for (const r of [0, 0.25, 0.5, 0.75, fullJitter()]) {
        const delay = retryDelay(attempt, policy, () => r);
        expect(delay).toBeLessThanOrEqual(plain);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(plain * 0.8));
        expect(delay).toBeLessThanOrEqual(policy.maxMs);
      }
    }
    expect(retryDelay(1, policy, () => 0.5)).toBe(4_500);
  });

  test("is never shorter for a later attempt (without jitter)", () => {
    let previous = 0;
    for (let attempt = 1; attempt <= 64; attempt++) {
      const delay = retryDelay(attempt, policy, noJitter);
      expect(delay).toBeGreaterThanOrEqual(previous);
      previous = delay;
    }
  });

  test("odd attempt numbers count as the first attempt; a random() out of range is clamped", () => {
    expect(retryDelay(0, policy, noJitter)).toBe(5_000);
    expect(retryDelay(-3, policy, noJitter)).toBe(5_000);
    expect(retryDelay(Number.NaN, policy, noJitter)).toBe(5_000);
    expect(retryDelay(1, policy, () => 7)).toBe(4_000);
    expect(retryDelay(1, policy, () => -1)).toBe(5_000);
  });

  test("works with the short test settings too", () => {
    const fast = { baseMs: 100, maxMs: 400 };
    expect([1, 2, 3, 4].map((n) => retryDelay(n, fast, noJitter))).toEqual([100, 200, 400, 400]);
  });

  test("a lease outlives the longest send, so a live send is never claimed twice", () => {
    expect(LEASE_MS).toBeGreaterThan(SEND_TIMEOUT_MS);
  });

  test("a mail is given up only after a week", () => {
    expect(tooOld(0, GIVE_UP_AFTER_MS - 1)).toBe(false);
    expect(tooOld(0, GIVE_UP_AFTER_MS)).toBe(true);
  });
});

describe("classifyFailure", () => {
  const err = (fields: Record<string, unknown>) => Object.assign(new Error("x"), fields);

  test("no reply from the server (refused, timed out, DNS, TLS) pauses the sender", () => {
    expect(classifyFailure(err({ code: "ESOCKET", originalCode: "ECONNREFUSED", command: "CONN" }))).toBe("server");
    expect(classifyFailure(err({ code: "ETIMEDOUT" }))).toBe("server");
    expect(classifyFailure(err({ code: "EDNS" }))).toBe("server");
    expect(classifyFailure(err({ code: "ETLS" }))).toBe("server");
    expect(classifyFailure(err({ code: "EABORT" }))).toBe("server");
    expect(classifyFailure(new Error("anything else"))).toBe("server");
    expect(classifyFailure("a string")).toBe("server");
  });

  test("server-wide replies (421, bad credentials, sender refused) pause the sender", () => {
    expect(classifyFailure(err({ code: "EENVELOPE", command: "RCPT TO", responseCode: 421, permanent: false }))).toBe("server");
    expect(classifyFailure(err({ code: "EAUTH", command: "AUTH PLAIN", responseCode: 535, permanent: true }))).toBe("server");
    expect(classifyFailure(err({ code: "EENVELOPE", command: "MAIL FROM", responseCode: 550, permanent: true }))).toBe("server");
  });

  test("a 5xx to RCPT TO that refuses us, not the recipient (relaying denied, client or sender refused, auth required), pauses the sender", () => {
    const rcpt = (responseCode: number, response: string) =>
      err({ code: "EENVELOPE", command: "RCPT TO", responseCode, permanent: responseCode >= 500, response, message: `Can't send mail - all recipients were rejected: ${response}` });
    for (const refusal of [
      rcpt(554, "554 5.7.1 <bob@example.org>: Relay access denied"), // Postfix
      rcpt(550, "550 5.7.1 <bob@example.org>... Relaying denied"), // Sendmail
      rcpt(550, "550 relay not permitted"), // Exim
      rcpt(550, "550 5.7.54 SMTP; Unable to relay recipient in non-accepted domain"), // Exchange
      rcpt(554, "554 5.7.1 <unknown[192.0.2.1]>: Client host rejected: Access denied"),
      rcpt(553, "553 5.7.1 <cairn@example.org>: Sender address rejected: not owned by user x"),
      rcpt(530, "530 5.7.0 Authentication required"),
    ]) {
      expect(classifyFailure(refusal)).toBe("server");
    }
    // The recipient itself refused stays a refusal of this row.
    expect(classifyFailure(rcpt(550, "550 5.1.1 <bob@example.org>: Recipient address rejected: User unknown in local recipient table"))).toBe("refused");
    expect(classifyFailure(rcpt(550, "550 5.7.1 <bob@example.org>: Recipient address rejected: Access denied"))).toBe("refused");
  });

  test("a temporary refusal of this message retries this row only", () => {
    expect(classifyFailure(err({ code: "EENVELOPE", command: "RCPT TO", responseCode: 450, permanent: false }))).toBe("message");
    expect(classifyFailure(err({ code: "EMESSAGE", command: "DATA", responseCode: 451, permanent: false }))).toBe("message");
    expect(classifyFailure(err({ code: "EENVELOPE", command: "RCPT TO", responseCode: 503, permanent: false }))).toBe("message");
  });

  test("a permanent refusal of the recipient or the message gives the row up", () => {
    expect(classifyFailure(err({ code: "EENVELOPE", command: "RCPT TO", responseCode: 550, permanent: true }))).toBe("refused");
    expect(classifyFailure(err({ code: "EMESSAGE", command: "DATA", responseCode: 554, permanent: true }))).toBe("refused");
    // Without nodemailer's `permanent` flag the reply class decides.
    expect(classifyFailure(err({ code: "EENVELOPE", command: "RCPT TO", responseCode: 553 }))).toBe("refused");
    expect(classifyFailure(err({ code: "EENVELOPE", command: "API", message: "Invalid recipient \"x\"" }))).toBe("refused");
    expect(classifyFailure(err({ code: "EENVELOPE", command: "API", message: "Invalid sender \"x\"" }))).toBe("server");
  });
});

describe("addresses stay out of logs and last_error", () => {
  test("scrubAddresses removes every address-shaped token", () => {
    expect(scrubAddresses("550 5.1.1 <bob@example.org>: user unknown")).toBe("550 5.1.1 <<address>>: user unknown");
    expect(scrubAddresses('Invalid recipient "a.b+c@x.example"')).toBe('Invalid recipient "<address>"');
    expect(scrubAddresses("smtp://user:secret@mail.example.org:587")).not.toContain("secret");
  });

  test("describeFailure keeps code, command and reply, drops the server's raw response", () => {
    const error = Object.assign(new Error("Message failed for recipient bob@example.org"), {
      code: "EMESSAGE",
      command: "DATA",
      responseCode: 554,
      response: "554 5.7.1 <bob@example.org> rejected",
      recipient: "bob@example.org",
    });
    const text = describeFailure(error);
    expect(text).toBe("EMESSAGE on DATA reply 554: Message failed for recipient <address>");
    expect(text).not.toContain("@");
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:2525"), { code: "ESOCKET", originalCode: "ECONNREFUSED", command: "CONN" });
    expect(describeFailure(refused)).toBe("ESOCKET (ECONNREFUSED) on CONN: connect ECONNREFUSED 127.0.0.1:2525");
    expect(describeFailure("x@y.z broke")).toBe("<address> broke");
    expect(describeFailure(Object.assign(new Error("y".repeat(1000)), { code: "E" })).length).toBeLessThanOrEqual(300);
  });

  test("isSingleAddress accepts one plain address and nothing that could add recipients or headers", () => {
    for (const ok of ["a@b.org", "first.last+tag@sub.example.co", "x@localhost"]) expect(isSingleAddress(ok)).toBe(true);
    for (const bad of [
      "a@b.org, c@d.org",
      "a@b.org;c@d.org",
      "Bob <bob@example.org>",
      "bob@example.org\r\nBcc: x@y.org",
      "bob @example.org",
      "a@b@c",
      "@b.org",
      "a@",
      '"a b"@c.org',
      `${"a".repeat(250)}@b.org`,
    ]) {
      expect(isSingleAddress(bad)).toBe(false);
    }
  });

  test("SMTP_URL's logger and debug options are dropped; the credentials and other options stay as written", () => {
    expect(withoutLockedOptions("smtp://mail.example.org:25?ignoreTLS=true")).toBe("smtp://mail.example.org:25?ignoreTLS=true");
    const url = new URL(
      withoutLockedOptions("smtp://agent:p%40ss%3Aw%2Frd@mail.example.org:587?logger=true&tls.rejectUnauthorized=false&debug=1&transactionLog=true"),
    );
    expect([...url.searchParams.keys()]).toEqual(["tls.rejectUnauthorized"]);
    expect(url.username).toBe("agent");
    expect(decodeURIComponent(url.password)).toBe("p@ss:w/rd");
    expect(`${url.hostname}:${url.port}`).toBe("mail.example.org:587");
  });
});

describe("the welcome text", () => {
  test("names the contributor number, the instance and its docs, and how to use the client", () => {
    const mail = renderMail("welcome", { contributorNo: 42 }, { publicBaseUrl: "https://notes.example.org" });
    expect(mail.subject).toBe("Welcome to Cairn, contributor #42");
    expect(mail.text).toContain("you registered as contributor #42 on the Cairn instance at\nhttps://notes.example.org/\n");
    expect(mail.text).toContain("https://notes.example.org/docs");
    expect(mail.text).toContain("export CAIRN_URL=https://notes.example.org");
    expect(mail.text).toContain("cairn search");
  });

  test("works without PUBLIC_BASE_URL", () => {
    const mail = renderMail("welcome", { contributorNo: 7 }, { publicBaseUrl: null });
    expect(mail.text).toContain("you registered as contributor #7 on a Cairn instance.");
    expect(mail.text).not.toContain("null");
    expect(mail.text).not.toContain("CAIRN_URL=");
  });

  test("holds no key: the renderer is never given one, and says so", () => {
    // Whatever extra fields a row carries, only the number is read.
    const row = { contributorNo: 3, api_key: "cairn_" + "A".repeat(43) } as { contributorNo: number };
    const mail = renderMail("welcome", row, { publicBaseUrl: null });
    expect(mail.text).not.toMatch(/cairn_[0-9A-Za-z]{6,}/);
    expect(mail.text).toContain("does not contain it");
  });

  test("is plain ASCII with short lines (sent as 7bit, no quoted-printable)", () => {
    const mail = renderMail("welcome", { contributorNo: 123456 }, { publicBaseUrl: "https://a-rather-long-host-name.example.org" });
    expect(/^[\x20-\x7e\n]*$/.test(mail.text)).toBe(true);
    for (const line of mail.text.split("\n")) expect(line.length).toBeLessThanOrEqual(76);
  });
});

describe("e-mail settings", () => {
  const on = { EMAIL_ENABLED: "1", SMTP_URL: "smtp://mail.example.org:587", EMAIL_FROM: "Cairn <cairn@example.org>" };

  test("defaults: off, retries from 5 s up to 10 min", () => {
    const config = loadConfig({});
    expect(config.emailEnabled).toBe(false);
    expect(config.emailRetryBaseMs).toBe(5_000);
    expect(config.emailRetryMaxMs).toBe(600_000);
  });

  test("off needs no SMTP settings; on needs SMTP_URL and EMAIL_FROM", () => {
    expect(() => loadConfig({ EMAIL_ENABLED: "0" })).not.toThrow();
    expect(loadConfig(on).emailEnabled).toBe(true);
    expect(() => loadConfig({ ...on, SMTP_URL: "" })).toThrow("EMAIL_ENABLED=1 needs SMTP_URL");
    expect(() => loadConfig({ ...on, EMAIL_FROM: " " })).toThrow("EMAIL_ENABLED=1 needs EMAIL_FROM");
    expect(() => loadConfig({ ...on, EMAIL_FROM: "cairn" })).toThrow(ConfigError);
    expect(() => loadConfig({ ...on, SMTP_URL: "mail.example.org" })).toThrow("smtp:// or smtps://");
    expect(() => loadConfig({ ...on, SMTP_URL: "https://mail.example.org" })).toThrow("smtp:// or smtps://");
  });

  test("an SMTP_URL error never repeats the URL (it may hold a password)", () => {
    try {
      loadConfig({ ...on, SMTP_URL: "ftp://user:hunter2@mail" });
      throw new Error("should have thrown");
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).not.toContain("hunter2");
    }
  });

  test("retry settings are validated", () => {
    expect(loadConfig({ ...on, EMAIL_RETRY_BASE_MS: "100", EMAIL_RETRY_MAX_MS: "400" }).emailRetryMaxMs).toBe(400);
    expect(() => loadConfig({ EMAIL_RETRY_BASE_MS: "0" })).toThrow(ConfigError);
    expect(() => loadConfig({ EMAIL_RETRY_BASE_MS: "soon" })).toThrow(ConfigError);
    expect(() => loadConfig({ ...on, EMAIL_RETRY_BASE_MS: "1000", EMAIL_RETRY_MAX_MS: "500" })).toThrow("EMAIL_RETRY_MAX_MS");
  });
});
