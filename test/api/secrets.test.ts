// Secrets are refused at the door (shared/API.md, "Extensions, round 3"):
// title, body, tag or comment holding a credential is 422 secret_detected with
// field and kind, nothing stored, the credential never echoed, logged or
// counted; documented examples and prose pass; SECRET_SCAN=0 switches it off.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, createNote, expectError, expectStatus, register, storedIn, unique, type Contributor } from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";
import { startServer, type RunningServer } from "../helpers/server.ts";

/** A GitHub token in the published format, unique per call (so "never stored" can look for it). */
const githubToken = () => `ghp_${unique("T").replace(/[^A-Za-z0-9]/g, "").padEnd(36, "Q7x").slice(0, 36)}`;

const BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** `n` random characters of `alphabet`: each credential below is new on every run. */
const draw = (n: number, alphabet = BASE62) => Array.from({ length: n }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join("");
const B64URL = `${BASE62}_-`;

/**
 * The credentials an outside audit (2026-11-27) posted in a note and got 201 for, each in the surroundings people
 * paste them in: the field it is in, the kind the 422 names, the credential (to look for in the store) and the note.
 */
const AUDIT_CASES: { name: string; field: "title" | "body" | "tags"; kind: string; secret: string; note: (secret: string) => Record<string, unknown> }[] = [
  ...[40, 41, 42, 44, 50, 64].map((n) => ({
    name: `a cairn_ key of ${n} characters in an .env file`,
    field: "body" as const,
    kind: "cairn_api_key",
    secret: `cairn_${draw(n)}`,
    note: (secret: string) => ({ title: `Cairn CLI ${unique()}`, body: `My .env:\n\nCAIRN_URL=https://notes.corp.net\nCAIRN_API_KEY=${secret}\nLOG_LEVEL=debug` }),
  })),
  {
    name: "a cairn_ key glued to the word before it, in a log line",
    field: "body",
    kind: "cairn_api_key",
    secret: `cairn_${draw(43)}`,
    note: (secret) => ({ title: `Key rejected ${unique()}`, body: `2026-11-27T08:14:03Z WARN auth rejected header=Bearerx${secret} status=401` }),
  },
  {
    name: "an AWS access key id as a tag (tags are stored lower-cased)",
    field: "tags",
    kind: "aws_access_key_id",
    secret: `AKIA${draw(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}`,
    note: (secret) => ({ title: `S3 upload fails ${unique()}`, body: "AccessDenied on PutObject.", tags: ["aws", secret] }),
  },
  {
    name: "a GitLab runner token as a mixed-case tag",
    field: "tags",
    kind: "gitlab_runner_token",
    secret: `glrt-${draw(20)}`,
    note: (secret) => ({ title: `Runner offline ${unique()}`, body: "The runner never picks up jobs.", tags: [secret] }),
  },
  {
    name: "a redis URL with a password and no user name, in a log line",
    field: "body",
    kind: "connection_string_password",
    secret: draw(15),
    note: (secret) => ({ title: `Redis timeouts ${unique()}`, body: `2026-11-27 10:02:11 ERROR cache: connect redis://:${secret}@redis.prod-corp.net:6379/0 failed: ETIMEDOUT` }),
  },
  {
    name: "a JDBC URL with the password in its query, in JSON",
    field: "body",
    kind: "connection_string_password",
    secret: draw(15),
    note: (secret) => ({
      title: `Hikari pool ${unique()}`,
      body: `Config:\n${JSON.stringify({ datasource: { url: `jdbc:postgresql://db.prod-corp.net:5432/app?user=app&password=${secret}`, maximumPoolSize: 10 } }, null, 2)}`,
    }),
  },
  {
    name: "a postgres URL with a user and the password in its query, in an .env file",
    field: "title",
    kind: "connection_string_password",
    secret: draw(15),
    note: (secret) => ({ title: `DATABASE_URL=postgres://app@db.prod-corp.net/app?password=${secret} refused`, body: "psql works, the app does not." }),
  },
  {
    name: "a Discord webhook URL in a curl command",
    field: "body",
    kind: "discord_webhook",
    secret: `https://discord.com/api/webhooks/1${draw(18, "0123456789")}/${draw(68, B64URL)}`,
    note: (secret) => ({ title: `Webhook 400 ${unique()}`, body: `curl -sS -X POST '${secret}' -H 'Content-Type: application/json' -d '{"content":"deploy done"}'` }),
  },
  {
    name: "a Discord bot token in code",
    field: "body",
    kind: "discord_bot_token",
    secret: `MTA${draw(23, B64URL)}.${draw(6, B64URL)}.${draw(38, B64URL)}`,
    note: (secret) => ({ title: `Bot never comes online ${unique()}`, body: `const client = new Client({ intents: [GatewayIntentBits.Guilds] });\nclient.login("${secret}");` }),
  },
  {
    name: "a Telegram bot token in the Bot API's URL, in a curl command",
    field: "body",
    kind: "telegram_bot_token",
    secret: `5123456789:AAH${draw(32, B64URL)}`,
    note: (secret) => ({ title: `sendMessage 401 ${unique()}`, body: `curl -s "https://api.telegram.org/bot${secret}/sendMessage?chat_id=42&text=hi"` }),
  },
  {
    name: "an Azure storage account key in a connection string, in JSON",
    field: "body",
    kind: "azure_storage_key",
    secret: `${draw(86, `${BASE62}+/`)}==`,
    note: (secret) => ({
      title: `Blob upload 403 ${unique()}`,
      body: JSON.stringify({ ConnectionStrings: { Storage: `DefaultEndpointsProtocol=https;AccountName=ordersprod;AccountKey=${secret};EndpointSuffix=core.windows.net` } }, null, 2),
    }),
  },
  {
    name: "a Stripe webhook secret in an .env file",
    field: "body",
    kind: "stripe_webhook_secret",
    secret: `whsec_${draw(32)}`,
    note: (secret) => ({ title: `Stripe signature ${unique()}`, body: `STRIPE_SECRET_KEY=\${STRIPE_KEY}\nSTRIPE_WEBHOOK_SECRET=${secret}\nPORT=8080` }),
  },
  {
    name: "a GitLab runner token in config.toml",
    field: "body",
    kind: "gitlab_runner_token",
    secret: `glrt-${draw(20, B64URL)}`,
    note: (secret) => ({ title: `Runner 403 ${unique()}`, body: `[[runners]]\n  name = "build-1"\n  url = "https://gitlab.corp.net"\n  token = "${secret}"\n  executor = "docker"` }),
  },
  {
    name: "a GitLab deploy token in a docker login command",
    field: "body",
    kind: "gitlab_deploy_token",
    secret: `gldt-${draw(20, B64URL)}`,
    note: (secret) => ({ title: `Registry pull ${unique()}`, body: `docker login -u gitlab+deploy-token-12 -p ${secret} registry.gitlab.com` }),
  },
  {
    name: "a Bitbucket app password in a curl command",
    field: "body",
    kind: "bitbucket_app_password",
    secret: `ATBB${draw(32)}`,
    note: (secret) => ({ title: `Bitbucket API 401 ${unique()}`, body: `curl -u bob:${secret} https://api.bitbucket.org/2.0/repositories/team` }),
  },
];

forEachEngine((engine) => {
  let server: RunningServer;
  let author: Contributor;
  let other: Contributor;

  beforeAll(async () => {
    // A small posts breaker shows that refused notes are not counted; each audit case has a contributor of its own.
    server = await startServer({ engine, env: { POSTS_PER_HOUR: "3", COMMENTS_PER_HOUR: "3", REGISTRATIONS_PER_HOUR: "100" } });
    author = await register(server.url);
    other = await register(server.url);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const post = (json: unknown, key = author.key) => call(server.url, "POST", "/v1/posts", { key, json });
  const postCount = async (key: string) => (await call(server.url, "GET", "/v1/me", { key })).data.post_count as number;

  describe("POST /v1/posts", () => {
    test("a token in the body: 422 secret_detected naming field and kind, nothing stored, never echoed", async () => {
      const token = githubToken();
      const before = await postCount(other.key);
      const res = await post({ title: "CI fails to push", body: `My workflow sets\nGITHUB_TOKEN=${token}\nand git push says 403.` }, other.key);
      const message = expectError(res, 422, "secret_detected");
      expect(res.data.error.field).toBe("body");
      expect(res.data.error.kind).toBe("github_token");
      expect(message).toContain("Remove");
      expect(message).toContain("post again");
      expect(message).toContain("rotate");
      expect(res.text).not.toContain(token);
      expect(await postCount(other.key)).toBe(before);
      expect(await storedIn(server, token)).toEqual([]);
      expect(server.logs()).not.toContain(token);
    });

    test("a credential in the title names the title", async () => {
      const res = await post({ title: `redis://default:Zx8vQ2pL9mWk${unique()}@cache:6379 refuses`, body: "Connection refused." });
      expectError(res, 422, "secret_detected");
      expect(res.data.error.field).toBe("title");
      expect(res.data.error.kind).toBe("connection_string_password");
    });

    test("a credential in a tag names the tags", async () => {
      const res = await post({ title: "Stripe webhook", body: "Signature check fails.", tags: ["stripe", `sk_live_${"a1b2c3d4e5f6g7h8i9j0k1l2"}`] });
      expectError(res, 422, "secret_detected");
      expect(res.data.error.field).toBe("tags");
      expect(res.data.error.kind).toBe("stripe_secret_key_live");
    });

    test("a credential in a tag of a form tags may not take is refused as a secret, never quoted back in a limit's message", async () => {
      for (const tag of ["key=AKIAQWERTYUIOPASDFGH", "xoxb-1234567890-abcdefghij k"]) {
        const res = await post({ title: "A tag of the wrong form", body: "Nothing else here.", tags: [tag] });
        expectError(res, 422, "secret_detected");
        expect(res.data.error.field).toBe("tags");
        expect(res.text.toLowerCase()).not.toContain(tag.toLowerCase().slice(4, 14));
      }
      // A tag of the wrong form without a credential is still named with its value.
      expect(expectError(await post({ title: "t", body: "b", tags: ["a b"] }), 400, "invalid_request")).toContain('"a b"');
    });

    test("kinds the contract names: cloud key, private key block, cairn_ key, connection string, JWT", async () => {
      const cases: [string, string][] = [
        [`aws configure set aws_access_key_id AKIA2E0A8F3B244C${Math.floor(Math.random() * 9000 + 1000)}`, "aws_access_key_id"],
        [`-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABFwAAAAdzc2gtcn\n-----END OPENSSH PRIVATE KEY-----`, "private_key"],
        [`export CAIRN_API_KEY=cairn_${"Ab3".repeat(14)}Z`, "cairn_api_key"],
        ["DATABASE_URL=postgres://app:Hq7xP2vL9m@db.internal:5432/app", "postgresql_connection_string"],
        ["Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI5OTkiLCJyb2xlIjoiYWRtaW4ifQ.abcDEF123ghiJKL456mnoPQR789stu", "jwt"],
      ];
      for (const [body, kind] of cases) {
        const res = await post({ title: `Config ${unique()}`, body });
        expectError(res, 422, "secret_detected");
        expect(res.data.error.kind).toBe(kind);
      }
    });

    describe("what the 2026-11-27 audit found passing: refused, field and kind named, nothing stored", () => {
      for (const audit of AUDIT_CASES) {
        test(audit.name, async () => {
          // A contributor of its own: a case that fails (stored, counted) leaves the others as they were.
          const poster = await register(server.url);
          const res = await post(audit.note(audit.secret), poster.key);
          expectError(res, 422, "secret_detected");
          expect(res.data.error.field).toBe(audit.field);
          expect(res.data.error.kind).toBe(audit.kind);
          expect(res.text).not.toContain(audit.secret);
          expect(res.text.toLowerCase()).not.toContain(audit.secret.toLowerCase());
          expect(await postCount(poster.key)).toBe(0);
          expect(await storedIn(server, audit.secret)).toEqual([]);
          // A tag would be stored lower-cased.
          expect(await storedIn(server, audit.secret.toLowerCase())).toEqual([]);
        });
      }
    });

    test("refused notes are not counted by the posts breaker, and its 429 carries no credential", async () => {
      const poster = await register(server.url);
      const token = githubToken();
      for (let i = 0; i < 5; i++) expectError(await post({ title: `t ${i}`, body: `token ${token}` }, poster.key), 422, "secret_detected");
      for (let i = 0; i < 3; i++) expectStatus(await post({ title: `fine ${unique()}`, body: "no secret here" }, poster.key), 201);
      const limited = await post({ title: "over", body: `token ${token}` }, poster.key);
      // Checked before the breaker: a refused note stays 422 even past the limit.
      expectError(limited, 422, "secret_detected");
      const over = await post({ title: `over ${unique()}`, body: "plain" }, poster.key);
      expectError(over, 429, "rate_limited");
      expect(over.text).not.toContain(token);
    });
  });

  describe("what passes", () => {
    test("AWS's documented example key and prose about secrets are stored", async () => {
      const writer = await register(server.url);
      const aws = await post(
        { title: `AWS CLI config ${unique()}`, body: "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" },
        writer.key,
      );
      expectStatus(aws, 201);
      const prose = await post(
        { title: `Secrets ${unique()}`, body: "Set the password in the env file, rotate the API token monthly, and connect with postgres://user:password@localhost/db." },
        writer.key,
      );
      expectStatus(prose, 201);
    });

    test("AWS's example key as a tag is stored (lower-cased, as every tag)", async () => {
      const writer = await register(server.url);
      const res = await post({ title: `IAM example ${unique()}`, body: "From the AWS docs.", tags: ["aws", "AKIAIOSFODNN7EXAMPLE"] }, writer.key);
      expectStatus(res, 201);
      expect(res.data.tags).toEqual(["aws", "akiaiosfodnn7example"]);
    });

    test("connection strings whose password is a placeholder, and prose about bot tokens, are stored", async () => {
      const texts = [
        "jdbc:postgresql://db.prod-corp.net:5432/app?user=app&password=<password>",
        "DATABASE_URL=postgres://app@db.prod-corp.net/app?password=changeme",
        "REDIS_URL=redis://:${PASS}@redis.prod-corp.net:6379/0",
        "Create the bot with BotFather, keep its token in TELEGRAM_BOT_TOKEN, and never paste a Discord webhook URL or bot token in a note.",
      ];
      // The posts breaker allows 3 notes an hour a contributor.
      const writers = [await register(server.url), await register(server.url)];
      for (const [i, body] of texts.entries()) expectStatus(await post({ title: `Config ${i} ${unique()}`, body }, writers[i % 2].key), 201);
    });
  });

  describe("POST /v1/posts/{id}/comments", () => {
    test("a comment holding a credential: 422 with field body, the comment count unchanged", async () => {
      const note = await createNote(server.url, other.key, { title: `Deploy ${unique()}` });
      const token = githubToken();
      const res = await call(server.url, "POST", `/v1/posts/${note.id}/comments`, { key: author.key, json: { body: `Use ${token} for it` } });
      expectError(res, 422, "secret_detected");
      expect(res.data.error.field).toBe("body");
      expect(res.data.error.kind).toBe("github_token");
      expect(res.text).not.toContain(token);
      const comments = await call(server.url, "GET", `/v1/posts/${note.id}/comments`, { key: author.key });
      expect(comments.data.count).toBe(0);
      expect(await storedIn(server, token)).toEqual([]);
      // A credential the audit found passing, in a comment: refused the same way.
      const webhook = `https://discord.com/api/webhooks/1${draw(18, "0123456789")}/${draw(68, B64URL)}`;
      const refused = await call(server.url, "POST", `/v1/posts/${note.id}/comments`, { key: author.key, json: { body: `Same here with\n${webhook}` } });
      expectError(refused, 422, "secret_detected");
      expect([refused.data.error.field, refused.data.error.kind]).toEqual(["body", "discord_webhook"]);
      expect(await storedIn(server, webhook)).toEqual([]);
      // Not counted by the comments breaker either (limit 3).
      for (let i = 0; i < 3; i++) expectStatus(await call(server.url, "POST", `/v1/posts/${note.id}/comments`, { key: author.key, json: { body: `ok ${i}` } }), 201);
    });
  });

  describe("with an Idempotency-Key", () => {
    test("a refused note or comment is refused before its key is reserved: the same key then serves the clean request once", async () => {
      const poster = await register(server.url);
      const token = githubToken();
      const keyed = (key: string, json: unknown, path = "/v1/posts") => call(server.url, "POST", path, { key: poster.key, json, headers: { "idempotency-key": key } });

      const noteKey = `secret-note-${unique()}`;
      const refused = await keyed(noteKey, { title: "CI push", body: `GITHUB_TOKEN=${token}` });
      expectError(refused, 422, "secret_detected");
      expect(refused.headers.get("idempotent-replayed")).toBeNull();
      // Had the key been reserved (and the refusal stored), another body would be idempotency_key_reused.
      const clean = await keyed(noteKey, { title: `CI push ${unique()}`, body: "Use the workflow's own token." });
      expectStatus(clean, 201);
      const replay = await keyed(noteKey, { title: clean.data.title, body: "Use the workflow's own token." });
      expect(replay.text).toBe(clean.text);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(await postCount(poster.key)).toBe(1);

      const commentKey = `secret-comment-${unique()}`;
      const path = `/v1/posts/${clean.data.id}/comments`;
      expectError(await keyed(commentKey, { body: `try ${token}` }, path), 422, "secret_detected");
      expectStatus(await keyed(commentKey, { body: "Rotate it first." }, path), 201);
      expect(await storedIn(server, token)).toEqual([]);
      expect(server.logs()).not.toContain(token);
    });
  });

  describe("SECRET_SCAN=0", () => {
    let open: RunningServer;
    beforeAll(async () => {
      open = await startServer({ engine, env: { SECRET_SCAN: "0" } });
    });
    afterAll(async () => {
      await open?.stop();
    });

    test("a note holding a token is stored as sent", async () => {
      const writer = await register(open.url);
      const token = githubToken();
      const res = await call(open.url, "POST", "/v1/posts", { key: writer.key, json: { title: "Token", body: `GITHUB_TOKEN=${token}` } });
      expectStatus(res, 201);
      expect(res.data.body).toContain(token);
    });
  });
});
