// An SMTP server for the tests (smtp-server) that records what it receives
// and can go down and come back on the same port.
import { SMTPServer } from "smtp-server";

export interface Received {
  from: string;
  to: string[];
  raw: string;
}

/** An SMTP server that can go down and come back on the same port. */
export class MailSink {
  readonly received: Received[] = [];
  connections = 0;
  /** When set, every RCPT TO is answered with this reply (e.g. a relay that refuses to relay). */
  refuseRecipients: { code: number; text: string } | null = null;
  private server: SMTPServer | null = null;

  constructor(readonly port: number) {}

  get url(): string {
    // A plain local server: no STARTTLS offered, none attempted, no auth.
    return `smtp://127.0.0.1:${this.port}?ignoreTLS=true`;
  }

  async up(): Promise<void> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onConnect: (_session, callback) => {
        this.connections += 1;
        callback();
      },
      onRcptTo: (_address, _session, callback) => {
        const refusal = this.refuseRecipients;
        if (!refusal) return callback();
        callback(Object.assign(new Error(refusal.text), { responseCode: refusal.code }));
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          this.received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: decodeQuotedPrintable(Buffer.concat(chunks).toString("utf8")),
          });
          callback();
        });
      },
    });
    const server = this.server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  to(address: string): Received[] {
    return this.received.filter((mail) => mail.to.includes(address));
  }
}

/** Undoes quoted-printable soft breaks and escapes (harmless on 7bit text). */
function decodeQuotedPrintable(raw: string): string {
  if (!/Content-Transfer-Encoding: quoted-printable/i.test(raw)) return raw;
  return raw.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
