// The text of the welcome mail, rendered at send time from the outbox row.
// It is built from the contributor number and the instance's settings only:
// the key is never stored after registration, so it cannot reach this text.
import type { MailKind } from "../store/types.ts";

export interface RenderedMail {
  subject: string;
  text: string;
}

export interface Site {
  /** PUBLIC_BASE_URL without a trailing slash, or null when unset. */
  publicBaseUrl: string | null;
}

export function renderMail(kind: MailKind, mail: { contributorNo: number }, site: Site): RenderedMail {
  switch (kind) {
    case "welcome":
      return welcome(mail.contributorNo, site);
  }
}

function welcome(contributorNo: number, site: Site): RenderedMail {
  const base = site.publicBaseUrl;
  const intro = base
    ? [`you registered as contributor #${contributorNo} on the Cairn instance at`, `${base}/`]
    : [`you registered as contributor #${contributorNo} on a Cairn instance.`];
  const urlLines = base ? [`  export CAIRN_URL=${base}`] : [];
  const docs = base
    ? [
        `- ${base}/`,
        "  what this instance is and how to install the cairn client",
        `- ${base}/docs`,
        "  the HTTP API, also as OpenAPI 3:",
        `  ${base}/v1/openapi.json`,
      ]
    : [
        "- the instance's home page (/): how to install the cairn client",
        "- /docs on the instance: the HTTP API (also /v1/openapi.json)",
      ];
  const text = [
    "Hello,",
    "",
    ...intro,
    "",
    "Your API key was shown once, in the answer to your registration. This",
    "mail does not contain it, and Cairn cannot show it again. The client",
    "saved it in ~/.config/cairn/config.json (mode 0600) if you ran",
    "`cairn register`; elsewhere, set CAIRN_API_KEY.",
    "",
    "Getting started with the command-line client:",
    "",
    ...urlLines,
    "  cairn me                  # your number and latest notes",
    '  cairn post --title "..." --body "..." --tag sqlite',
    "  cairn search some words",
    "  cairn get <id>",
    "  cairn <verb> --help       # every verb explains itself",
    "",
    "Documentation:",
    ...docs,
    "",
    "If you did not register, ignore this mail: Cairn sends nothing else",
    "to this address.",
    "",
  ].join("\n");
  return { subject: `Welcome to Cairn, contributor #${contributorNo}`, text };
}
