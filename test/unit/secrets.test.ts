// The credential detector (src/core/secrets.ts): the preset's rules as driven
// here, our own rules, documented examples and prose that must pass.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isPlaceholderSecret, RULE_TRIGGERS, SecretScanner } from "../../src/core/secrets.ts";

const scanner = new SecretScanner();
const ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const fill = (n: number, offset = 0) => Array.from({ length: n }, (_, i) => ALNUM[(i * 7 + offset) % ALNUM.length]).join("");

const KIND_CASES: Record<string, string> = {};
const PASSING = [
  "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  "Set the password in the env file, never in the repository.",
  "Rotate the API key and the token every 90 days; keep secrets in a vault.",
  "postgres://user:password@localhost:5432/mydb",
  "http://user:passwd@domain.com/private",
  "redis://:${REDIS_PASSWORD}@cache:6379",
  "Server=db;Database=app;User Id=sa;Password=<your password>;",
  "curl -H 'Authorization: Bearer <token>' https://api.example.com",
  "xoxb-not-a-real-token-this-will-not-work",
  // jwt.io's example token
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
  "The file starts with -----BEGIN RSA PRIVATE KEY----- and ends with the matching END line.",
  `cairn_${"x".repeat(43)}`,
  "secretlint-disable",
  // Placeholders in the connection strings the 2026-11-27 audit found passing.
  "jdbc:postgresql://db.internal:5432/app?user=app&password=<password>",
  "postgres://app@db.internal/app?password=changeme",
  "jdbc:postgresql://db.internal:5432/app?user=app&password=${PASS}",
  // A form's fields in a logged web request are no connection string (webmasters note 20282).
  '"GET /wp-admin/post-new.php HTTP/1.0" 404 301 "http://www.example.net/cgi-bin/login.cgi?cookie=on&password=super123&pname=biff"',
  // The Azure Storage emulator's well-known key.
  "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;",
  // gitleaks' own false positive for its Telegram rule: an XSD type.
  '<xsd:element name="AgencyIdentificationCode" type="clm54321:AgencyIdentificationCodeContentType"/>',
  "Create the bot with BotFather, put its token in TELEGRAM_BOT_TOKEN and the Discord webhook URL in the channel settings.",
];

describe("kinds found (preset rules)", () => {
  const cases: [string, string][] = [
    ["aws_access_key_id", "export AWS_ACCESS_KEY_ID=AKIA2E0A8F3B244C9986"],
    ["aws_secret_access_key", 'aws_secret_access_key = "Xq8nT2vL9pRk4sWm7yZa1bCd3eFg5hJk6lMn8oPq"'],
    ["github_token", `curl -H "Authorization: token ghp_${fill(36)}" https://api.github.com/user`],
    ["gitlab_personal_access_token", `GITLAB_TOKEN=glpat-${fill(20, 3)}`],
    ["slack_token", `2026-11-25 ERROR slack: token=xoxb-123456789012-1234567890123-${fill(24, 5)} invalid_auth`],
    ["sendgrid_api_key", `{"sendgrid": "SG.${fill(22, 1)}.${fill(43, 2)}"}`],
    ["notion_integration_token", `NOTION_TOKEN=ntn_${"31415926535"}${fill(35, 6)}`],
    ["npm_token", `//registry.npmjs.org/:_authToken=npm_${fill(36, 4)}`],
    ["postgresql_connection_string", "DATABASE_URL=postgres://app:Hq7!xP2vL9m@db.internal:5432/app"],
    ["private_key", `-----BEGIN RSA PRIVATE KEY-----\n${fill(64)}\n${fill(64, 1)}\n-----END RSA PRIVATE KEY-----`],
  ];
  for (const [kind, text] of cases) {
    KIND_CASES[kind] = text;
    test(kind, () => expect(scanner.find(text)).toBe(kind));
  }
});

describe("rule triggers (a rule skipped when its literal is absent)", () => {
  // The triggers hold for the pinned preset's patterns: every pattern of a triggered rule holds one of its triggers
  // (src/core/secrets.ts says how each was read). A new version of the preset must be read again.
  const presetFile = Bun.resolveSync("@secretlint/secretlint-rule-preset-recommend", import.meta.dir);
  const preset = readFileSync(presetFile, "utf8");
  const patterns: Record<string, string[]> = {
    "@secretlint/secretlint-rule-sendgrid": [String.raw`/(?<!\p{L})SG\.\w{1,128}\.\w{1,128}([-_]?)\w{1,128}(?!\w)/gu`],
    "@secretlint/secretlint-rule-notion": [String.raw`/(?<!\p{L})ntn_[0-9]{11}[A-Za-z0-9]{35}(?![A-Za-z0-9])/gu`],
    "@secretlint/secretlint-rule-aws": [
      String.raw`/\b(A3T[A-Z0-9]|AKIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ASIA)[A-Z0-9]{16}\b/g`,
      String.raw`(?:SECRET|secret|Secret)_?(?:ACCESS|access|Access)_?(?:KEY|key|Key)`,
      // The account id's pattern, whose findings are no credential (no trigger).
      String.raw`(ACCOUNT|account|Account)_?(ID|id|Id)?`,
    ],
    "@secretlint/secretlint-rule-basicauth": [
      String.raw`/(?<protocol>(?:https?|ftp|ftps)):\/\/(?<user>[-a-zA-Z0-9_]{1,256}):(?<password>[-a-zA-Z0-9_]{1,256})@[-a-zA-Z0-9%._+~#=]{1,256}\.[a-zA-Z0-9()]{1,6}\b/g`,
    ],
    "@secretlint/secretlint-rule-database-connection-string": [
      String.raw`/mongodb(?:\+srv)?:\/\/(?:`,
      String.raw`/(?:jdbc:)?mysql(?:x)?:\/\/(?:`,
      String.raw`/postgres(?:ql)?:\/\/(?:`,
    ],
    "@secretlint/secretlint-rule-github": [
      String.raw`/(?<!\p{L})(?<type>ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}(?![A-Za-z0-9_])/gu`,
      String.raw`/(?<!\p{L})(?<type>github_pat)_[A-Za-z0-9_]{82}(?![A-Za-z0-9_])/gu`,
      String.raw`/(?<!\p{L})(?<type>ghs)_[0-9]{1,20}_`,
    ],
    "@secretlint/secretlint-rule-slack": [
      String.raw`/\b(?:xoxb|xoxp|xapp|xoxa|xoxo|xoxr)-(?:\d-)?(?:[a-zA-Z0-9]{1,40}-)+[a-zA-Z0-9]{1,40}\b/g`,
      String.raw`/https:\/\/hooks\.slack\.com\/services\/T[a-zA-Z0-9]{1,40}\/B[a-zA-Z0-9]{1,40}\/[a-zA-Z0-9]{1,40}/gi`,
    ],
    "@secretlint/secretlint-rule-hashicorp-vault": [
      String.raw`/(?<!\p{L})hvs\.[A-Za-z0-9_-]{90,120}(?![A-Za-z0-9_-])/gu`,
      String.raw`/(?<!\p{L})hvb\.[A-Za-z0-9_-]{138,300}(?![A-Za-z0-9_-])/gu`,
      String.raw`/(?<!\p{L})hvr\.[A-Za-z0-9_-]{90,120}(?![A-Za-z0-9_-])/gu`,
    ],
    // On a note only the npm_ pattern runs: the others are for package.json and .npmrc files.
    "@secretlint/secretlint-rule-npm": [String.raw`/(?<!\p{L})npm_[A-Za-z0-9_]{36}(?![A-Za-z0-9_])/gu`, "isPackageFile(source.filePath)", "isNpmrc(source.filePath)"],
    "@secretlint/secretlint-rule-privatekey": [String.raw`const PEM_CONTENT_PATTERN = /-----BEGIN[ ]?`],
    "@secretlint/secretlint-rule-openai": [String.raw`/sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20}/g`],
    "@secretlint/secretlint-rule-anthropic": [String.raw`/(?<!\p{L})sk-ant-api0\d-[A-Za-z0-9_-]{90,128}AA(?![A-Za-z0-9_-])/gu`],
    "@secretlint/secretlint-rule-groq": [String.raw`/(?<!\p{L})gsk_[a-zA-Z0-9]{52}(?![a-zA-Z0-9])/gu`],
    "@secretlint/secretlint-rule-huggingface": [String.raw`/(?<!\p{L})hf_[a-zA-Z]{34}(?![a-zA-Z])/gu`],
    "@secretlint/secretlint-rule-linear": [String.raw`/(?<!\p{L})lin_api_[a-zA-Z0-9_]{32,128}(?![a-zA-Z0-9_])/gu`],
    "@secretlint/secretlint-rule-shopify": [String.raw`/(?<!\p{L})(shppa|shpca|shpat|shpss)_[a-zA-Z0-9]{32,64}(?![a-zA-Z0-9])/gu`],
    "@secretlint/secretlint-rule-stripe": [String.raw`/(?<!\p{L})(?<prefix>sk_live|sk_test|rk_live|rk_test)_[a-zA-Z0-9]{24,99}(?![a-zA-Z0-9])/gu`],
    "@secretlint/secretlint-rule-1password": [String.raw`/(?<!\p{L})ops_(ey[A-Za-z0-9+/=]{100,1280}fQ={0,2})(?![A-Za-z0-9+/=])/gu`],
    "@secretlint/secretlint-rule-vercel": [String.raw`/(?<!\p{L})(?<prefix>vcp|vci|vca|vcr|vck)_[A-Za-z0-9]{20,60}(?![A-Za-z0-9])/gu`],
    "@secretlint/secretlint-rule-databricks": [String.raw`/(?<!\p{L})dapi[A-Fa-f0-9]{32}(?:-[0-9])?(?![A-Fa-f0-9])/gu`],
    "@secretlint/secretlint-rule-docker": [String.raw`/(?<!\p{L})dckr_pat_[a-zA-Z0-9_-]{27}(?![a-zA-Z0-9_-])/gu`],
    "@secretlint/secretlint-rule-figma": [String.raw`/(?<!\p{L})figd_[A-Za-z0-9_-]{40,200}(?![A-Za-z0-9_-])/gu`],
    "@secretlint/secretlint-rule-cloudflare": [String.raw`/(?<!\p{L})(?<prefix>cfk|cfut|cfat)_[A-Za-z0-9]{40}[0-9a-f]{8}(?![A-Za-z0-9])/gu`],
    "@secretlint/secretlint-rule-tailscale": [String.raw`/(?<!\p{L})tskey-(?<type>[a-z]{2,20})-[0-9A-Za-z_]{8,40}-[0-9A-Za-z_]{16,60}(?![0-9A-Za-z_])/gu`],
    "@secretlint/secretlint-rule-gitlab": [String.raw`/(?<!\p{L})glpat-[A-Za-z0-9_-]{20,128}(?![A-Za-z0-9_-])/gu`, "const patterns = [GITLAB_PERSONAL_ACCESS_TOKEN_PATTERN];"],
    "@secretlint/secretlint-rule-grafana": [
      String.raw`/(?<!\p{L})glc_[A-Za-z0-9+/]{32,400}={0,2}(?![A-Za-z0-9+/=])/gu`,
      String.raw`/(?<!\p{L})glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}(?![A-Fa-f0-9])/gu`,
    ],
  };
  test("the preset is the version the triggers were read from, and holds their patterns", () => {
    const version = JSON.parse(readFileSync(join(presetFile, "../../package.json"), "utf8")).version;
    expect(version).toBe("13.1.0");
    expect(Object.keys(RULE_TRIGGERS).sort()).toEqual(Object.keys(patterns).sort());
    for (const list of Object.values(patterns)) for (const pattern of list) expect(preset).toContain(pattern);
  });
  test("a key is found wherever it sits in a long note", () => {
    const prose = "The deploy failed again after the node upgrade, so we rolled back. ".repeat(40);
    expect(scanner.find(`${prose}SG.${fill(22, 1)}.${fill(43, 2)} ${prose}`)).toBe("sendgrid_api_key");
    expect(scanner.find(`${prose}ntn_31415926535${fill(35, 6)}`)).toBe("notion_integration_token");
    expect(scanner.find(`${prose}key AKIA2E0A8F3B244C9986 ${prose}`)).toBe("aws_access_key_id");
    expect(scanner.find(`${prose}AWS_SECRET_ACCESS_KEY=Xq8nT2vL9pRk4sWm7yZa1bCd3eFg5hJk6lMn8oPq ${prose}`)).toBe("aws_secret_access_key");
    expect(scanner.find(`${prose}see https://deploy:Zx8vQ2pL9mWk@ci.corp.net/x ${prose}`)).toBe("url_password");
    expect(scanner.find(`${prose}HTTPS://HOOKS.SLACK.COM/services/T0123ABCD/B0123ABCD/${fill(24, 3)} ${prose}`)).toBe("slack_webhook");
    expect(scanner.find(`${prose}MONGODB://app:Hq7xP2vL9mQ@db.internal/app ${prose}`)).toBe("mongodb_connection_string");
  });
  test("the same answers with every rule run on every text", () => {
    const everyRule = new SecretScanner({ triggers: false });
    const prose = "Set the password in the env file; the account is 1234-5678-9012 and the secret is in the vault. ";
    const texts = [
      ...Object.values(KIND_CASES),
      ...PASSING,
      `${prose}aws_account_id = 123456789012`,
      `${prose}Account: 1234-5678-9012`,
      "ftp://admin:Zx8vQ2pL9mWk@files.corp.net/pub",
      `token xoxp-1-${fill(12)}-${fill(10, 2)} here`,
      `vault login hvs.${fill(95, 4)}`,
      `gho_${fill(36, 2)} and github_pat_${fill(82, 5)}`,
      `jdbc:mysql://app:Hq7xP2vL9mQ@db.internal/app`,
      `OPENAI_API_KEY=sk-${fill(20, 1)}T3BlbkFJ${fill(20, 2)}`,
      `key sk-ant-api03-${fill(93, 3)}AA`,
      `GROQ gsk_${fill(52, 4)} and hf_${"abcdefghijklmnopqrstuvwxyzABCDEFGH"} lin_api_${fill(40, 5)}`,
      `shpat_${"0123456789abcdef".repeat(2)} sk_live_${fill(30, 6)} rk_test_${fill(30, 7)}`,
      `vcp_${fill(30, 8)} dapi${"0123456789abcdef".repeat(2)} dckr_pat_${fill(27, 9)} figd_${fill(45, 1)}`,
      `cfut_${fill(40, 2)}0123abcd tskey-auth-${fill(12, 3)}-${fill(20, 4)} glpat-${fill(20, 5)}`,
      `glc_${fill(40, 6)}== glsa_${fill(32, 7)}_0123abcd npm_${fill(36, 8)}`,
      `-----BEGIN PRIVATE KEY-----\n${fill(64)}\n${fill(64, 1)}\n-----END PRIVATE KEY-----`,
    ];
    for (const text of texts) expect([text, scanner.find(text)]).toEqual([text, everyRule.find(text)]);
  });
});

describe("kinds found (our rules)", () => {
  test("a cairn_ key", () => expect(scanner.find(`export CAIRN_API_KEY=cairn_${fill(43)}`)).toBe("cairn_api_key"));
  test("a cairn_ key of any length keys.ts accepts (40 or more), wherever it stands", () => {
    for (const n of [40, 41, 42, 43, 44, 50, 64, 200]) expect([n, scanner.find(`CAIRN_API_KEY=cairn_${fill(n)}`)]).toEqual([n, "cairn_api_key"]);
    expect(scanner.find(`xcairn_${fill(43)}`)).toBe("cairn_api_key");
    expect(scanner.find(`Authorization: Bearer cairn_${fill(43)}x_y`)).toBe("cairn_api_key");
  });
  test("a cairn_ key too short to be one is not one", () => {
    expect(scanner.find(`cairn_${fill(20)}`)).toBeNull();
    expect(scanner.find(`cairn_${fill(39)}`)).toBeNull();
  });
  test("a JWT", () => {
    const jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI5OTkiLCJyb2xlIjoiYWRtaW4ifQ.abcDEF123ghiJKL456mnoPQR789stu";
    expect(scanner.find(`Authorization: Bearer ${jwt}`)).toBe("jwt");
  });
  test("a private key block cut short after its first line", () => {
    expect(scanner.find(`here is my key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n${fill(70)}\n`)).toBe("private_key");
  });
  test("a redis URL with a password", () => expect(scanner.find("REDIS_URL=redis://default:Zx8vQ2pL9mWk@cache:6379/0")).toBe("connection_string_password"));
  test("an ADO.NET connection string with a password", () => {
    expect(scanner.find("Server=tcp:db.corp.net,1433;Database=app;User Id=sa;Password=Qw3rty!9x;")).toBe("connection_string_password");
    // The key in any case (the rule's pattern is case-blind, and so is the check that lets it run).
    expect(scanner.find("data source=db.corp.net;initial catalog=app;uid=sa;PWD=Qw3rty!9x;")).toBe("connection_string_password");
    expect(scanner.find("Host=db;Port=5432;pAsSwOrD=Qw3rty!9x")).toBe("connection_string_password");
  });
  test("a URL of any scheme's case with a password", () => expect(scanner.find("AMQPS://app:Zx8vQ2pL9mWk@mq.internal:5671")).toBe("connection_string_password"));
  test("a Google API key", () => expect(scanner.find(`key=AIza${fill(35, 9)}`)).toBe("gcp_api_key"));
  test("a URL with a password and no user name", () => {
    expect(scanner.find("REDIS_URL=redis://:z4R73a1CdJM01Ud@redis.prod-corp.net:6379/0")).toBe("connection_string_password");
    // Also the schemes secretlint's own rules find only with a user name.
    for (const url of ["postgres://:z4R73a1CdJM01Ud@db.prod-corp.net:5432/app", "postgresql://:z4R73a1CdJM01Ud@db/app", "mysql://:z4R73a1CdJM01Ud@db:3306/app", "mongodb+srv://:z4R73a1CdJM01Ud@cluster0.prodcorp.net/app"]) {
      expect({ url, kind: scanner.find(`DATABASE_URL=${url}`) }).toEqual({ url, kind: "connection_string_password" });
    }
    expect(scanner.find("postgres://:password@db/app")).toBeNull();
    expect(scanner.find("postgres://:${PGPASSWORD}@db/app")).toBeNull();
  });
  test("a connection URL with the password in its query", () => {
    expect(scanner.find("jdbc:postgresql://db.prod-corp.net:5432/app?user=app&password=z4R73a1CdJM01Ud")).toBe("connection_string_password");
    expect(scanner.find("DATABASE_URL=postgres://app@db.prod-corp.net/app?password=z4R73a1CdJM01Ud")).toBe("connection_string_password");
    expect(scanner.find("jdbc:sqlserver://sql.corp.net:1433;databaseName=app;user=sa;password=Qw3rty!9x")).toBe("connection_string_password");
  });
  test("an Azure storage account key", () => {
    const key = `${fill(86, 3)}==`;
    expect(scanner.find(`DefaultEndpointsProtocol=https;AccountName=ordersprod;AccountKey=${key};EndpointSuffix=core.windows.net`)).toBe("azure_storage_key");
  });
  test("a Stripe webhook secret", () => expect(scanner.find(`STRIPE_WEBHOOK_SECRET=whsec_${fill(32, 4)}`)).toBe("stripe_webhook_secret"));
  test("GitLab runner and deploy tokens", () => {
    expect(scanner.find(`gitlab-runner register --token glrt-${fill(20, 5)}`)).toBe("gitlab_runner_token");
    expect(scanner.find(`token = "glrt-t1_${fill(27, 6)}.01a2b3c4d"`)).toBe("gitlab_runner_token");
    expect(scanner.find(`docker login -u gitlab+deploy-token-1 -p gldt-${fill(20, 7)} registry.gitlab.com`)).toBe("gitlab_deploy_token");
  });
  test("a Bitbucket app password", () => expect(scanner.find(`git clone https://bob@bitbucket.org/team/repo.git  # ATBB${fill(32, 8)}`)).toBe("bitbucket_app_password"));
  test("a Discord webhook URL and bot token", () => {
    const token = fill(68, 9).replace(/[0-9]/g, "_");
    expect(scanner.find(`curl -X POST 'https://discord.com/api/webhooks/1234567890123456789/${token}' -d '{"content":"hi"}'`)).toBe("discord_webhook");
    expect(scanner.find(`client.login("MTA${fill(23, 1)}.${fill(6, 2)}.${fill(38, 4)}");`)).toBe("discord_bot_token");
    // An older bot's token: an 18-digit id (24 characters) and a 27-character HMAC.
    expect(scanner.find(`DISCORD_TOKEN=NzU${fill(21, 3)}.${fill(6, 5)}.${fill(27, 6)}`)).toBe("discord_bot_token");
  });
  test("a Telegram bot token, alone and in the Bot API's URL", () => {
    expect(scanner.find(`TELEGRAM_BOT_TOKEN=5123456789:AAH${fill(32, 7)}`)).toBe("telegram_bot_token");
    expect(scanner.find(`curl https://api.telegram.org/bot5123456789:AAH${fill(32, 7)}/getMe`)).toBe("telegram_bot_token");
  });
});

describe("what passes", () => {
  for (const text of PASSING) {
    test(JSON.stringify(text.slice(0, 60)), () => expect(scanner.find(text)).toBeNull());
  }
});

test("a secretlint-disable comment does not switch the scan off", () => {
  expect(scanner.find(`// secretlint-disable\nGITHUB_TOKEN=ghp_${fill(36)}`)).toBe("github_token");
});

test("placeholders", () => {
  for (const value of ["password", "PASS", "<password>", "${DB_PASSWORD}", "$PASSWORD", "****", "xxxxxx", "your_password", "{{ pass }}"]) {
    expect(isPlaceholderSecret(value)).toBe(true);
  }
  for (const value of ["Hq7!xP2vL9m", "s3cr3t-Tr0ub4dor"]) expect(isPlaceholderSecret(value)).toBe(false);
});

test("the scanner keeps nothing between calls", () => {
  expect(scanner.find(`ghp_${fill(36)}`)).toBe("github_token");
  expect(scanner.find("plain text")).toBeNull();
});
