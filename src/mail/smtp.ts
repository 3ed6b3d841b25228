// The SMTP side of the sender, on nodemailer: one connection per message (no
// pool to keep alive between the rare welcome mails), bounded waits, no file
// or URL access, nodemailer's own logging off (it would print addresses).
import { createTransport } from "nodemailer";
import type { MailTransport } from "./sender.ts";

const CONNECTION_TIMEOUT_MS = 10_000;
const GREETING_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;

/**
 * nodemailer reads options from the URL's query and lets them win over the
 * ones passed next to it: `?logger=true` or `?debug=true` would print every
 * recipient and the whole message to stdout. These stay off whatever the URL says.
 */
const LOCKED_OPTIONS = new Set(["logger", "debug", "transactionLog", "disableFileAccess", "disableUrlAccess"]);

/** SMTP_URL without the query options Cairn keeps to itself (unchanged when it has none). */
export function withoutLockedOptions(smtpUrl: string): string {
  let url: URL;
  try {
    url = new URL(smtpUrl);
  } catch {
    return smtpUrl; // loadConfig refuses such a URL; nodemailer reports it otherwise
  }
  const locked = [...url.searchParams.keys()].filter((key) => LOCKED_OPTIONS.has(key));
  if (locked.length === 0) return smtpUrl;
  for (const key of locked) url.searchParams.delete(key);
  return url.toString();
}

/**
 * `smtpUrl` is nodemailer's connection URL: smtp://host:587 (STARTTLS when the
 * server offers it), smtps://user:pass@host:465 (TLS from the start); query
 * options pass through, e.g. `?ignoreTLS=true` for a plain local relay or
 * `?requireTLS=true` to refuse a server without STARTTLS.
 */
export function smtpTransport(smtpUrl: string): MailTransport {
  const transporter = createTransport({
    url: withoutLockedOptions(smtpUrl),
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: GREETING_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    logger: false,
    debug: false,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    async send(mail, signal) {
      await transporter.sendMail({
        from: mail.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        // RFC 3834: no vacation replies or auto-responders back to us.
        headers: { "Auto-Submitted": "auto-generated" },
        maxRecipients: 1,
        signal,
      });
    },
    close() {
      transporter.close();
    },
  };
}
