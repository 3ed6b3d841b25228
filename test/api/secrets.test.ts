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

forEachEngine((engine) => {
  let server: RunningServer;
  let author: Contributor;
  let other: Contributor;

  beforeAll(async () => {
    // A small posts breaker shows that refused notes are not counted.
    server = await startServer({ engine, env: { POSTS_PER_HOUR: "3", COMMENTS_PER_HOUR: "3" } });
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
