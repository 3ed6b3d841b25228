// Security checks of the running server:
// 1. A scripted session touches every route (successes and every error kind);
//    no response, headers or body, contains a registered e-mail, an api_key
//    (except in its own register 201 body), its 12-character prefix, or its
//    SHA-256 in hex, base64 or base64url.
// 2. Everything the server printed during the whole run (LOG_LEVEL=debug, the
//    most it prints) contains no key, prefix, Authorization value or e-mail.
// 3. Keys differing from a real key in the first random character and in the
//    last character take the same path: the same 401, byte for byte, and the
//    same request-log line.
// 4. A 50 MB chunked body from a slow stream gets the contract's 413 after the
//    server has read a bounded amount, and the server's memory does not grow.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { NEVER_SEEN_ID, NO_BREAKERS, adminJson } from "../helpers/api.ts";
import { startServer, type RunningServer } from "../helpers/server.ts";
import { errorShapeProblem, procKb } from "./support.ts";

let server: RunningServer;
let base: string;

interface Registered {
  no: number;
  email: string;
  key: string;
}

interface Exchange {
  label: string;
  method: string;
  path: string;
  status: number;
  /** Response head and body as one searchable text. */
  text: string;
  body: string;
  /** The one secret this response may carry (its own register 201 api_key). */
  allowedKey?: string;
}

const exchanges: Exchange[] = [];
const registered: Registered[] = [];
/** Every Authorization value sent in the run, valid or not. */
const authorizationValues = new Set<string>();
/** E-mail addresses sent in the run (registered or refused). */
const emailsSent = new Set<string>();

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const randomBase62 = (n: number) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => BASE62[b % 62]).join("");
const replaceAt = (s: string, i: number) => {
  const c = s[i] === "A" ? "B" : "A";
  return s.slice(0, i) + c + s.slice(i + 1);
};

/** One request, recorded with the whole response (status line, headers, body). */
async function send(
  label: string,
  method: string,
  path: string,
  options: { key?: string; authorization?: string; json?: unknown; raw?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  const authorization = options.authorization ?? (options.key ? `Bearer ${options.key}` : undefined);
  if (authorization !== undefined) {
    headers.authorization = authorization;
    authorizationValues.add(authorization);
  }
  let body: string | undefined;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers["content-type"] ??= "application/json";
  } else if (options.raw !== undefined) body = options.raw;
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  const head = [`${res.status} ${res.statusText}`, ...[...res.headers.entries()].map(([k, v]) => `${k}: ${v}`)].join("\n");
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {}
  const exchange: Exchange = { label, method, path, status: res.status, text: `${head}\n\n${text}`, body: text };
  exchanges.push(exchange);
  return { status: res.status, data, text, headers: res.headers, exchange };
}

async function registerOne(email: string): Promise<Registered> {
  emailsSent.add(email);
  const res = await send(`register ${email}`, "POST", "/v1/register", { json: { email } });
  expect(res.status).toBe(201);
  res.exchange.allowedKey = res.data.api_key;
  const who = { no: res.data.contributor_no, email, key: res.data.api_key };
  registered.push(who);
  return who;
}

/** Every form in which a key could leak: itself, its lookup prefix, its digest in hex and base64. */
function keyForms(key: string): string[] {
  const digest = new Bun.CryptoHasher("sha256").update(key).digest();
  const hex = digest.toString("hex");
  const b64 = digest.toString("base64");
  return [key, key.slice(0, 12), hex, hex.toUpperCase(), b64, b64.replace(/=+$/, ""), digest.toString("base64url")];
}

function emailForms(email: string): string[] {
  return [email, email.toLowerCase(), email.trim(), encodeURIComponent(email)];
}

beforeAll(async () => {
  server = await startServer({ env: { ...NO_BREAKERS, LOG_LEVEL: "debug" } });
  base = server.url;
});

afterAll(async () => {
  await server?.stop();
});

describe("a scripted session over every route leaks nothing", () => {
  let alice: Registered;
  let bob: Registered;
  let carol: Registered;

  test("the session", async () => {
    alice = await registerOne(`Alice.Secret.${randomBase62(8)}@example.org`);
    bob = await registerOne(`bob-${randomBase62(8)}@mail.example.com`);
    carol = await registerOne(`  carol+${randomBase62(8)}@example.net  `);
    // The same address again (allowed or not, never echoed), and refused addresses.
    const again = await send("register the same address", "POST", "/v1/register", { json: { email: bob.email } });
    if (again.status === 201) again.exchange.allowedKey = again.data.api_key;
    const tooLong = `${"x".repeat(250)}${alice.email}`;
    emailsSent.add(tooLong);
    expect((await send("register too long", "POST", "/v1/register", { json: { email: tooLong } })).status).toBe(400);
    expect((await send("register wrong type", "POST", "/v1/register", { json: { email: [alice.email] } })).status).toBe(400);

    for (const path of ["/", "/docs", "/v1/openapi.json", "/v1/healthz", "/v1/readyz"]) {
      expect((await send(`public ${path}`, "GET", path)).status).toBe(200);
    }
    for (const who of [alice, bob, carol]) {
      expect((await send("me", "GET", "/v1/me", { key: who.key })).status).toBe(200);
    }

    const note = await send("create", "POST", "/v1/posts", {
      key: alice.key,
      json: { title: "Leak check note", body: "Nothing secret here, only words about sqlite wal.", tags: ["security"] },
    });
    expect(note.status).toBe(201);
    const id = note.data.id as string;
    expect((await send("duplicate", "POST", "/v1/posts", { key: alice.key, json: { title: "Leak check note", body: "Nothing secret here, only words about sqlite wal.", tags: ["security"] } })).status).toBe(409);
    expect((await send("create invalid", "POST", "/v1/posts", { key: alice.key, json: { title: "", body: 5 } })).status).toBe(400);
    const bobNote = await send("create bob", "POST", "/v1/posts", { key: bob.key, json: { title: "Bob's note", body: "Bob writes about wal checkpoints." } });
    expect(bobNote.status).toBe(201);

    expect((await send("get", "GET", `/v1/posts/${id}`, { key: bob.key })).status).toBe(200);
    expect((await send("get 404", "GET", `/v1/posts/${NEVER_SEEN_ID}`, { key: bob.key })).status).toBe(404);
    expect((await send("get 400", "GET", "/v1/posts/not-a-uuid", { key: bob.key })).status).toBe(400);
    expect((await send("comment", "POST", `/v1/posts/${id}/comments`, { key: bob.key, json: { body: "A comment from bob." } })).status).toBe(201);
    expect((await send("comment invalid", "POST", `/v1/posts/${id}/comments`, { key: bob.key, json: { body: "" } })).status).toBe(400);
    expect((await send("comments", "GET", `/v1/posts/${id}/comments`, { key: carol.key })).status).toBe(200);
    expect((await send("vote up", "POST", `/v1/posts/${id}/vote`, { key: bob.key, json: { vote: "up" } })).status).toBe(200);
    expect((await send("vote down", "POST", `/v1/posts/${id}/vote`, { key: carol.key, json: { vote: "down" } })).status).toBe(200);
    expect((await send("vote none", "POST", `/v1/posts/${id}/vote`, { key: carol.key, json: { vote: "none" } })).status).toBe(200);
    expect((await send("vote own", "POST", `/v1/posts/${id}/vote`, { key: alice.key, json: { vote: "up" } })).status).toBe(403);
    expect((await send("vote invalid", "POST", `/v1/posts/${id}/vote`, { key: bob.key, json: { vote: "sideways" } })).status).toBe(400);
    expect((await send("search", "POST", "/v1/search", { key: carol.key, json: { query: "sqlite wal" } })).status).toBe(200);
    expect((await send("search extra field", "POST", "/v1/search", { key: carol.key, json: { query: "wal", limit: 50 } })).status).toBe(400);
    expect((await send("public json", "GET", `/v1/public/posts/${id}`)).status).toBe(200);
    expect((await send("public html", "GET", `/v1/public/posts/${id}`, { headers: { accept: "text/html" } })).status).toBe(200);
    expect((await send("public 404", "GET", `/v1/public/posts/${NEVER_SEEN_ID}`)).status).toBe(404);
    expect((await send("web event", "POST", "/v1/web/events", { json: { event: "page_view", post_id: id } })).status).toBe(202);
    expect((await send("web event unknown", "POST", "/v1/web/events", { json: { event: "steal_keys" } })).status).toBe(400);
    expect((await send("delete not author", "DELETE", `/v1/posts/${id}`, { key: bob.key })).status).toBe(403);

    // Every kind of refused key.
    const unauthorized = [
      ["no key", undefined],
      ["garbage", `Bearer ${randomBase62(50)}`],
      ["wrong scheme", `Basic ${alice.key}`],
      ["key with junk", `Bearer ${alice.key} ${bob.key}`],
      ["unknown key", `Bearer cairn_${randomBase62(43)}`],
      ["alice's prefix, other tail", `Bearer ${alice.key.slice(0, 12)}${randomBase62(37)}`],
      ["alice's key, last char changed", `Bearer ${replaceAt(alice.key, alice.key.length - 1)}`],
      ["alice's key, one more char", `Bearer ${alice.key}Z`],
      ["lower-case bearer, truncated key", `bearer ${alice.key.slice(0, -5)}`],
    ] as const;
    for (const [label, authorization] of unauthorized) {
      const res = await send(label, "GET", "/v1/me", { authorization });
      expect(res.status).toBe(401);
    }
    expect((await send("unknown route", "GET", "/v1/keys", { key: alice.key })).status).toBe(404);
    expect((await send("415", "POST", "/v1/posts", { key: alice.key, raw: "title=x", headers: { "content-type": "application/x-www-form-urlencoded" } })).status).toBe(415);
    expect((await send("413", "POST", "/v1/posts", { key: alice.key, json: { title: "big", body: "x".repeat(70_000) } })).status).toBe(413);
    expect((await send("bad json", "POST", "/v1/posts", { key: alice.key, raw: "{\"title\":", headers: { "content-type": "application/json" } })).status).toBe(400);

    // A revoked key: same 401, and nothing echoed.
    await adminJson(server, "revoke", String(carol.no));
    expect((await send("revoked", "GET", "/v1/me", { key: carol.key })).status).toBe(401);
    await adminJson(server, "activate", String(carol.no));

    expect((await send("delete", "DELETE", `/v1/posts/${id}`, { key: alice.key })).status).toBe(200);
    expect((await send("delete again", "DELETE", `/v1/posts/${id}`, { key: alice.key })).status).toBe(404);
    expect((await send("me after", "GET", "/v1/me", { key: alice.key })).status).toBe(200);
  });

  test("no response carries an e-mail, a key, a prefix or a key digest (except the own key at registration)", () => {
    expect(exchanges.length).toBeGreaterThan(40);
    const leaks: string[] = [];
    for (const exchange of exchanges) {
      for (const email of emailsSent) {
        for (const form of emailForms(email)) {
          if (form.length >= 3 && exchange.text.toLowerCase().includes(form.toLowerCase())) leaks.push(`${exchange.label}: e-mail ${form}`);
        }
      }
      for (const who of registered) {
        const own = exchange.allowedKey === who.key;
        // The register 201 body holds the key itself (and so its prefix); it must not hold the digest.
        const text = own ? exchange.text.replace(who.key, "<own key>") : exchange.text;
        for (const form of keyForms(who.key)) {
          if (text.includes(form)) leaks.push(`${exchange.label}: key form ${form.slice(0, 14)}… of contributor ${who.no}`);
        }
      }
    }
    expect(leaks).toEqual([]);
    // Exactly one response per registration carries a key, and only its own.
    const carriers = exchanges.filter((e) => /cairn_[0-9A-Za-z]{40,}/.test(e.text));
    expect(carriers.every((e) => e.allowedKey !== undefined && e.body.includes(e.allowedKey))).toBe(true);
  });

  test("a key differing in its first random character and one differing in its last take the same path", async () => {
    // Code review (src/core/service.ts `authenticate`, src/core/keys.ts `digestsEqual`):
    // the token's shape is checked, its SHA-256 is computed and looked up among the
    // digests of keys already found valid (src/core/known-keys.ts: a Map keyed by the
    // digest, so no byte of any key is compared; neither wrong key is there, as
    // failures are never remembered). On that miss the candidates sharing its
    // 12-character prefix are loaded, and EVERY candidate's stored digest is compared with
    // crypto.timingSafeEqual (32 bytes against 32 bytes) with no break or early return;
    // the answer for every failure is the same unauthorized() error. Comparing digests,
    // not keys, means no byte of the key is compared with a secret directly.
    // A first-character difference changes the prefix, so the candidate list is empty;
    // a last-character difference keeps the prefix, so the real key's row is a candidate
    // and its digest is compared (and differs). test/unit/auth.test.ts checks with a
    // counting store that all same-prefix candidates are compared, whichever matches.
    // Here, black-box: both answers must be identical in status, headers and body, and
    // the request-log lines identical but for the request id and duration.
    const who = registered[0];
    const first = replaceAt(who.key, 6);
    const last = replaceAt(who.key, who.key.length - 1);
    expect(first.slice(0, 12)).not.toBe(who.key.slice(0, 12));
    expect(last.slice(0, 12)).toBe(who.key.slice(0, 12));
    const answers = [];
    for (const [name, key] of [
      ["first", first],
      ["last", last],
    ] as const) {
      const requestId = `sec-${name}-${randomBase62(12)}`;
      const res = await send(`timing ${name}`, "GET", "/v1/me", { key, headers: { "x-request-id": requestId } });
      const headers = Object.fromEntries([...res.headers.entries()].filter(([k]) => !["date", "x-request-id"].includes(k)));
      answers.push({ status: res.status, headers, body: res.text, requestId });
    }
    expect(answers[0].status).toBe(401);
    expect(answers[1].status).toBe(401);
    expect(answers[0].body).toBe(answers[1].body);
    expect(answers[0].headers).toEqual(answers[1].headers);
    expect(answers[0].headers["www-authenticate"]).toMatch(/^Bearer/);
    expect(errorShapeProblem(401, answers[0].headers["content-type"], answers[0].body)).toBeNull();

    // The request-log lines (flushed every 100 ms) say the same thing.
    await Bun.sleep(300);
    const lineOf = (id: string) => {
      const line = server.logs().split("\n").find((l) => l.includes(id));
      expect(line).toBeDefined();
      const { time, requestId, ms, ...rest } = JSON.parse(line!);
      return rest;
    };
    expect(lineOf(answers[0].requestId)).toEqual(lineOf(answers[1].requestId));
    expect(lineOf(answers[0].requestId).status).toBe(401);
  });
});

/** Streams `total` bytes as a chunked body, `chunk` bytes every `pauseMs`, until the server answers. */
function slowChunkedUpload(path: string, headers: Record<string, string>, total: number, chunk: number, pauseMs: number) {
  const url = new URL(base);
  return new Promise<{ status: number; contentType: string | null; body: string; written: number; ms: number }>((resolve, reject) => {
    const started = performance.now();
    let written = 0;
    let answered = false;
    let data = Buffer.alloc(0);
    const socket = connect(Number(url.port), url.hostname);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer after ${written} bytes`));
    }, 60_000);
    const tryParse = () => {
      const end = data.indexOf("\r\n\r\n");
      if (end < 0) return;
      const head = data.subarray(0, end).toString("latin1").split("\r\n");
      const fields: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const colon = line.indexOf(":");
        fields[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(fields["content-length"] ?? NaN);
      const rest = data.subarray(end + 4);
      if (!Number.isFinite(length) || rest.length < length) return;
      answered = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({
        status: Number(head[0].split(" ")[1]),
        contentType: fields["content-type"] ?? null,
        body: rest.subarray(0, length).toString("utf8"),
        written,
        ms: performance.now() - started,
      });
    };
    socket.on("data", (piece) => {
      data = Buffer.concat([data, Buffer.from(piece)]);
      tryParse();
    });
    socket.on("error", () => {}); // EPIPE/ECONNRESET once the server has answered and closed
    socket.on("close", () => {
      if (!answered) {
        clearTimeout(timer);
        reject(new Error(`closed without an answer after ${written} bytes: ${data.toString("latin1").slice(0, 200)}`));
      }
    });
    socket.on("connect", async () => {
      const lines = [`POST ${path} HTTP/1.1`, `Host: ${url.host}`, "Transfer-Encoding: chunked"];
      for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
      socket.write(lines.join("\r\n") + "\r\n\r\n");
      // A JSON object opening, then an endless string: valid JSON up to the limit.
      const opening = Buffer.from('{"title":"big","body":"');
      socket.write(`${opening.length.toString(16)}\r\n`);
      socket.write(opening);
      socket.write("\r\n");
      written += opening.length;
      const payload = Buffer.alloc(chunk, "x");
      const frame = Buffer.concat([Buffer.from(`${chunk.toString(16)}\r\n`), payload, Buffer.from("\r\n")]);
      while (!answered && written < total && !socket.destroyed) {
        const flushed = socket.write(frame);
        written += chunk;
        if (!flushed) await new Promise<void>((done) => socket.once("drain", done).once("close", done));
        await Bun.sleep(pauseMs);
      }
    });
  });
}

describe("a 50 MB chunked body from a slow stream", () => {
  test("is refused with the contract's 413 after a bounded read; the server's memory does not grow", async () => {
    const who = registered[0] ?? { key: "" };
    const pid = server.proc.pid;
    const before = { rss: procKb(pid, "VmRSS"), hwm: procKb(pid, "VmHWM") };
    const TOTAL = 50 * 1024 * 1024;
    // 16 KiB every 2 ms: about 8 MB/s, so the whole body would take over 6 s per stream.
    const uploads = await Promise.all(
      [
        ["/v1/posts", { "Content-Type": "application/json", Authorization: `Bearer ${who.key}` }],
        ["/v1/posts", { "Content-Type": "application/json", Authorization: `Bearer ${who.key}` }],
        ["/v1/register", { "Content-Type": "application/json" }],
        ["/v1/search", { "Content-Type": "application/json", Authorization: `Bearer ${who.key}` }],
      ].map(([path, headers]) => slowChunkedUpload(path as string, headers as Record<string, string>, TOTAL, 16 * 1024, 2)),
    );
    const after = { rss: procKb(pid, "VmRSS"), hwm: procKb(pid, "VmHWM") };
    console.log(
      `413 after ${uploads.map((u) => `${Math.round(u.written / 1024)} KiB/${Math.round(u.ms)} ms`).join(", ")}; ` +
        `server RSS ${Math.round(before.rss / 1024)} → ${Math.round(after.rss / 1024)} MB, peak ${Math.round(before.hwm / 1024)} → ${Math.round(after.hwm / 1024)} MB`,
    );
    for (const upload of uploads) {
      expect(upload.status).toBe(413);
      expect(errorShapeProblem(413, upload.contentType, upload.body)).toBeNull();
      expect(JSON.parse(upload.body).error.code).toBe("payload_too_large");
      // Generous on a busy 2-core machine: the limit is 64 KiB, the body 50 MB.
      expect(upload.written).toBeLessThan(8 * 1024 * 1024);
    }
    // Four streams of 50 MB held in memory would add 200 MB (64 MB even if Bun cut them at
    // its own 16 MiB ceiling); the peak resident size must not move by anything like that.
    expect(after.hwm - before.hwm).toBeLessThan(24 * 1024);
    expect(after.rss - before.rss).toBeLessThan(24 * 1024);
    expect((await fetch(`${base}/v1/healthz`)).status).toBe(200);
  }, 60_000);
});

describe("the logs of the whole run", () => {
  test("hold no key, prefix, digest, Authorization value or e-mail", async () => {
    // Stop first: the logger flushes on shutdown, so every line is in.
    await server.stop();
    const logs = server.logs();
    expect(logs).toContain('"msg":"request"');
    const found: string[] = [];
    const lower = logs.toLowerCase();
    for (const email of emailsSent) {
      for (const form of emailForms(email)) if (form.length >= 3 && lower.includes(form.toLowerCase())) found.push(`e-mail ${form}`);
    }
    for (const who of registered) for (const form of keyForms(who.key)) if (logs.includes(form)) found.push(`key form ${form.slice(0, 14)}…`);
    for (const value of authorizationValues) {
      if (logs.includes(value)) found.push(`authorization ${value.slice(0, 14)}…`);
      const token = value.split(/\s+/)[1];
      if (token && token.length >= 12 && logs.includes(token)) found.push(`token ${token.slice(0, 14)}…`);
    }
    expect(found).toEqual([]);
    expect(logs).not.toMatch(/cairn_[0-9A-Za-z]{6}/);
    expect(lower).not.toContain("bearer");
  });
});
