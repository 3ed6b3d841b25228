// Credentials refused at the door (docs/design.md, "Secrets"). The rules are
// secretlint's recommended preset (@secretlint/secretlint-rule-preset-recommend,
// MIT, pinned: docs/dependencies.md), driven directly, plus the few kinds it
// does not cover (a `cairn_` key, JWTs, a private key block cut short, other
// URL schemes with a password, ADO-style connection strings, Google API keys),
// written after gitleaks' rules of the same names (MIT). Nothing here keeps,
// logs or returns the matched text: only the kind of credential.
import { rules as presetRules } from "@secretlint/secretlint-rule-preset-recommend";
import { KEY_MARKER } from "./keys.ts";

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
 * the JWT is jwt.io's, the Stripe key Stripe's documentation's.
 */
const DOCUMENTED_EXAMPLES = [
  "AKIAIOSFODNN7EXAMPLE",
  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
  "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
];
const MADE_UP = /example|not[-_]?a[-_]?real|dummy|placeholder|fake|x{8,}|\*{4,}|0{12,}|<[^>]+>/i;

/** `scheme://user:password@`: the password of a URL the preset found (its own check lets "user:pass" through). */
const URL_PASSWORD = /:\/\/[^:@\/\s]*:([^@\/\s]*)@/;

function madeUp(text: string): boolean {
  if (MADE_UP.test(text) || DOCUMENTED_EXAMPLES.some((example) => text.includes(example))) return true;
  const password = URL_PASSWORD.exec(text)?.[1];
  return password !== undefined && (isPlaceholderSecret(password) || isPlaceholderSecret(decodeURIComponentSafe(password)));
}

const URL_WITH_PASSWORD =
  /\b(redis|rediss|amqps?|mssql|sqlserver|mariadb|clickhouse|couchdbs?|smtps?|ldaps?|sftp|ssh|mqtts?|nats|neo4j(?:\+s)?|cassandra|elasticsearch|oracle|db2|snowflake|rabbitmq|memcached):\/\/([^:@\/\s'"]{1,100}):([^@\/\s'"]{3,200})@[^\s\/'"]{1,255}/gi;

/** What every ADO-style match holds (its `Password=` or `Pwd=` key, any case). */
const PASSWORD_KEY = /pwd|password/i;

const OWN_RULES: OwnRule[] = [
  // A Cairn API key (src/core/keys.ts): the marker and 43 base62 characters.
  { kind: "cairn_api_key", pattern: new RegExp(`(?<![A-Za-z0-9_])${KEY_MARKER}[0-9A-Za-z]{43}(?![0-9A-Za-z])`, "g"), may: (text) => text.includes(KEY_MARKER) },
  // gitleaks "jwt": a header and payload of base64url JSON ("eyJ" is `{"`) and a signature.
  { kind: "jwt", pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{15,}\.eyJ[A-Za-z0-9_-]{15,}\.[A-Za-z0-9_-]{20,}/g, may: (text) => text.includes("eyJ") },
  // A private key block, also when cut short (secretlint's rule wants the whole block): the header and a line of key material.
  {
    kind: "private_key",
    pattern: /-----BEGIN[ A-Z0-9]{0,20}PRIVATE KEY(?: BLOCK)?-----[ \t]*\\?r?\\?n?\r?\n?(?:[A-Za-z0-9-]+: [^\n]*\r?\n)*(?:\r?\n)?[ \t]*[A-Za-z0-9+\/=]{40,}/g,
    may: (text) => text.includes("-----BEGIN"),
  },
  // A URL of the schemes secretlint does not look at, holding a password.
  {
    kind: "connection_string_password",
    pattern: URL_WITH_PASSWORD,
    real: (m) => !isPlaceholderSecret(m[3]) && !isPlaceholderSecret(decodeURIComponentSafe(m[3])),
    may: (text) => text.includes("://"),
  },
  // ADO.NET / ODBC style: a server and a password in one `key=value;` string.
  {
    kind: "connection_string_password",
    pattern: /\b(?:Server|Data Source|Host|Address|Addr)\s*=[^;\n]{1,200};(?:[^;\n]{0,200};){0,8}?\s*(?:Password|Pwd)\s*=\s*([^;'"\n]{4,200})/gi,
    real: (m) => !isPlaceholderSecret(m[1].trim()),
    may: (text) => PASSWORD_KEY.test(text),
  },
  // gitleaks "gcp-api-key".
  { kind: "gcp_api_key", pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g, may: (text) => text.includes("AIza") },
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
