// The secret scan measured (docs/secrets.md, "Measured"):
// recall on generated credentials in realistic surroundings, false positives
// on every note of the public webmasters collection, and the scan's cost.
//   bun bench/secrets.ts [--seed 21] [--per-kind 4] [--list]
// Credentials are drawn from a seeded generator in each kind's published
// format (the prefixes and lengths their providers document), then placed in
// a log line, an .env file, a curl command or a JSON document. The scanner is
// exactly the server's (src/core/secrets.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SecretScanner } from "../src/core/secrets.ts";
import { headNote } from "./headheavy.ts";
import { EVAL_DIR } from "./quality/collection.ts";

const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = argv.indexOf(`--${name}`);
  return at >= 0 ? argv[at + 1] : fallback;
};
const seed = Number(option("seed", "21"));
const perKind = Number(option("per-kind", "4"));

/** mulberry32: a small seeded generator, so the set is the same on every run. */
function generator(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = generator(seed);
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const ALNUM = UPPER + LOWER + DIGITS;
const B64URL = ALNUM + "-_";
const B64 = ALNUM + "+/";
const HEX = "0123456789abcdef";
const draw = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)];
const b64url = (text: string) => Buffer.from(text).toString("base64url");
const word = () => pick(["orders", "billing", "ingest", "api", "worker", "deploy", "metrics", "auth", "search", "notify"]);
const password = () => draw(ALNUM, 6) + pick(["!", "#", "%", "9", "x"]) + draw(ALNUM, 8);

/** Each kind: the name the scan should give and a generator of one credential. */
const KINDS: { kind: string; make: () => string; variable: string }[] = [
  { kind: "aws_access_key_id", variable: "AWS_ACCESS_KEY_ID", make: () => "AKIA" + draw(UPPER + "234567", 16) },
  { kind: "aws_secret_access_key", variable: "AWS_SECRET_ACCESS_KEY", make: () => draw(B64, 40) },
  { kind: "github_token", variable: "GITHUB_TOKEN", make: () => pick(["ghp_", "gho_", "ghs_"]) + draw(ALNUM, 36) },
  { kind: "github_token", variable: "GH_PAT", make: () => "github_pat_" + draw(ALNUM, 22) + "_" + draw(ALNUM, 59) },
  { kind: "gitlab_personal_access_token", variable: "GITLAB_TOKEN", make: () => "glpat-" + draw(B64URL, 20) },
  { kind: "slack_token", variable: "SLACK_BOT_TOKEN", make: () => `xoxb-${draw(DIGITS, 12)}-${draw(DIGITS, 13)}-${draw(ALNUM, 24)}` },
  { kind: "slack_webhook", variable: "SLACK_WEBHOOK_URL", make: () => `https://hooks.slack.com/services/T${draw(UPPER + DIGITS, 10)}/B${draw(UPPER + DIGITS, 10)}/${draw(ALNUM, 24)}` },
  { kind: "stripe", variable: "STRIPE_SECRET_KEY", make: () => pick(["sk_live_", "rk_live_"]) + draw(ALNUM, 24 + Math.floor(random() * 75)) },
  { kind: "sendgrid_api_key", variable: "SENDGRID_API_KEY", make: () => `SG.${draw(B64URL.replace("-", ""), 22)}.${draw(B64URL.replace("-", ""), 43)}` },
  { kind: "openai_api_key", variable: "OPENAI_API_KEY", make: () => `sk-proj-${draw(B64URL, 74)}T3BlbkFJ${draw(B64URL, 74)}` },
  { kind: "anthropic_api_key", variable: "ANTHROPIC_API_KEY", make: () => `sk-ant-api03-${draw(B64URL, 93)}AA` },
  { kind: "npm_token", variable: "NPM_TOKEN", make: () => "npm_" + draw(ALNUM, 36) },
  { kind: "huggingface_user_access_token", variable: "HF_TOKEN", make: () => "hf_" + draw(UPPER + LOWER, 34) },
  { kind: "docker_personal_access_token", variable: "DOCKER_PAT", make: () => "dckr_pat_" + draw(B64URL, 27) },
  { kind: "databricks_personal_access_token", variable: "DATABRICKS_TOKEN", make: () => "dapi" + draw(HEX, 32) },
  { kind: "shopify_token", variable: "SHOPIFY_ACCESS_TOKEN", make: () => "shpat_" + draw(HEX, 32) },
  { kind: "gcp_api_key", variable: "GOOGLE_API_KEY", make: () => "AIza" + draw(B64URL, 35) },
  { kind: "postgresql_connection_string", variable: "DATABASE_URL", make: () => `postgres://${word()}:${password()}@db-${word()}.internal:5432/${word()}` },
  { kind: "mysql_connection_string", variable: "MYSQL_URL", make: () => `mysql://${word()}:${password()}@mysql.${word()}.svc:3306/${word()}` },
  { kind: "mongodb_connection_string", variable: "MONGO_URI", make: () => `mongodb+srv://${word()}:${password()}@cluster0.${draw(LOWER + DIGITS, 5)}.mongodb.net/${word()}` },
  { kind: "connection_string_password", variable: "REDIS_URL", make: () => `redis://default:${password()}@redis-${word()}:6379/0` },
  // The same kind in the shapes the 2026-11-27 audit found passing: no user name, and the password in the query.
  { kind: "connection_string_password (no user)", variable: "REDIS_URL", make: () => `redis://:${password()}@redis.${word()}.prod-corp.net:6379/0` },
  {
    kind: "connection_string_password (query)",
    variable: "JDBC_URL",
    make: () =>
      pick([
        () => `jdbc:postgresql://db.${word()}.prod-corp.net:5432/${word()}?user=${word()}&password=${password()}`,
        () => `postgres://${word()}@db.${word()}.prod-corp.net/${word()}?sslmode=require&password=${password()}`,
        () => `jdbc:sqlserver://sql.${word()}.prod-corp.net:1433;databaseName=${word()};user=${word()};password=${password()}`,
      ])(),
  },
  { kind: "jwt", variable: "AUTH_TOKEN", make: () => `${b64url('{"alg":"HS256","typ":"JWT"}')}.${b64url(JSON.stringify({ sub: draw(DIGITS, 8), role: word(), exp: 1900000000 + Math.floor(random() * 1e6) }))}.${draw(B64URL, 43)}` },
  // Keys of 40 to 64 characters, as src/core/keys.ts accepts them (the audit found all but 43 passing).
  { kind: "cairn_api_key", variable: "CAIRN_API_KEY", make: () => "cairn_" + draw(ALNUM, 40 + Math.floor(random() * 25)) },
  {
    kind: "azure_storage_key",
    variable: "AZURE_STORAGE_CONNECTION_STRING",
    make: () => `DefaultEndpointsProtocol=https;AccountName=${word()}${draw(LOWER + DIGITS, 6)};AccountKey=${draw(B64, 86)}==;EndpointSuffix=core.windows.net`,
  },
  { kind: "stripe_webhook_secret", variable: "STRIPE_WEBHOOK_SECRET", make: () => "whsec_" + draw(ALNUM, 32 + Math.floor(random() * 2) * 32) },
  { kind: "gitlab_runner_token", variable: "CI_RUNNER_TOKEN", make: () => pick(["glrt-" + draw(B64URL, 20), `glrt-t${draw(DIGITS, 1)}_${draw(B64URL, 27)}.${draw(LOWER + DIGITS, 9)}`]) },
  { kind: "gitlab_deploy_token", variable: "GITLAB_DEPLOY_TOKEN", make: () => "gldt-" + draw(B64URL, 20) },
  { kind: "bitbucket_app_password", variable: "BITBUCKET_APP_PASSWORD", make: () => "ATBB" + draw(ALNUM, 32) },
  {
    kind: "discord_webhook",
    variable: "DISCORD_WEBHOOK_URL",
    make: () => `https://${pick(["", "ptb.", "canary."])}discord.com/api/webhooks/1${draw(DIGITS, 18)}/${draw(B64URL, 68)}`,
  },
  // The bot's id (a snowflake) in base64, a timestamp, an HMAC.
  { kind: "discord_bot_token", variable: "DISCORD_BOT_TOKEN", make: () => `${b64url(pick(["1", "2", "7", "9"]) + draw(DIGITS, 17 + Math.floor(random() * 2)))}.${draw(B64URL, 6)}.${draw(B64URL, pick([27, 38]))}` },
  { kind: "telegram_bot_token", variable: "TELEGRAM_BOT_TOKEN", make: () => `${1 + Math.floor(random() * 9)}${draw(DIGITS, 7 + Math.floor(random() * 3))}:AA${draw(B64URL, 33)}` },
  {
    kind: "private_key",
    variable: "TLS_KEY",
    make: () => {
      const type = pick(["RSA ", "EC ", "OPENSSH ", ""]);
      const lines = Array.from({ length: 6 + Math.floor(random() * 10) }, () => draw(B64, 64));
      return `-----BEGIN ${type}PRIVATE KEY-----\n${lines.join("\n")}\n-----END ${type}PRIVATE KEY-----`;
    },
  },
];

/** The surroundings a credential is pasted in. Multi-line values (key blocks) go in as they are. */
const SURROUNDINGS: { name: string; wrap: (variable: string, value: string) => string }[] = [
  {
    name: "log line",
    wrap: (variable, value) =>
      `Deploy failed on ${word()}-${draw(DIGITS, 2)}. Log:\n2026-11-25T10:${draw(DIGITS, 2)}:${draw(DIGITS, 2)}Z ERROR config loaded ${variable.toLowerCase()}=${value} retrying in 5s`,
  },
  {
    name: ".env file",
    wrap: (variable, value) => `My .env for the ${word()} service, in case it helps:\n\nNODE_ENV=production\nPORT=8080\n${variable}=${value.includes("\n") ? JSON.stringify(value) : value}\nLOG_LEVEL=debug`,
  },
  {
    name: "curl command",
    wrap: (variable, value) =>
      value.startsWith("http") || value.includes("://")
        ? `Reproduce with:\n\ncurl -sS -X POST '${value}' -d '{"text":"hello"}'`
        : `Reproduce with:\n\ncurl -sS https://api.${word()}.example.com/v1/items -H "Authorization: Bearer ${value.replaceAll("\n", "\\n")}" -H 'Content-Type: application/json'`,
  },
  {
    name: "JSON",
    wrap: (variable, value) => `The config that works:\n\n${JSON.stringify({ service: word(), region: "eu-west-1", [variable.toLowerCase()]: value, retries: 3 }, null, 2)}`,
  },
];

const scanner = new SecretScanner();
const generated: { kind: string; surrounding: string; text: string }[] = [];
for (const kind of KINDS) {
  for (let i = 0; i < perKind; i++) {
    const surrounding = SURROUNDINGS[(generated.length + i) % SURROUNDINGS.length];
    generated.push({ kind: kind.kind, surrounding: surrounding.name, text: surrounding.wrap(kind.variable, kind.make()) });
  }
}
// A label's shape in parentheses ("connection_string_password (query)") is the same kind.
const kinds = new Set(generated.map((g) => g.kind.split(" (")[0]));
let found = 0;
const misses: typeof generated = [];
const byKind = new Map<string, { n: number; found: number; named: Set<string> }>();
for (const g of generated) {
  const kind = scanner.find(g.text);
  const entry = byKind.get(g.kind) ?? { n: 0, found: 0, named: new Set<string>() };
  byKind.set(g.kind, entry);
  entry.n++;
  if (kind !== null) {
    found++;
    entry.found++;
    entry.named.add(kind);
  } else misses.push(g);
}
console.log(`secret scan, seed ${seed}: ${generated.length} credentials of ${kinds.size} kinds in ${SURROUNDINGS.length} surroundings`);
console.log(`recall: ${found}/${generated.length} = ${((100 * found) / generated.length).toFixed(1)}%`);
console.log("| kind | found | named |\n|---|---|---|");
for (const [kind, entry] of byKind) console.log(`| ${kind} | ${entry.found}/${entry.n} | ${[...entry.named].join(", ")} |`);
for (const miss of misses) console.log(`missed (${miss.kind}, ${miss.surrounding}):\n${miss.text}\n`);

// Documented examples and prose must pass.
const PASSING = [
  "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  "Set the password in the env file, never in the repository.",
  "postgres://user:password@localhost:5432/mydb",
  "curl -H 'Authorization: Bearer <token>' https://api.example.com",
  "GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",
  "redis://:${REDIS_PASSWORD}@cache:6379/0",
  "jdbc:postgresql://localhost:5432/app?user=app&password=<password>",
  "postgres://app@localhost/app?password=changeme",
  "Paste the bot token from the Discord developer portal into DISCORD_TOKEN and the webhook URL into the channel settings.",
  // The Azure Storage emulator's well-known key.
  "UseDevelopmentStorage=true or DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;",
];
const passing = PASSING.filter((text) => scanner.find(text) === null).length;
console.log(`\ndocumented examples and prose passing: ${passing}/${PASSING.length}`);

// False positives: every note of the webmasters collection (title, body, tags as the server scans them).
const corpus = join(EVAL_DIR, "cqadupstack-webmasters/corpus.jsonl");
const docs = readFileSync(corpus, "utf8").split("\n").filter((line) => line.trim()).map((line) => JSON.parse(line) as { id: string; title: string; body: string; tags: string[] });
const hits: { id: string; field: string; kind: string; excerpt: string }[] = [];
const started = performance.now();
for (const doc of docs) {
  for (const [field, text] of [["title", doc.title], ["body", doc.body], ...doc.tags.map((tag) => ["tags", tag])] as [string, string][]) {
    const kind = scanner.find(text);
    if (kind !== null) {
      hits.push({ id: doc.id, field, kind, excerpt: text });
      break;
    }
  }
}
const ms = performance.now() - started;
console.log(`\nwebmasters: ${docs.length} notes scanned in ${ms.toFixed(0)} ms (${((1000 * ms) / docs.length).toFixed(1)} µs a note); notes refused: ${hits.length}`);
for (const hit of hits) {
  // The excerpt around what the rules matched is printed for the doc's review.
  const around = hit.excerpt.replace(/\s+/g, " ");
  const at = around.search(/:\/\/[^\s]*:[^\s]*@|AKIA|eyJ|-----BEGIN|Password=|pwd=|AIza|sk_|xox|gh[pousr]_|SG\.|AccountKey|whsec_|gl[rd]t-|ATBB|webhooks|[0-9]:A|[MNO][A-Za-z0-9_-]{23,25}\./i);
  console.log(`- ${hit.id} (${hit.field}, ${hit.kind}): …${around.slice(Math.max(0, at - 60), at + 100)}…`);
}

// The rule triggers (src/core/secrets.ts, RULE_TRIGGERS) change no answer: the scanner against one that runs every
// preset rule on every text, over the generated credentials, the webmasters notes and ~2 KB head-heavy notes (the
// writes bench's), and what each costs a note, in alternating rounds (least of 5).
const everyRule = new SecretScanner({ triggers: false });
const bodies = Array.from({ length: 400 }, (_, i) => headNote("cairn-writes", i));
const texts = [
  ...generated.map((g) => g.text),
  ...PASSING,
  ...docs.flatMap((doc) => [doc.title, doc.body, ...doc.tags]),
  ...bodies.flatMap((note) => [note.title, note.body, ...note.tags]),
];
const differ = texts.filter((text) => scanner.find(text) !== everyRule.find(text));
console.log(`\nrule triggers: ${texts.length} texts, answers that differ from every rule run on every text: ${differ.length}`);
for (const text of differ.slice(0, 5)) console.log(`- differs: ${text.slice(0, 200)}`);
const costOf = (s: SecretScanner, notes: { title: string; body: string; tags: string[] }[]) => {
  const started = performance.now();
  for (const note of notes) for (const text of [note.title, note.body, ...note.tags]) s.find(text);
  return ((performance.now() - started) * 1000) / notes.length;
};
for (const [name, notes] of [["head-heavy ~2 KB notes", bodies], ["webmasters notes", docs.slice(0, 3000)]] as const) {
  const best = { triggers: Infinity, every: Infinity };
  for (let round = 0; round < 5; round++) {
    best.triggers = Math.min(best.triggers, costOf(scanner, notes));
    best.every = Math.min(best.every, costOf(everyRule, notes));
  }
  console.log(`${name}: ${best.triggers.toFixed(1)} µs a note with the triggers, ${best.every.toFixed(1)} with every rule run (least of 5 rounds)`);
}
