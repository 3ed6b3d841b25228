// The welcome-mail sender as `cairn serve` runs it (only with EMAIL_ENABLED=1).
import type { Config } from "../config.ts";
import type { Store } from "../store/types.ts";
import { MailSender, type MailLog } from "./sender.ts";
import { smtpTransport } from "./smtp.ts";

export { MailSender } from "./sender.ts";

export function createMailer(deps: { config: Config; store: Store; log: MailLog }): MailSender {
  const { config, store, log } = deps;
  // loadConfig refuses EMAIL_ENABLED=1 without these; this guards other callers.
  if (!config.smtpUrl || !config.emailFrom) throw new Error("the mail sender needs SMTP_URL and EMAIL_FROM");
  return new MailSender({
    store,
    log,
    transport: smtpTransport(config.smtpUrl),
    from: config.emailFrom,
    site: { publicBaseUrl: config.publicBaseUrl },
    retry: { baseMs: config.emailRetryBaseMs, maxMs: config.emailRetryMaxMs },
  });
}
