// Hostile input, property-based (fast-check), against ONE running server:
// every route of the contract with every method, plus random paths and methods;
// bodies of random JSON values, wrong types, huge strings, deep nesting, random
// unicode (lone surrogates, NUL, astral), raw invalid UTF-8; random, missing and
// garbage Authorization headers (and the attacker's own valid key); random
// Content-Types; and over raw TCP, hostile headers: Host (malformed, implausible,
// missing, non-ASCII), Accept (any case, q values, garbage), X-Forwarded-For
// (the server trusts a proxy here: junk, IPv4, IPv6, lists, 12 KB values) and
// oversized headers (up to 40 KB).
//
// Invariants, checked on every response:
// - never a 5xx, never a hang (15 s per request);
// - every non-2xx answer (but HEAD, which has no body) is exactly
//   {"error": {"code", "message"}} with a code of the contract's table matching the status;
//   a 401 carries `WWW-Authenticate: Bearer`; the one exception is headers
//   over Bun's 16 KB limit, answered 431 by Bun itself before the app runs,
//   without a body, and an HTTP/1.1 request without Host, which Bun answers
//   400 without a body (docs/reliability.md);
// and at the end:
// - the process is alive (healthz 200, exitCode null) and logged no error line;
// - no other contributor's data changed: the victim's notes, comments, votes
//   and /v1/me are as before, except for exactly what the attacker's own
//   successful comments and votes account for.
//
// Size: FUZZ_SCALE=1 (default) runs about 60 s on a 2-core machine; each
// property also stops at its time budget. FUZZ_SEED=n replays a run.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { join } from "node:path";
import fc from "fast-check";
import { NEVER_SEEN_ID, NO_BREAKERS, call, createNote, register, type Contributor } from "../helpers/api.ts";
import { startServer, type RunningServer } from "../helpers/server.ts";
import { errorAnswerProblem, errorShapeProblem } from "./support.ts";

const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

let server: RunningServer;
let base: string;
let victim: Contributor;
let bystander: Contributor;
let attacker: Contributor;
let victimNotes: string[] = [];
let bystanderNote: string;
let attackerNotes: string[] = [];

/** What the attacker's own successful requests changed on others' notes. */
const attackerComments = new Map<string, number>();
const attackerVotes = new Map<string, number>();
const violations: string[] = [];
const statusCounts = new Map<string, number>();
let requests = 0;
/** Of which over raw TCP with hostile headers, and how many of those Bun answered 431 itself. */
let headerRequests = 0;
let headerTooLarge = 0;

interface Snapshot {
  notes: Record<string, any>;
  comments: Record<string, any[]>;
  me: any;
}

async function snapshot(): Promise<Snapshot> {
  const notes: Record<string, any> = {};
  const comments: Record<string, any[]> = {};
  for (const id of [...victimNotes, bystanderNote]) {
    const note = await call(base, "GET", `/v1/posts/${id}`, { key: victim.key });
    expect(note.status).toBe(200);
    notes[id] = note.data;
    const list = await call(base, "GET", `/v1/posts/${id}/comments`, { key: victim.key });
    expect(list.status).toBe(200);
    comments[id] = list.data.comments;
  }
  const me = await call(base, "GET", "/v1/me", { key: victim.key });
  expect(me.status).toBe(200);
  return { notes, comments, me: me.data };
}

let before: Snapshot;
let beforeRows: Record<string, unknown[]>;

/**
 * The victim's and the bystander's rows straight from the database (a second,
 * read-only connection beside the server's): their contributor rows (e-mail,
 * key prefix and digest, active flag), notes, comments and votes.
 */
function rows(): Record<string, unknown[]> {
  const db = new Database(join(server.dataDir, "cairn.db"), { readonly: true });
  try {
    const who = [victim.no, bystander.no];
    const q = (sql: string) => db.query(sql).all(...who) as unknown[];
    return {
      contributors: q("SELECT contributor_no, email, key_prefix, hex(key_digest) AS digest, active, created_at FROM contributors WHERE contributor_no IN (?, ?) ORDER BY 1"),
      posts: q("SELECT id, contributor_no, title, body, tags, created_at FROM posts WHERE contributor_no IN (?, ?) ORDER BY pk"),
      comments: q("SELECT c.pk, p.id, c.contributor_no, c.body, c.created_at FROM comments c JOIN posts p ON p.pk = c.post_pk WHERE c.contributor_no IN (?, ?) ORDER BY c.pk"),
      votes: q("SELECT p.id, v.contributor_no, v.value, v.created_at FROM votes v JOIN posts p ON p.pk = v.post_pk WHERE v.contributor_no IN (?, ?) ORDER BY 1, 2"),
    };
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  // TRUST_PROXY=1: X-Forwarded-For is read, so its fuzzing reaches the code.
  server = await startServer({ env: { ...NO_BREAKERS, LOG_LEVEL: "info", TRUST_PROXY: "1" } });
  base = server.url;
  victim = await register(base);
  bystander = await register(base);
  attacker = await register(base);
  for (let i = 0; i < 3; i++) {
    victimNotes.push((await createNote(base, victim.key, { title: `Victim note ${i}`, body: `Victim body ${i} about sqlite`, tags: ["victim"] })).id);
  }
  bystanderNote = (await createNote(base, bystander.key, { title: "Bystander note", body: "Bystander body" })).id;
  for (let i = 0; i < 2; i++) attackerNotes.push((await createNote(base, attacker.key, { title: `Attacker note ${i}`, body: "Attacker body" })).id);
  // The victim's own activity: comments on its note and the bystander's, a vote on the bystander's.
  const ok = (res: { status: number; text: string }, status: number) => {
    if (res.status !== status) throw new Error(`setup: ${res.status} ${res.text}`);
  };
  ok(await call(base, "POST", `/v1/posts/${victimNotes[0]}/comments`, { key: victim.key, json: { body: "Victim's own comment" } }), 201);
  ok(await call(base, "POST", `/v1/posts/${bystanderNote}/comments`, { key: victim.key, json: { body: "Victim's comment on the bystander" } }), 201);
  ok(await call(base, "POST", `/v1/posts/${bystanderNote}/vote`, { key: victim.key, json: { vote: "up" } }), 200);
  ok(await call(base, "POST", `/v1/posts/${victimNotes[1]}/vote`, { key: bystander.key, json: { vote: "down" } }), 200);
  before = await snapshot();
  beforeRows = rows();
});

afterAll(async () => {
  await server?.stop();
});

// ---------- arbitraries ----------

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const base62 = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(...BASE62.split("")), minLength: min, maxLength: max });
/** Header-safe text (fetch refuses CR, LF, NUL and code points above 0xFF in header values). */
const headerText = fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c === 0x7f ? 0x20 : c)), maxLength: 120 });

const authorization = fc.oneof(
  { arbitrary: fc.constant<string | undefined>(undefined), weight: 3 },
  { arbitrary: fc.constant(undefined).map(() => `Bearer ${attacker.key}`), weight: 10 },
  headerText,
  headerText.map((s) => `Bearer ${s}`),
  base62(40, 70).map((s) => `Bearer cairn_${s}`),
  // The victim's lookup prefix with a random tail: a collision attempt.
  base62(37, 37).map((s) => `Bearer ${victim.key.slice(0, 12)}${s}`),
  fc.nat(48).map((i) => {
    const key = attacker.key;
    const at = 6 + (i % (key.length - 6));
    return `Bearer ${key.slice(0, at)}${key[at] === "x" ? "y" : "x"}${key.slice(at + 1)}`;
  }),
  fc.constantFrom("", "Bearer", "Bearer ", "bearer", "Basic dXNlcjpwYXNz", "Token abc", "Bearer cairn_", "Bearer null").map((s) => s),
  fc.constant(undefined).map(() => `bearer   ${attacker.key}   `),
  fc.constant(undefined).map(() => `Bearer ${attacker.key} ${attacker.key}`),
);

const contentType = fc.oneof(
  { arbitrary: fc.constant("application/json"), weight: 12 },
  fc.constantFrom(
    undefined,
    "application/json; charset=utf-8",
    "APPLICATION/JSON",
    "application/vnd.cairn+json",
    "application/json, text/plain",
    "text/plain",
    "text/html",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=----x",
    "application/xml",
    "application/octet-stream",
    "json",
    ";",
  ),
  headerText,
);

/** Strings that stress the text rules: unicode of every kind, NUL, lone surrogates, sizes at and past limits. */
const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.string({ unit: "grapheme", maxLength: 60 }),
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "a\u0000b",
    "\ud800",
    "\udfff",
    "x\ud83d",
    "\ud83d\ude00",
    "\u202e\u200b\ufeff",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "\"*:-NEAR AND OR NOT ()^",
    "'; DROP TABLE posts; --",
    "<script>alert(1)</script>",
    "%00%2e%2e/",
    "${jndi:ldap://x}",
    "\\u0000",
  ),
  fc.nat(4).map((i) => "é".repeat([199, 200, 201, 5001, 20_001][i])),
  fc.nat(3).map((i) => "x".repeat([20_000, 20_001, 40_000, 70_000][i])),
  fc.integer({ min: 1, max: 3000 }).map((n) => "\u0000".repeat(n)),
  fc.integer({ min: 1, max: 3000 }).map((n) => "\ud800".repeat(n)),
);

const deepArray = fc.integer({ min: 10, max: 5000 }).map((depth) => {
  let value: unknown = "bottom";
  for (let i = 0; i < depth; i++) value = [value];
  return value;
});
const deepObject = fc.integer({ min: 10, max: 3000 }).map((depth) => {
  let value: unknown = "bottom";
  for (let i = 0; i < depth; i++) value = { title: value, body: value === "bottom" ? "x" : undefined };
  return value;
});

const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: hostileString, weight: 5 },
  fc.jsonValue({ maxDepth: 3, stringUnit: "binary" }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(hostileString, { maxLength: 12 }),
  fc.array(fc.constantFrom("ok", "x", "a-b", "C++", "#tag", ""), { maxLength: 12 }),
  fc.dictionary(fc.string({ maxLength: 8 }), hostileString, { maxKeys: 4 }),
  deepArray,
);

/** Request objects shaped like each route's body, with any field possibly wrong. */
const maybe = (arb: fc.Arbitrary<unknown>) => fc.option(arb, { nil: undefined, freq: 4 });
const plain = (max: number) => fc.string({ unit: "grapheme", minLength: 1, maxLength: max });
const field = (valid: fc.Arbitrary<unknown>) => fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: hostileString, weight: 2 }, anyValue);
const extra = fc.option(fc.record({ extra: anyValue }), { nil: {}, freq: 3 });
const realId = fc.constant(undefined).chain(() => fc.constantFrom(...victimNotes, bystanderNote, ...attackerNotes));
const routeBodies: Record<string, fc.Arbitrary<unknown>> = {
  "/v1/register": fc.tuple(fc.record({ email: field(fc.emailAddress()) }, { requiredKeys: [] }), extra).map(([a, b]) => ({ ...a, ...b })),
  "/v1/posts": fc
    .tuple(
      fc.record(
        {
          title: field(plain(60)),
          body: field(plain(300)),
          tags: field(fc.array(fc.oneof(fc.stringMatching(/^[a-z0-9][a-z0-9._+#-]{0,31}$/), fc.string({ maxLength: 40 })), { maxLength: 10 })),
        },
        { requiredKeys: [] },
      ),
      extra,
    )
    .map(([a, b]) => ({ ...a, ...b })),
  "/v1/posts/{id}/comments": fc.tuple(fc.record({ body: field(plain(200)) }, { requiredKeys: [] }), extra).map(([a, b]) => ({ ...a, ...b })),
  "/v1/posts/{id}/vote": fc.tuple(fc.record({ vote: field(fc.constantFrom("up", "down", "none", "UP", "", "sideways", 1, -1, true, null)) }, { requiredKeys: [] }), extra).map(([a, b]) => ({ ...a, ...b })),
  "/v1/search": fc.oneof(
    fc.record({ query: field(plain(80)) }, { requiredKeys: [] }),
    fc.record({ query: field(plain(80)), limit: maybe(anyValue), extra: anyValue }, { requiredKeys: ["query"] }),
  ),
  "/v1/web/events": fc.record(
    {
      event: field(fc.constantFrom("page_view", "copy_link", "copy_command", "PAGE_VIEW")),
      post_id: field(fc.oneof(realId, fc.uuid())),
      path: field(plain(100)),
      extra: anyValue,
    },
    { requiredKeys: [] },
  ),
};
const anyShapedBody = fc.oneof(...Object.values(routeBodies));

type Body = { kind: "none" } | { kind: "json"; value: unknown } | { kind: "text"; text: string } | { kind: "bytes"; bytes: Uint8Array };

/** Any body at all; `shaped` (the route's own body shape) gets most of the weight when given. */
const bodyFor = (shaped: fc.Arbitrary<unknown>): fc.Arbitrary<Body> =>
  fc.oneof(
    { arbitrary: fc.constant<Body>({ kind: "none" }), weight: 2 },
    { arbitrary: shaped.map((value): Body => ({ kind: "json", value })), weight: 12 },
    { arbitrary: anyShapedBody.map((value): Body => ({ kind: "json", value })), weight: 2 },
    { arbitrary: anyValue.map((value): Body => ({ kind: "json", value })), weight: 3 },
    fc.oneof(deepArray, deepObject).map((value): Body => ({ kind: "json", value })),
    // Deep nesting past what a recursive parser survives, and unbalanced.
    fc.integer({ min: 1000, max: 32_000 }).map((d): Body => ({ kind: "text", text: "[".repeat(d) + "]".repeat(d) })),
    fc.integer({ min: 1000, max: 60_000 }).map((d): Body => ({ kind: "text", text: '{"a":'.repeat(Math.floor(d / 5)) })),
    fc.string({ maxLength: 200 }).map((text): Body => ({ kind: "text", text })),
    fc.constantFrom("", "null", "[]", "{}", '""', "0", "true", "{", "}", '{"title":}', "\u0000", '{"title":"a","title":5}', '{"__proto__":{"admin":true},"title":"p","body":"q"}').map((text): Body => ({ kind: "text", text })),
    fc.uint8Array({ maxLength: 600 }).map((bytes): Body => ({ kind: "bytes", bytes })),
    // Invalid UTF-8 (a CESU-encoded surrogate, a truncated sequence, NUL) inside otherwise valid JSON.
    fc.constantFrom([0xed, 0xa0, 0x80], [0xc3], [0xff, 0xfe], [0xf4, 0x90, 0x80, 0x80], [0x00]).map((junk): Body => {
      const head = new TextEncoder().encode('{"title":"bad ');
      const tail = new TextEncoder().encode(' bytes","body":"b","query":"q ');
      const end = new TextEncoder().encode('","email":"a@b.c","vote":"up","event":"page_view"}');
      return { kind: "bytes", bytes: new Uint8Array([...head, ...junk, ...tail, ...junk, ...end]) };
    }),
  );

const ROUTES: [string, string][] = [
  ["POST", "/v1/register"],
  ["GET", "/v1/me"],
  ["POST", "/v1/posts"],
  ["GET", "/v1/posts/{id}"],
  ["DELETE", "/v1/posts/{id}"],
  ["GET", "/v1/posts/{id}/comments"],
  ["POST", "/v1/posts/{id}/comments"],
  ["POST", "/v1/posts/{id}/vote"],
  ["POST", "/v1/search"],
  ["GET", "/v1/public/posts/{id}"],
  ["POST", "/v1/web/events"],
  ["GET", "/v1/healthz"],
  ["GET", "/v1/readyz"],
  ["GET", "/"],
  ["GET", "/docs"],
  ["GET", "/v1/openapi.json"],
];
// Methods Bun's fetch sends as written (it sends unknown tokens such as FOO as GET,
// and Bun's server closes the connection on them before the app sees anything).
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "PROPFIND", "MKCOL", "COPY", "MOVE", "PURGE", "REPORT", "SEARCH", "QUERY", "M-SEARCH", "delete", "patch"];

const postId = fc.oneof(
  { arbitrary: fc.constant(undefined).map(() => victimNotes[0]), weight: 3 },
  { arbitrary: realId.map((id) => id as string), weight: 6 },
  fc.constant(NEVER_SEEN_ID),
  fc.uuid(),
  fc.constant(undefined).map(() => victimNotes[0].toUpperCase()),
  fc.constant(undefined).map(() => `${victimNotes[0]}x`),
  fc.constant(undefined).map(() => victimNotes[0].replaceAll("-", "")),
  fc.constant(undefined).map(() => `{${victimNotes[0]}}`),
  fc.constant(undefined).map(() => encodeURIComponent(` ${victimNotes[0]}`)),
  fc.constantFrom("", "..", "%00", "%2e%2e%2f", "null", "undefined", "0", "-1", "%ZZ", "a%2Fb", "ééé", "%F0%9F%98%80", "%ED%A0%80"),
  fc.string({ unit: "binary", maxLength: 40 }).map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, "?"))),
);
const suffix = fc.oneof(
  { arbitrary: fc.constant(""), weight: 8 },
  fc.constantFrom("/", "?", "?limit=1000", "?x=%00", "//", "/.", "/..", "?query=a&query=b"),
  fc.webQueryParameters().map((q) => `?${q}`),
);

interface Req {
  [fc.toStringMethod]?: () => string;
  method: string;
  path: string;
  authorization?: string;
  contentType?: string;
  body: Body;
  accept?: string;
}

const routeRequest: fc.Arbitrary<Req> = fc
  .constantFrom(...ROUTES)
  .chain((route) =>
    fc.record({
      route: fc.constant(route),
      // Mostly the route's own method; one time in five another one.
      otherMethod: fc.oneof({ arbitrary: fc.constant(null), weight: 4 }, fc.constantFrom(...METHODS)),
      id: postId,
      suffix,
      authorization,
      contentType,
      body: bodyFor(routeBodies[route[1]] ?? anyShapedBody),
      accept: fc.option(fc.constantFrom("text/html", "*/*", "application/json", "text/html;q=0.1, application/json"), { nil: undefined, freq: 3 }),
    }),
  )
  .map(({ route, otherMethod, id, suffix, authorization, contentType, body, accept }) => ({
    method: otherMethod ?? route[0],
    path: route[1].replace("{id}", id) + suffix,
    authorization,
    contentType,
    body,
    accept,
  }))
  .map(withToString);

const segment = fc.oneof(
  fc.webSegment(),
  fc.constantFrom("v1", "posts", "public", "web", "events", "me", "search", "register", "..", ".", "%2e%2e", "v2", "admin", "openapi.json", "%00", "%"),
  fc.string({ maxLength: 12 }).map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, "?"))),
);
const randomRequest: fc.Arbitrary<Req> = fc.record({
  method: fc.constantFrom(...METHODS),
  root: fc.constantFrom("/", "/v1/", "/v1/posts/", "/v1/public/", "//", "/V1/"),
  segments: fc.array(segment, { maxLength: 6 }),
  suffix,
  authorization,
  contentType,
  body: bodyFor(anyShapedBody),
}).map(({ method, root, segments, suffix, authorization, contentType, body }) => ({
  method,
  path: root + segments.join("/") + suffix,
  authorization,
  contentType,
  body,
})).map(withToString);

/** The route a path aims at, for the summary (ids and queries folded). */
function template(path: string): string {
  const bare = path.split("?")[0];
  const known = ROUTES.map(([, t]) => t).find((t) => new RegExp(`^${t.replace(/[.]/g, "\\.").replace("{id}", "[^/]*")}/?$`).test(bare));
  return known ?? "(other path)";
}

/** fast-check prints counterexamples with this: bounded, whatever the body's size. */
function withToString(req: Req): Req {
  return Object.assign(req, { [fc.toStringMethod]: () => show(req) });
}

// ---------- hostile headers, over raw TCP (fetch refuses to send most of them) ----------

/** Bytes 0x20-0xFF and tab: what an HTTP header value may carry on the wire, and then some. */
const wireText = (max: number) =>
  fc.string({ unit: fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(9)).map((c) => String.fromCharCode(c)), maxLength: max });
const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((p) => p.join("."));
const ipv6 = fc.array(fc.nat(0xffff).map((n) => n.toString(16)), { minLength: 8, maxLength: 8 }).map((g) => g.join(":"));

const hostHeader = fc.oneof(
  { arbitrary: fc.constant<string | undefined>(undefined).map(() => new URL(base).host), weight: 3 },
  fc.constant<string | undefined>(undefined),
  fc.constantFrom("", "a b", "a b:80", "[::1", "[zz]", "x:99999999", "exa mple.org:8080", "%", "%00", "a\tb", "\\evil", "evil.example", "evil.example:1", "localhost:0", "[::1]:8080", "a/b", "a?b", "a#b", "@", "user@host", "é.example", ".", ":", "[]", "0"),
  wireText(60),
  fc.nat(2).map((i) => "h".repeat([255, 256, 4000][i])),
  fc.domain(),
  fc.tuple(fc.domain(), fc.nat(70_000)).map(([d, p]) => `${d}:${p}`),
);
const acceptHeader = fc.oneof(
  fc.constant<string | undefined>(undefined),
  fc.constantFrom("TEXT/HTML", "text/html;q=0", "text/html;q=0.0001", "text/html;q=1.5", "text/html;q=-1", "text/html;Q=0", "text/*", "*/*;q=0", "application/*", ";;;", ",,,", "text/html;q=", "text/html;q=abc", "text/html, application/json;q=1", "*", "/", "html"),
  fc.array(
    fc.tuple(fc.constantFrom("text/html", "application/json", "*/*", "text/*", "image/png", "x/y"), fc.option(fc.double({ min: -1, max: 2, noNaN: true }), { nil: undefined })).map(
      ([type, q]) => (q === undefined ? type : `${type};q=${q.toFixed(3)}`),
    ),
    { maxLength: 6 },
  ).map((parts) => parts.join(", ")),
  wireText(100),
);
const forwardedFor = fc.oneof(
  fc.constant<string | undefined>(undefined),
  ipv4,
  ipv6,
  fc.ipV4(),
  fc.ipV6(),
  fc.array(fc.oneof(ipv4, ipv6, wireText(20)), { minLength: 1, maxLength: 5 }).map((list) => list.join(", ")),
  fc.constantFrom("", ",", "unknown", "::ffff:1.2.3.4", "[2001:db8::1]", "2001:db8::1%eth0", "1.2.3.4:80", "999.1.1.1", "1.2.3", "::::", "x".repeat(12_000)),
  wireText(200),
);
const bigHeader = fc.oneof(
  { arbitrary: fc.constant(0), weight: 4 },
  fc.integer({ min: 1_000, max: 15_000 }),
  fc.integer({ min: 15_000, max: 40_000 }),
);

interface HeaderReq {
  [fc.toStringMethod]?: () => string;
  method: string;
  path: string;
  host: string | undefined;
  accept: string | undefined;
  forwardedFor: string | undefined;
  big: number;
  authorization: string | undefined;
  body: string | undefined;
}

const headerRequest: fc.Arbitrary<HeaderReq> = fc
  .record({
    route: fc.constantFrom(...ROUTES),
    id: realId,
    host: hostHeader,
    accept: acceptHeader,
    forwardedFor,
    big: bigHeader,
    keyed: fc.boolean(),
  })
  .chain(({ route, ...rest }) =>
    (routeBodies[route[1]] ?? fc.constant(undefined)).map((value) => ({ route, value, ...rest })),
  )
  .map(({ route, id, host, accept, forwardedFor, big, keyed, value }) => {
    const req: HeaderReq = {
      method: route[0],
      path: route[1].replace("{id}", id as string),
      host,
      accept,
      forwardedFor,
      big,
      authorization: keyed ? `Bearer ${attacker.key}` : undefined,
      body: route[0] === "POST" ? JSON.stringify(value ?? {}) : undefined,
    };
    const shown = (v: string | undefined) => (v === undefined ? "-" : JSON.stringify(v.length > 120 ? `${v.slice(0, 120)}… (${v.length})` : v));
    return Object.assign(req, {
      [fc.toStringMethod]: () =>
        `${req.method} ${req.path} host=${shown(req.host)} accept=${shown(req.accept)} xff=${shown(req.forwardedFor)} big=${req.big} body=${shown(req.body)}`,
    });
  });

/** One request over its own connection; the whole answer, read until the server closes. */
function sendRaw(payload: Buffer): Promise<{ status: number; headers: Record<string, string>; body: string; raw: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.write(payload));
    socket.setTimeout(15_000, () => socket.destroy(new Error("no answer within 15 s")));
    socket.on("data", (chunk) => chunks.push(Buffer.from(chunk)));
    socket.on("error", reject);
    socket.on("close", () => {
      const data = Buffer.concat(chunks);
      const end = data.indexOf("\r\n\r\n");
      if (end < 0) return reject(new Error(`no complete answer: ${JSON.stringify(data.toString("latin1").slice(0, 200))}`));
      const head = data.subarray(0, end).toString("latin1").split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of head.slice(1)) headers[line.slice(0, line.indexOf(":")).trim().toLowerCase()] = line.slice(line.indexOf(":") + 1).trim();
      let rest = data.subarray(end + 4);
      if ((headers["transfer-encoding"] ?? "").includes("chunked")) {
        const parts: Buffer[] = [];
        let offset = 0;
        for (;;) {
          const lineEnd = rest.indexOf("\r\n", offset);
          const size = lineEnd < 0 ? 0 : parseInt(rest.subarray(offset, lineEnd).toString("latin1"), 16);
          if (!size) break;
          parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
          offset = lineEnd + 2 + size + 2;
        }
        rest = Buffer.concat(parts);
      }
      resolve({ status: Number(head[0].split(" ")[1]), headers, body: rest.toString("utf8"), raw: head[0] });
    });
  });
}

async function exerciseHeaders(req: HeaderReq): Promise<boolean> {
  const lines = [`${req.method} ${req.path} HTTP/1.1`];
  if (req.host !== undefined) lines.push(`Host: ${req.host}`);
  if (req.accept !== undefined) lines.push(`Accept: ${req.accept}`);
  if (req.forwardedFor !== undefined) lines.push(`X-Forwarded-For: ${req.forwardedFor}`);
  if (req.authorization !== undefined) lines.push(`Authorization: ${req.authorization}`);
  if (req.big > 0) lines.push(`X-Padding: ${"p".repeat(req.big)}`);
  const body = req.body === undefined ? Buffer.alloc(0) : Buffer.from(req.body, "utf8");
  if (req.body !== undefined) lines.push("Content-Type: application/json", `Content-Length: ${body.length}`);
  lines.push("Connection: close");
  const head = Buffer.from(lines.join("\r\n") + "\r\n\r\n", "latin1");
  const res = await sendRaw(Buffer.concat([head, body]));
  requests++;
  headerRequests++;
  const key = `${req.method}|headers:${template(req.path)}|${res.status}`;
  statusCounts.set(key, (statusCounts.get(key) ?? 0) + 1);
  if (res.status >= 500) throw new Error(`${res.status} for ${String(req[fc.toStringMethod]?.())}: ${res.body.slice(0, 300)}`);
  // Bun answers headers past its limit itself (431, no body); nothing else may skip the app.
  if (res.status === 431) {
    if (head.length <= 16 * 1024) throw new Error(`431 for ${head.length} bytes of headers`);
    headerTooLarge++;
    return true;
  }
  // So is an HTTP/1.1 request without Host (RFC 9112 §3.2): Bun's own 400, no body.
  if (req.host === undefined && res.status === 400 && res.body === "") return true;
  if (res.status < 200 || res.status > 299) {
    const problem = errorAnswerProblem(req, res.status, res.headers["content-type"] ?? null, res.body);
    if (problem) throw new Error(`error shape (${problem}) for ${String(req[fc.toStringMethod]?.())}: ${res.raw} ${res.body.slice(0, 300)}`);
  }
  if ((res.headers["content-type"] ?? "").includes("json") && res.headers["x-content-type-options"] !== "nosniff") {
    throw new Error(`JSON without nosniff for ${String(req[fc.toStringMethod]?.())}`);
  }
  track(req.method, req.path, req.authorization !== undefined, res.status, res.body, String(req[fc.toStringMethod]?.()));
  // Only a plausible Host may reach a page (the landing page prints it).
  if (req.path === "/" && req.host !== undefined && res.body.includes(req.host) && !/^[A-Za-z0-9.-]*[A-Za-z](:\d+)?$|^[\d.:[\]]+$/.test(req.host) && req.host.length > 3) {
    throw new Error(`implausible Host echoed into the landing page: ${JSON.stringify(req.host)}`);
  }
  return true;
}

// ---------- the check ----------

async function exercise(req: Req): Promise<boolean> {
  const headers: Record<string, string> = {};
  if (req.authorization !== undefined) headers.authorization = req.authorization;
  if (req.contentType !== undefined) headers["content-type"] = req.contentType;
  if (req.accept !== undefined) headers.accept = req.accept;
  const upper = req.method.toUpperCase();
  let payload: string | Uint8Array | undefined;
  if (upper !== "GET" && upper !== "HEAD") {
    if (req.body.kind === "json") payload = JSON.stringify(req.body.value) ?? "null";
    else if (req.body.kind === "text") payload = req.body.text;
    else if (req.body.kind === "bytes") payload = req.body.bytes;
  }
  let res: Response;
  try {
    res = await fetch(base + req.path, { method: req.method, headers, body: payload, signal: AbortSignal.timeout(15_000) });
  } catch (error) {
    const name = (error as Error)?.name;
    if (name === "TimeoutError" || name === "AbortError") throw new Error(`no answer within 15 s: ${show(req)}`);
    if (error instanceof TypeError && /header|method|url|invalid/i.test(String(error))) return true; // fetch refused to send it
    throw new Error(`connection failed (server down?): ${String(error)} for ${show(req)}`);
  }
  const text = await res.text();
  requests++;
  const key = `${upper}|${template(req.path)}|${res.status}`;
  statusCounts.set(key, (statusCounts.get(key) ?? 0) + 1);

  if (res.status >= 500) throw new Error(`${res.status} for ${show(req)}: ${text.slice(0, 300)}`);
  if ((res.status < 200 || res.status > 299) && upper !== "HEAD") {
    const problem = errorAnswerProblem(req, res.status, res.headers.get("content-type"), text);
    if (problem) throw new Error(`error shape (${problem}) for ${show(req)}: ${res.status} ${text.slice(0, 300)}`);
  }
  if (res.status === 401 && !/^Bearer/.test(res.headers.get("www-authenticate") ?? "")) {
    throw new Error(`401 without WWW-Authenticate: Bearer for ${show(req)}`);
  }
  track(upper, req.path, req.authorization !== undefined, res.status, text, show(req));
  return true;
}

/** Records what the attacker's own key legitimately changed; a DELETE of someone else's note is a violation. */
function track(method: string, path: string, keyed: boolean, status: number, text: string, shown: string): void {
  if (keyed && status < 300 && method === "POST" && /^\/v1\/posts\//.test(path)) {
    const data = JSON.parse(text);
    if (/\/comments/.test(path) && status === 201) attackerComments.set(data.post_id, (attackerComments.get(data.post_id) ?? 0) + 1);
    if (/\/vote/.test(path) && status === 200) attackerVotes.set(data.post_id, data.your_vote === "up" ? 1 : data.your_vote === "down" ? -1 : 0);
  }
  if (method === "DELETE" && status === 200) {
    const deleted = JSON.parse(text).id;
    if ([...victimNotes, bystanderNote].includes(deleted)) {
      violations.push(`DELETE of another contributor's note succeeded: ${shown}`);
      throw new Error(violations.at(-1));
    }
  }
}

function show(req: Req): string {
  const shown = (value: unknown) => {
    const text = typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
    return text.length > 300 ? `${text.slice(0, 300)}… (${text.length} chars)` : text;
  };
  const bodyText =
    req.body.kind === "none" ? "no body" : req.body.kind === "json" ? `json ${shown(req.body.value)}` : req.body.kind === "text" ? `text ${shown(req.body.text)}` : `bytes [${[...req.body.bytes.slice(0, 60)].join(",")}]`;
  return `${req.method} ${shown(req.path)} auth=${shown(req.authorization)} type=${shown(req.contentType)} ${bodyText}`;
}

function run(name: string, arbitrary: fc.Arbitrary<Req>, runs: number, seconds: number) {
  test(
    name,
    async () => {
      await fc.assert(fc.asyncProperty(arbitrary, exercise), {
        numRuns: Math.round(runs * SCALE),
        seed: SEED,
        plugins: [fc.interruptAfterTimeLimit(seconds * 1000 * SCALE)],
      });
    },
    (seconds * SCALE + 60) * 1000,
  );
}

// ---------- the runs ----------

describe("hostile requests against one server", () => {
  test("a deeply nested JSON body (32,000 levels, 64,000 bytes) is a prompt 4xx and does not stall the server", async () => {
    const text = "[".repeat(32_000) + "]".repeat(32_000);
    for (const [path, key] of [
      ["/v1/register", undefined],
      ["/v1/posts", attacker.key],
    ] as const) {
      const started = performance.now();
      const slow = fetch(base + path, {
        method: "POST",
        headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: text,
      }).then(async (res) => ({ status: res.status, text: await res.text(), ms: performance.now() - started }));
      await Bun.sleep(100);
      // A probe sent while the nested body is handled: the event loop must not be held.
      const probeStarted = performance.now();
      const probe = await fetch(`${base}/v1/healthz`);
      const probeMs = performance.now() - probeStarted;
      const answer = await slow;
      console.log(`nested body on ${path}: ${answer.status} after ${Math.round(answer.ms)} ms; healthz meanwhile ${Math.round(probeMs)} ms`);
      expect(probe.status).toBe(200);
      expect(answer.status).toBeLessThan(500);
      expect(errorShapeProblem(answer.status, "application/json", answer.text)).toBeNull();
      expect(probeMs).toBeLessThan(2_000);
    }
  }, 90_000);

  run("every contract route, every method, hostile bodies and headers", routeRequest, 120_000, 45);
  run("random paths and methods", randomRequest, 30_000, 15);

  test(
    "hostile headers: Host, Accept, X-Forwarded-For, oversized",
    async () => {
      await fc.assert(fc.asyncProperty(headerRequest, exerciseHeaders), {
        numRuns: Math.round(20_000 * SCALE),
        seed: SEED,
        plugins: [fc.interruptAfterTimeLimit(15 * 1000 * SCALE)],
      });
    },
    (15 * SCALE + 60) * 1000,
  );

  test("the victim's notes, comments and votes are unchanged but for the attacker's own comments and votes", async () => {
    const after = await snapshot();
    expect(after.me).toEqual(before.me);
    for (const id of Object.keys(before.notes)) {
      const was = before.notes[id];
      const now = after.notes[id];
      expect({ ...now, score: 0, comment_count: 0 }).toEqual({ ...was, score: 0, comment_count: 0 });
      expect(now.score).toBe(was.score + (attackerVotes.get(id) ?? 0));
      expect(now.comment_count).toBe(was.comment_count + (attackerComments.get(id) ?? 0));
      // Others' comments are as before, in order; new ones are the attacker's. The list
      // holds the newest 100 only (the attacker's can push older ones out of it); the
      // database check below sees every row.
      const listed = after.comments[id];
      const others = listed.filter((c: any) => c.contributor_no !== attacker.no);
      if (listed.length < 100) {
        expect(others).toEqual(before.comments[id]);
        expect(listed.length - others.length).toBe(attackerComments.get(id) ?? 0);
      } else {
        expect(before.comments[id].slice(before.comments[id].length - others.length)).toEqual(others);
      }
    }
    expect(violations).toEqual([]);
    // And in the database: the victim's and bystander's own rows are exactly as before.
    expect(rows()).toEqual(beforeRows);
    expect((beforeRows.votes as unknown[]).length).toBe(2);
    expect((beforeRows.comments as unknown[]).length).toBe(2);
  });

  test("the process is alive and logged no error", async () => {
    expect(server.proc.exitCode).toBeNull();
    expect((await call(base, "GET", "/v1/healthz")).status).toBe(200);
    expect((await call(base, "GET", "/v1/readyz")).status).toBe(200);
    await Bun.sleep(200); // request lines flush every 100 ms
    const errors = server.logs().split("\n").filter((line) => /"level":"(error|fatal)"/.test(line) || /"status":5\d\d/.test(line));
    expect(errors).toEqual([]);
    // Per method and route: how many answers of each status (coverage of the run).
    const rows = new Map<string, string[]>();
    for (const [key, n] of [...statusCounts.entries()].sort()) {
      const [method, route, status] = key.split("|");
      const row = `${method} ${route}`;
      rows.set(row, [...(rows.get(row) ?? []), `${status}×${n}`]);
    }
    const lines = [...rows.entries()].filter(([row]) => ROUTES.some(([m, t]) => row === `${m} ${t}`) || row.endsWith("(other path)"));
    console.log(`${headerRequests} of them with hostile headers over raw TCP (${headerTooLarge} answered 431 by Bun)`);
    console.log(`${requests} hostile requests; answers by route:\n  ${lines.map(([row, counts]) => `${row}: ${counts.join(" ")}`).join("\n  ")}`);
  });
});
