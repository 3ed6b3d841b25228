// Credentials refused at the door (docs/design.md, "Secrets"). The rules are
// secretlint's recommended preset (@secretlint/secretlint-rule-preset-recommend,
// MIT, pinned: docs/dependencies.md), driven directly, plus the kinds it does
// not cover (a `cairn_` key, JWTs, a private key block cut short, other URL
// schemes with a password, a password in a URL's query, ADO-style connection
// strings, Google API keys, Azure storage keys, Stripe webhook secrets, GitLab
// runner and deploy tokens, Bitbucket app passwords, Discord webhooks and bot
// tokens, Telegram bot tokens), written after gitleaks' rules (MIT) where it
// has one, each rule naming it. Nothing here keeps,
// logs or returns the matched text: only the kind of credential.
import { rules as presetRules } from "@secretlint/secretlint-rule-preset-recommend";
import { KEY_MARKER, KEY_RANDOM_MIN } from "./keys.ts";

/** A rule of ours: a pattern, the credential kind it finds, and an optional check of the match. */
interface OwnRule {
  kind: string;
  pattern: RegExp;
  /** False when the match is no credential after all (a placeholder, a documented example). */
  real?: (match: RegExpExecArray) => boolean;
  /**
   * False when the text cannot hold a match (it lacks a literal every match
   * contains): the pattern is not run. Two patterns were most of the scan's
   * time on a ~2 KB note (docs/benchmarks.md, "The secret scan's own rules").
   */
  may?: (text: string) => boolean;
}

/**
 * Passwords and tokens that are placeholders, not secrets: words people put
 * in documentation and questions ("user:password@host", "<token>", "${PASS}").
 */
const PLACEHOLDER_WORDS = new Set([
  "pass", "passwd", "password", "pwd", "secret", "changeme", "changeit", "example", "test", "testing", "dummy",
  "foo", "bar", "baz", "qux", "user", "username", "admin", "root", "guest", "demo", "sample", "token", "mypassword",
  "yourpassword", "p4ssw0rd", "letmein", "1234", "12345", "123456", "abc123", "xyz", "none", "null", "empty",
]);
const PLACEHOLDER_SHAPE = /^(?:\*+|x+|\.+|-+|<[^>]*>|\[[^\]]*\]|\{\{?[^}]*\}\}?|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[a-z]|%\([a-z_]+\)s|:[a-z_]+)$/i;

export function isPlaceholderSecret(value: string): boolean {
  const lower = value.toLowerCase();
  return PLACEHOLDER_WORDS.has(lower) || PLACEHOLDER_SHAPE.test(value) || /^(?:your|my)[-_]?/.test(lower) || /(.)\1{5,}/.test(value);
}

/**
 * Documented example credentials and the marks of made-up ones: a match
 * holding one of these is no leak. AWS's pair is also known to secretlint;
 * the JWT is jwt.io's, the Stripe key Stripe's documentation's, the Azure
 * key the storage emulator's.
 */
const DOCUMENTED_EXAMPLES = [
  "AKIAIOSFODNN7EXAMPLE",
  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
  "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
  // The Azure Storage emulator's (Azurite's) account key, the same in every installation.
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
];
const MADE_UP = /example|not[-_]?a[-_]?real|dummy|placeholder|fake|x{8,}|\*{4,}|0{12,}|<[^>]+>/i;

/** `scheme://user:password@`: the password of a URL the preset found (its own check lets "user:pass" through). */
const URL_PASSWORD = /:\/\/[^:@\/\s]*:([^@\/\s]*)@/;

function madeUp(text: string): boolean {
  if (MADE_UP.test(text) || DOCUMENTED_EXAMPLES.some((example) => text.includes(example))) return true;
  const password = URL_PASSWORD.exec(text)?.[1];
  return password !== undefined && !realPassword(password);
}

/** A password that is no placeholder, as written or URL-decoded. */
function realPassword(value: string): boolean {
  return !isPlaceholderSecret(value) && !isPlaceholderSecret(decodeURIComponentSafe(value));
}

const URL_WITH_PASSWORD =
  /\b(redis|rediss|amqps?|mssql|sqlserver|mariadb|clickhouse|couchdbs?|smtps?|ldaps?|sftp|ssh|mqtts?|nats|neo4j(?:\+s)?|cassandra|elasticsearch|oracle|db2|snowflake|rabbitmq|memcached):\/\/([^:@\/\s'"]{0,100}):([^@\/\s'"]{3,200})@[^\s\/'"]{1,255}/gi;

/** What every ADO-style match holds (its `Password=` or `Pwd=` key, any case). */
const PASSWORD_KEY = /pwd|password/i;

/** A token that opens with a fixed prefix: its pattern runs only on text holding one of the prefixes. */
const prefixed = (kind: string, prefixes: string[], pattern: RegExp): OwnRule => ({
  kind,
  pattern,
  may: (text) => prefixes.some((prefix) => text.includes(prefix)),
});

const OWN_RULES: OwnRule[] = [
  // A Cairn API key (src/core/keys.ts): the marker and 40 or more base62 characters, as keys.ts accepts them,
  // wherever it stands (also glued to a word before it or after it).
  prefixed("cairn_api_key", [KEY_MARKER], new RegExp(`${KEY_MARKER}[0-9A-Za-z]{${KEY_RANDOM_MIN}}`, "g")),
  // gitleaks "jwt": a header and payload of base64url JSON ("eyJ" is `{"`) and a signature.
  prefixed("jwt", ["eyJ"], /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{15,}\.eyJ[A-Za-z0-9_-]{15,}\.[A-Za-z0-9_-]{20,}/g),
  // A private key block, also when cut short (secretlint's rule wants the whole block): the header and a line of key material.
  prefixed(
    "private_key",
    ["-----BEGIN"],
    /-----BEGIN[ A-Z0-9]{0,20}PRIVATE KEY(?: BLOCK)?-----[ \t]*\\?r?\\?n?\r?\n?(?:[A-Za-z0-9-]+: [^\n]*\r?\n)*(?:\r?\n)?[ \t]*[A-Za-z0-9+\/=]{40,}/g,
  ),
  // A URL of the schemes secretlint does not look at, holding a password (the user name may be empty: `redis://:pw@host`).
  { kind: "connection_string_password", pattern: URL_WITH_PASSWORD, real: (m) => realPassword(m[3]), may: (text) => text.includes("://") },
  // The database URLs secretlint does look at, but only with a user name: with none (`postgres://:pw@host`, libpq
  // and the drivers take it), the password alone.
  {
    kind: "connection_string_password",
    pattern: /\b(?:postgres(?:ql)?|mysql|mongodb(?:\+srv)?):\/\/:([^@\/\s'"]{3,200})@[^\s\/'"]{1,255}/gi,
    real: (m) => realPassword(m[1]),
    may: (text) => text.includes("://:"),
  },
  // A connection URL (JDBC's `jdbc:postgresql://`, libpq's `postgres://`, any scheme but a web page's) with the
  // password in its query: `?user=app&password=…`, `;password=…` (gitleaks has no rule of its own for it). Web
  // addresses are left out: a form's fields in a logged request (webmasters note 20282, a spam bot's login in an
  // Apache log) are no connection string.
  {
    kind: "connection_string_password",
    pattern: /\b(?!https?:)[a-z][a-z0-9+.:-]{1,30}:\/\/[^\s'"<>]{1,300}?[?;&](?:password|passwd|pwd)=([^&;#\s'"<>]{3,200})/gi,
    real: (m) => realPassword(m[1]),
    may: (text) => text.includes("://") && PASSWORD_KEY.test(text),
  },
  // ADO.NET / ODBC style: a server and a password in one `key=value;` string.
  {
    kind: "connection_string_password",
    pattern: /\b(?:Server|Data Source|Host|Address|Addr)\s*=[^;\n]{1,200};(?:[^;\n]{0,200};){0,8}?\s*(?:Password|Pwd)\s*=\s*([^;'"\n]{4,200})/gi,
    real: (m) => !isPlaceholderSecret(m[1].trim()),
    may: (text) => PASSWORD_KEY.test(text),
  },
  // gitleaks "gcp-api-key".
  prefixed("gcp_api_key", ["AIza"], /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g),
  // An Azure storage account key: `AccountKey=` (its connection string's key) and 86 base64 characters and `==`
  // (a 64-byte key). gitleaks has no rule for it; the format is Azure's connection string's.
  prefixed("azure_storage_key", ["AccountKey"], /AccountKey\s*=\s*[A-Za-z0-9+\/]{86}==/g),
  // Stripe's webhook signing secret, `whsec_` and 32 or more base62 (gitleaks' "stripe-access-token" covers only
  // the sk_/rk_ keys the preset finds).
  prefixed("stripe_webhook_secret", ["whsec_"], /whsec_[A-Za-z0-9]{32}/g),
  // gitleaks "gitlab-runner-authentication-token" (also its routable form, `glrt-t1_…`) and "gitlab-deploy-token";
  // the preset knows only personal access tokens (`glpat-`).
  prefixed("gitlab_runner_token", ["glrt-"], /glrt-[0-9A-Za-z_-]{20}/g),
  prefixed("gitlab_deploy_token", ["gldt-"], /gldt-[0-9A-Za-z_-]{20}/g),
  // A Bitbucket app password: `ATBB` and 32 base62. gitleaks' "bitbucket-client-*" rules want the word "bitbucket"
  // near a bare string; this prefix is the app password's own.
  prefixed("bitbucket_app_password", ["ATBB"], /(?<![A-Za-z0-9])ATBB[A-Za-z0-9]{32}(?![A-Za-z0-9])/g),
  // A Discord webhook URL: the webhook's id (a snowflake) and its 68-character token. gitleaks' "discord-*" rules
  // want the word "discord" near a bare value; the URL names it itself.
  prefixed("discord_webhook", ["/api/webhooks/"], /https?:\/\/(?:(?:ptb|canary)\.)?discord(?:app)?\.com\/api\/webhooks\/[0-9]{17,20}\/[A-Za-z0-9_-]{60,68}/g),
  // gitleaks "telegram-bot-api-token": the bot's id, `:A` and 34 base64url characters; without gitleaks' need for
  // "telegr" nearby (a token in an `api.telegram.org/bot…` URL or a bare .env value has none), the id may not be
  // glued to a word but that URL's `bot` (an XSD type `clm12345:AgencyIdentificationCodeContentType` is gitleaks'
  // own false positive).
  prefixed("telegram_bot_token", [":A"], /(?:(?<=bot)|(?<![A-Za-z0-9_-]))[0-9]{5,16}:A[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-])/g),
  // A Discord bot token, the shape gitleaks' "discord-*" rules find only beside the word "discord": the bot's id in
  // base64 (24-26 characters; a snowflake's digits make it open with MT, Mj, Mz, ND, NT, Nj, Nz, OD or OT), a
  // timestamp of 6 and an HMAC of 27 or 38 base64url characters. No literal marks it (but the dots, in nearly every
  // text): it runs on every text, ~0.5 µs a webmasters note, the pattern opening with a boundary and two letters.
  {
    kind: "discord_bot_token",
    pattern: /\b(?:M[Tjz]|N[DTjz]|O[DT])[A-Za-z0-9_-]{22,24}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-])/g,
  },
];

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * secretlint's message ids, as the `kind` a caller sees (snake_case);
 * ids already in UPPER_SNAKE case are lower-cased.
 */
const KIND_OF_MESSAGE: Record<string, string | null> = {
  AWSAccessKeyID: "aws_access_key_id",
  AWSSecretAccessKey: "aws_secret_access_key",
  // An account number names an account; it opens nothing.
  AWSAccountID: null,
  BasicAuth: "url_password",
  PrivateKey: "private_key",
  PrivateKeyJSON: "gcp_service_account_key",
  PrivateKeyP12: "gcp_service_account_key",
  PackageJSON_xOauthToken: "github_token",
  Npmrc_authToken: "npm_token",
  NPM_ACCESS_TOKEN: "npm_token",
  IncomingWebhook: "slack_webhook",
  MongoDBConnection: "mongodb_connection_string",
  MySQLConnection: "mysql_connection_string",
  PostgreSQLConnection: "postgresql_connection_string",
  OPENAI_TOKEN: "openai_api_key",
  OPS_TOKEN: "onepassword_service_account_token",
  SHOPIFY_KEY: "shopify_token",
  SENDGRID_KEY: "sendgrid_api_key",
};

const kindOfMessage = (id: string): string | null =>
  id in KIND_OF_MESSAGE ? KIND_OF_MESSAGE[id] : id.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();

/** Options per secretlint rule: the AWS rule also looks for access key ids (off by default there). */
const RULE_OPTIONS: Record<string, Record<string, unknown>> = {
  "@secretlint/secretlint-rule-aws": { enableIDScanRule: true },
};
/** secretlint-disable comments are for repositories; a note cannot switch the scan off. */
const SKIPPED_RULES = new Set(["@secretlint/secretlint-rule-filter-comments"]);

/**
 * Preset rules run only on text holding one of their triggers: literals that
 * every match of the rule's patterns contains (case as in the pattern; a
 * pattern blind to case gets a trigger without letters), so skipping the rule
 * otherwise gives the same answers. Most of these patterns open with a
 * look-behind or an optional group that the regex engine tries at every
 * position of the text: the rules cost ~1-5 µs each on a ~2 KB note even
 * when nothing matches (docs/benchmarks.md, "The secret scan's own rules" and
 * "Writes of ~2 KB notes, sixth round"). Read from the pinned preset's
 * patterns; test/unit/secrets.test.ts checks they are still its patterns.
 * - aws: access key ids open with one of nine prefixes; the secret key's
 *   pattern holds SECRET, secret or Secret. Its third pattern (account ids)
 *   has no trigger here: its finding is no credential (KIND_OF_MESSAGE maps
 *   it to null), so running it or not never changes the answer.
 * - basicauth, database-connection-string: every match holds "://".
 * - slack: its tokens open with xox or xapp-; its webhook (blind to case)
 *   holds "://".
 * - npm: on a note (its file path is /note.txt) only its npm_ token pattern
 *   runs; privatekey: its block's header; the other rules: the prefix their
 *   one pattern (grafana: two) opens with.
 */
export const RULE_TRIGGERS: Record<string, string[]> = {
  "@secretlint/secretlint-rule-sendgrid": ["SG."],
  "@secretlint/secretlint-rule-notion": ["ntn_"],
  "@secretlint/secretlint-rule-aws": ["A3T", "AKIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "ASIA", "ecret", "ECRET"],
  "@secretlint/secretlint-rule-basicauth": ["://"],
  "@secretlint/secretlint-rule-database-connection-string": ["://"],
  "@secretlint/secretlint-rule-github": ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
  "@secretlint/secretlint-rule-slack": ["xox", "xapp-", "://"],
  "@secretlint/secretlint-rule-hashicorp-vault": ["hvs.", "hvb.", "hvr."],
  "@secretlint/secretlint-rule-npm": ["npm_"],
  "@secretlint/secretlint-rule-privatekey": ["-----BEGIN"],
  "@secretlint/secretlint-rule-openai": ["T3BlbkFJ"],
  "@secretlint/secretlint-rule-anthropic": ["sk-ant-api0"],
  "@secretlint/secretlint-rule-groq": ["gsk_"],
  "@secretlint/secretlint-rule-huggingface": ["hf_"],
  "@secretlint/secretlint-rule-linear": ["lin_api_"],
  "@secretlint/secretlint-rule-shopify": ["shppa_", "shpca_", "shpat_", "shpss_"],
  "@secretlint/secretlint-rule-stripe": ["k_live_", "k_test_"],
  "@secretlint/secretlint-rule-1password": ["ops_"],
  "@secretlint/secretlint-rule-vercel": ["vcp_", "vci_", "vca_", "vcr_", "vck_"],
  "@secretlint/secretlint-rule-databricks": ["dapi"],
  "@secretlint/secretlint-rule-docker": ["dckr_pat_"],
  "@secretlint/secretlint-rule-figma": ["figd_"],
  "@secretlint/secretlint-rule-cloudflare": ["cfk_", "cfut_", "cfat_"],
  "@secretlint/secretlint-rule-tailscale": ["tskey-"],
  "@secretlint/secretlint-rule-gitlab": ["glpat-"],
  "@secretlint/secretlint-rule-grafana": ["glc_", "glsa_"],
};

interface PresetRule {
  meta: { id: string };
  create(context: unknown, options: unknown): { file?: (source: unknown) => void };
}

interface Finding {
  messageId: string;
  range: [number, number];
}

/**
 * Finds credentials in text. One instance per service: the preset's rules are
 * set up once, each reporting into this instance; `find` is synchronous.
 */
export class SecretScanner {
  private found: Finding[] = [];
  /**
   * Each preset rule with its triggers (null: it always runs), those holding
   * an underscore apart: most do, and prose seldom holds one, so a text
   * without "_" is searched for none of them (one search instead of ~30).
   */
  private readonly files: { triggers: { plain: string[]; underscored: string[] } | null; file: (source: unknown) => void }[] = [];

  /** `triggers: false`: every preset rule runs on every text (to check that the triggers change no answer). */
  constructor(options: { triggers?: boolean } = {}) {
    const triggered = options.triggers ?? true;
    for (const rule of presetRules as unknown as PresetRule[]) {
      if (SKIPPED_RULES.has(rule.meta.id)) continue;
      const context = {
        // The translated message would hold the secret: only the message id is kept.
        createTranslator: () => (messageId: string) => ({ messageId }),
        report: (report: { message: { messageId: string }; range: [number, number] }) =>
          this.found.push({ messageId: report.message.messageId, range: report.range }),
        ignore: () => {},
      };
      const handlers = rule.create(context, RULE_OPTIONS[rule.meta.id] ?? {});
      const triggers = (triggered && RULE_TRIGGERS[rule.meta.id]) || null;
      if (!handlers.file) continue;
      this.files.push({
        triggers: triggers && { plain: triggers.filter((t) => !t.includes("_")), underscored: triggers.filter((t) => t.includes("_")) },
        file: handlers.file,
      });
    }
  }

  /** The kind of the first credential found in `text` (e.g. "github_token"), or null. */
  find(text: string): string | null {
    for (const rule of OWN_RULES) {
      if (rule.may && !rule.may(text)) continue;
      rule.pattern.lastIndex = 0;
      for (let match = rule.pattern.exec(text); match !== null; match = rule.pattern.exec(text)) {
        if (!madeUp(match[0]) && (rule.real?.(match) ?? true)) return rule.kind;
      }
    }
    this.found = [];
    const source = { content: text, filePath: "/note.txt", ext: ".txt", contentType: "text" };
    const underscore = text.includes("_");
    const holds = (trigger: string) => text.includes(trigger);
    for (const { triggers, file } of this.files) {
      if (triggers && !triggers.plain.some(holds) && !(underscore && triggers.underscored.some(holds))) continue;
      try {
        file(source);
      } catch {
        // A rule that fails on odd input finds nothing; the other rules still look.
      }
    }
    const findings = this.found.sort((a, b) => a.range[0] - b.range[0]);
    this.found = [];
    for (const finding of findings) {
      const kind = kindOfMessage(finding.messageId);
      if (kind !== null && !madeUp(text.slice(finding.range[0], finding.range[1]))) return kind;
    }
    return null;
  }
}
