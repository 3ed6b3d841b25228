// Routes: parse, call the core, map errors. Handlers stay short; the rules are
// in src/core, the SQL in src/store.
import { ValueErrorType } from "@sinclair/typebox/errors";
import { Elysia, ElysiaCustomStatusResponse, ValidationError } from "elysia";
import packageJson from "../../package.json";
import type { Config } from "../config.ts";
import { addressSubject } from "../core/addresses.ts";
import { AppError, invalid } from "../core/errors.ts";
import { LIMITS } from "../core/limits.ts";
import { KEY_MARKER } from "../core/keys.ts";
import type { Cairn } from "../core/service.ts";
import type { Store } from "../store/types.ts";
import { bodyLimitFor, readJsonBody } from "./body.ts";
import { errorResponse, internalError, mcpMethodNotAllowed, routeNotFound, STATUS } from "./errors.ts";
import type { Logger } from "./log.ts";
import * as S from "./schemas.ts";
import { docsResponse } from "../web/docs-page.ts";
import { installResponse } from "../web/install-page.ts";
import { landingResponse } from "../web/landing.ts";
import { missingNotePageResponse, notePageResponse } from "../web/note-page.ts";
import { noteResponse } from "./note-body.ts";
import { idempotencyKeyOf, idempotentResponse } from "./idempotency.ts";
import { openApiDocument, type OpenApiDocument } from "./openapi.ts";
import { pathOf, prefersHtml } from "./request-parts.ts";

interface RequestMeta {
  id: string;
  started: number;
  /** Set once the request's line is written, so an error after the handler (a response that fails its schema) is not logged twice. */
  logged?: boolean;
}

function statusOf(responseValue: unknown, setStatus: number | string | undefined): number {
  if (responseValue instanceof Response) return responseValue.status;
  if (responseValue instanceof ElysiaCustomStatusResponse) return responseValue.code;
  return typeof setStatus === "number" ? setStatus : Number(setStatus ?? 200) || 200;
}

const PUBLIC_NOTE_HEADERS = { "cache-control": "public, max-age=60", vary: "Accept" };

/** A caller's (or proxy's) request id is kept only when it is short and plain. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,64}$/;

export const VERSION: string = packageJson.version;

export interface AppDeps {
  cairn: Cairn;
  store: Store;
  config: Config;
  log: Logger;
  /** False while starting or draining: readyz answers 503. */
  isAccepting: () => boolean;
}

/** The answers that carry a new API key: no cache, private or shared, may keep them. */
const NO_STORE = "no-store";

/** The routes that take a body without a key; every other route with a body is keyed. */
const OPEN_BODY_ROUTES = new Set(["/v1/register", "/v1/web/events"]);

const SEARCH_ONLY_QUERY =
  "Search takes only a `query` field; the server decides how many results return and how they are ranked. Send {\"query\": \"your words\"}.";

function typeName(schema: any): string | undefined {
  if (!schema) return undefined;
  if (Array.isArray(schema.anyOf) && schema.anyOf.every((s: any) => "const" in s)) {
    return `one of ${schema.anyOf.map((s: any) => JSON.stringify(s.const)).join(", ")}`;
  }
  if (Array.isArray(schema.anyOf)) {
    const names = schema.anyOf.map(typeName);
    return names.every((name: string | undefined) => name !== undefined) ? names.join(" or ") : undefined;
  }
  switch (schema.type) {
    case "null":
      return "null";
    case "string":
      return "a string";
    case "array":
      return schema.items?.type === "string" ? "an array of strings" : "an array";
    case "object":
      return "a JSON object";
    case "integer":
      return "an integer";
    case "boolean":
      return "true or false";
    default:
      return undefined;
  }
}

function validationToAppError(error: ValidationError, path: string): AppError {
  const first = error.valueError;
  if (error.type === "body" && path === "/v1/search" && first && first.type === ValueErrorType.ObjectAdditionalProperties) {
    return invalid(SEARCH_ONLY_QUERY);
  }
  if (!first) return invalid("The request is not valid; check it against /v1/openapi.json.");
  // "/tags/0" names `tags[0]`, as the limits' own messages do.
  const field = first.path
    .replace(/^\//, "")
    .replace(/\/(\d+)(?=\/|$)/g, "[$1]")
    .replaceAll("/", ".");
  if (field === "") {
    return invalid(error.type === "body" ? "The request needs a JSON object body." : "The request is not valid.");
  }
  if (first.value === undefined) return invalid(`\`${field}\` is required.`);
  const expected = typeName(first.schema);
  return invalid(expected ? `\`${field}\` must be ${expected}.` : `\`${field}\` is invalid: ${first.message}.`);
}

/** The per-address breakers' subject for this request: the client's IPv4 address or IPv6 /64 (see src/core/addresses.ts). */
export function clientIp(request: Request, server: { requestIP(r: Request): { address: string } | null } | null, trustProxy: boolean): string {
  if (trustProxy) {
    // The proxy in front appends the address it saw; the last entry is the one we can trust.
    // One that is not an IP address is no subject: the request counts as the proxy's own.
    const forwarded = request.headers.get("x-forwarded-for");
    const last = forwarded?.slice(forwarded.lastIndexOf(",") + 1);
    const subject = last ? addressSubject(last) : null;
    if (subject) return subject;
  }
  const peer = server?.requestIP(request)?.address;
  return (peer && addressSubject(peer)) ?? "unknown";
}

export function createApp({ cairn, store, config, log, isAccepting }: AppDeps) {
  /** Hands a request to the finished app (POST /v1/mcp's tools); set once `app` exists, below. */
  let handleInternally = (request: Request): Promise<Response> => Promise.reject(new Error(`the app is not built yet (${request.url})`));
  /** The contributor of a keyed request whose body was read: authenticated in onParse, before the body. */
  const authenticated = new WeakMap<Request, number>();
  const keyed = new Elysia({ name: "keyed", normalize: false })
    // derive runs before schema validation: an anonymous caller gets 401, never a validation hint.
    .derive({ as: "scoped" }, async ({ request }) => {
      const known = authenticated.get(request);
      if (known !== undefined) return { contributorNo: known };
      const authorization = request.headers.get("authorization");
      const found = cairn.contributorFor(authorization);
      return { contributorNo: typeof found === "number" ? found : await found };
    })
    .get("/v1/me", ({ contributorNo }) => cairn.me(contributorNo), {
      response: { 200: S.MeResponse, 401: S.ErrorBody, 500: S.ErrorBody, 503: S.ErrorBody },
      detail: { summary: "Your contributor state", tags: ["contributor"] },
    })
    .post(
      "/v1/posts",
      async ({ contributorNo, body, status, request, set }) => {
        const key = idempotencyKeyOf(request);
        if (key !== undefined) {
          // Checked before the key is reserved: a refused note (a credential in it) leaves no trace.
          const note = cairn.admitNote(body);
          return idempotentResponse(cairn, contributorNo, key, "POST /v1/posts", body, 201, set, (slot) => cairn.createNote(contributorNo, note, slot));
        }
        return cairn.createNote(contributorNo, body).then((note) => status(201, note));
      },
      {
        body: S.NoteRequest,
        headers: S.IdempotencyHeaders,
        response: { 201: S.CreatedNote, 403: S.ErrorBody, 404: S.ErrorBody, 409: S.PostConflictErrorBody, ...S.textWriteErrors, ...S.keyedErrors },
        detail: { summary: "Create a note", tags: ["notes"] },
      },
    )
    .get("/v1/posts/:post_id", async ({ params, set }): Promise<Response> => noteResponse(await cairn.getNote(params.post_id), set), {
      params: S.IdParams,
      response: { 200: S.Note, 404: S.ErrorBody, ...S.keyedReadErrors },
      detail: { summary: "Fetch one note in full", tags: ["notes"] },
    })
    .delete("/v1/posts/:post_id", ({ contributorNo, params }) => cairn.deleteNote(contributorNo, params.post_id), {
      params: S.IdParams,
      // A DELETE may carry a body, and Elysia reads it: 413/415 can happen here.
      response: { 200: S.DeleteResponse, 403: S.ErrorBody, 404: S.ErrorBody, 413: S.ErrorBody, 415: S.ErrorBody, ...S.keyedReadErrors },
      detail: { summary: "Delete your own note (hard delete)", tags: ["notes"] },
    })
    .get("/v1/posts/:post_id/comments", ({ params }) => cairn.comments(params.post_id), {
      params: S.IdParams,
      response: { 200: S.CommentsResponse, 404: S.ErrorBody, ...S.keyedReadErrors },
      detail: { summary: `Comments of a note: the newest ${LIMITS.commentsListed}, oldest first, and the true count`, tags: ["comments"] },
    })
    .post(
      "/v1/posts/:post_id/comments",
      async ({ contributorNo, params, body, status, request, set }) => {
        const key = idempotencyKeyOf(request);
        if (key !== undefined) {
          const route = `POST /v1/posts/${params.post_id.toLowerCase()}/comments`;
          // Checked before the key is reserved, as for a note.
          const comment = cairn.admitComment(params.post_id, body.body);
          return idempotentResponse(cairn, contributorNo, key, route, body, 201, set, (slot) => cairn.addComment(contributorNo, comment, slot));
        }
        return cairn.addComment(contributorNo, { postId: params.post_id, body: body.body }).then((comment) => status(201, comment));
      },
      {
        params: S.IdParams,
        body: S.CommentRequest,
        headers: S.IdempotencyHeaders,
        response: { 201: S.CommentResponse, 404: S.ErrorBody, 409: S.InProgressErrorBody, ...S.textWriteErrors, ...S.keyedErrors },
        detail: { summary: "Comment on a note", tags: ["comments"] },
      },
    )
    .post("/v1/posts/:post_id/vote", ({ contributorNo, params, body, request, set }) => {
      const key = idempotencyKeyOf(request);
      if (key !== undefined) {
        const route = `POST /v1/posts/${params.post_id.toLowerCase()}/vote`;
        return idempotentResponse(cairn, contributorNo, key, route, body, 200, set, (slot) => cairn.vote(contributorNo, params.post_id, body.vote, slot));
      }
      return cairn.vote(contributorNo, params.post_id, body.vote);
    }, {
      params: S.IdParams,
      body: S.VoteRequest,
      headers: S.IdempotencyHeaders,
      response: { 200: S.VoteResponse, 403: S.ErrorBody, 404: S.ErrorBody, 409: S.InProgressErrorBody, ...S.idempotentErrors, ...S.keyedErrors },
      detail: { summary: "Vote up, down, or withdraw (none)", tags: ["votes"] },
    })
    .post("/v1/search", ({ contributorNo, body }) => cairn.search(contributorNo, body.query), {
      body: S.SearchRequest,
      response: { 200: S.SearchResponse, ...S.keyedErrors },
      detail: { summary: "Full-text search; the server decides count and ranking", tags: ["search"] },
    })
    .get("/v1/me/posts", ({ contributorNo, query }) => cairn.myPosts(contributorNo, query.cursor), {
      query: S.MyPostsQuery,
      response: { 200: S.MyPostsResponse, ...S.keyedReadErrors },
      detail: { summary: "Your notes, newest first, 50 a page (opaque cursor in `next`)", tags: ["contributor"] },
    })
    .post("/v1/me/key", ({ contributorNo, status, set }) => {
      set.headers["cache-control"] = NO_STORE;
      return cairn.rotateKey(contributorNo).then((rotated) => status(201, rotated));
    }, {
      response: { 201: S.RotateKeyResponse, 413: S.ErrorBody, 415: S.ErrorBody, 429: S.ErrorBody, ...S.keyedReadErrors },
      detail: { summary: "Rotate your API key: a new key, shown once; the old one is refused from the next request on", tags: ["contributor"] },
    })
    // The tools' own requests go back through the whole app (see handleInternally).
    // The MCP SDK is loaded on the first call, so a server that never serves MCP does not load it at start.
    .post("/v1/mcp", async ({ request, body, set }): Promise<Response> => {
      const { mcpResponse } = await import("./mcp.ts");
      return mcpResponse(request, body, { handle: handleInternally, version: VERSION, requestId: String(set.headers["x-request-id"] ?? "") || null });
    }, {
      response: { 401: S.ErrorBody, 413: S.ErrorBody, 415: S.ErrorBody, 500: S.ErrorBody, 503: S.ErrorBody },
      detail: {
        summary: "MCP over Streamable HTTP (stateless, JSON answers): the tools of `cairn mcp`, keyed with the Bearer header",
        description: "A JSON-RPC message (or batch) of the Model Context Protocol; send `Accept: application/json, text/event-stream`. See docs/mcp.md.",
        tags: ["mcp"],
      },
    });

  // MCP's GET (a stream) and DELETE (a session's end): 405 after the key check.
  // A DELETE may carry a body, and Elysia reads it (after the key): 400/413/415 can happen there, as on DELETE /v1/posts/{post_id}.
  const notOffered = (response: Record<number, typeof S.ErrorBody>) => ({
    response: { 401: S.ErrorBody, 405: S.ErrorBody, 500: S.ErrorBody, 503: S.ErrorBody, ...response },
    detail: { summary: "Not offered (MCP: no server-to-client stream, no sessions): 405 with `Allow: POST`", tags: ["mcp"] },
  });
  keyed
    .get("/v1/mcp", () => Promise.reject(mcpMethodNotAllowed()), notOffered({}))
    .delete("/v1/mcp", () => Promise.reject(mcpMethodNotAllowed()), notOffered({ 400: S.ErrorBody, 413: S.ErrorBody, 415: S.ErrorBody }));

  // normalize: false keeps unknown request fields for the schema to judge:
  // ignored everywhere (TypeBox allows them) except where a schema forbids them (search).
  const requests = new WeakMap<Request, RequestMeta>();
  const logRequest = (request: Request, meta: RequestMeta, route: string | undefined, status: number) => {
    if (meta.logged || !log.logsRequests) return;
    meta.logged = true;
    log.request({
      requestId: meta.id,
      method: request.method,
      route: route || "(no route)",
      status,
      ms: Math.round((performance.now() - meta.started) * 100) / 100,
    });
  };
  /**
   * The request's id and start, made by the first hook that sees the request:
   * onParse (bodies), the global transform (every matched route) or onError
   * (unknown paths, unreadable bodies). There is no onRequest hook on purpose:
   * with one, Elysia's per-route entry reads and splits the URL and wraps the
   * call in a try/catch on every request (~3% of a keyed GET's CPU).
   */
  const metaOf = (request: Request, set: { headers: Record<string, unknown> }): RequestMeta => {
    let meta = requests.get(request);
    if (meta === undefined) {
      const incoming = request.headers.get("x-request-id");
      // A caller's id is logged, so anything shaped like an API key is replaced.
      const id = incoming && SAFE_REQUEST_ID.test(incoming) && !incoming.startsWith(KEY_MARKER) ? incoming : crypto.randomUUID();
      meta = { id, started: performance.now() };
      requests.set(request, meta);
      set.headers["x-request-id"] = id;
      // Every answer is JSON or a page that says its type: no browser may guess another.
      set.headers["x-content-type-options"] = "nosniff";
    }
    return meta;
  };
  const app = new Elysia({ normalize: false })
    // Keep the hooks below free of `await` and `return f(...)` unless they
    // return a promise: Elysia reads a hook's source to decide whether to
    // await it, and an awaited hook costs every request a microtask.
    // Oversized bodies are refused in onParse, from the declared
    // Content-Length, before any byte is read.
    .onParse(({ request, set }) => {
      metaOf(request, set);
      const path = pathOf(request.url);
      const limit = bodyLimitFor(path);
      if (OPEN_BODY_ROUTES.has(path)) return readJsonBody(request, limit);
      // A keyed route: the key before the body, so an anonymous caller gets 401, never 400, 413 or 415.
      const found = cairn.contributorFor(request.headers.get("authorization"));
      if (typeof found === "number") {
        authenticated.set(request, found);
        return readJsonBody(request, limit);
      }
      return found.then((contributorNo) => {
        authenticated.set(request, contributorNo);
        return readJsonBody(request, limit);
      });
    })
    // A function, not an arrow: minified, `=>{m(` reads as async to Elysia.
    .onTransform({ as: "global" }, function startRequest({ request, set }) {
      metaOf(request, set);
    })
    .onError(({ error, code, request, path, route, set }) => {
      const meta = metaOf(request, set);
      const response = errorFor(error, code, request, path, route || "(no route)", meta.id);
      // The public note's URL answers HTML or JSON by Accept: its errors too, for caches.
      if (path.startsWith("/v1/public/posts/")) response.headers.set("vary", "Accept");
      logRequest(request, meta, route, response.status);
      return response;
    })
    // The request line is written when the handler has answered, not in
    // onAfterResponse: Elysia runs that hook through a setImmediate per
    // request, which cost ~9% of a keyed GET's CPU. Requests that fail are
    // written by onError above.
    .onAfterHandle({ as: "global" }, ({ request, route, set, responseValue }) => {
      const meta = requests.get(request);
      if (meta) logRequest(request, meta, route, statusOf(responseValue, set.status));
    })

    .get("/v1/healthz", () => ({ status: "ok" as const }), {
      response: { 200: S.HealthResponse, 500: S.ErrorBody },
      detail: { summary: "Liveness probe (no storage call)", tags: ["probes"] },
    })
    .get(
      "/v1/readyz",
      async ({ status }) => {
        if (!isAccepting()) return status(503, { status: "not_ready" as const, reason: "the server is starting or draining" });
        const readiness = await store.readiness();
        if (!readiness.ready) return status(503, { status: "not_ready" as const, reason: readiness.reason });
        return { status: "ready" as const };
      },
      {
        response: { 200: S.ReadyResponse, 503: S.NotReadyResponse },
        detail: { summary: "Readiness probe: storage answers and migrations are current", tags: ["probes"] },
      },
    )
    .post(
      "/v1/register",
      ({ body, request, server, status, set }) => {
        set.headers["cache-control"] = NO_STORE;
        return cairn.register(body.email, clientIp(request, server, config.trustProxy)).then((r) => status(201, r));
      },
      {
        body: S.RegisterRequest,
        response: { 201: S.RegisterResponse, 403: S.ErrorBody, ...S.publicErrors },
        detail: { summary: "Register and receive an API key (shown once)", tags: ["contributor"] },
      },
    )
    .get(
      "/v1/public/posts/:post_id",
      // The HTML page is a plain Response beside the typed JSON answer.
      async ({ params, request, set }): Promise<Response> => {
        if (prefersHtml(request.headers.get("accept"))) return notePage(params.post_id);
        return noteResponse(await cairn.publicNote(params.post_id), set, PUBLIC_NOTE_HEADERS);
      },
      {
        params: S.IdParams,
        response: { 200: S.Note, 404: S.ErrorBody, ...S.publicReadErrors },
        detail: { summary: "One note by exact id, no key", tags: ["public"] },
      },
    )
    .post(
      "/v1/web/events",
      ({ body, request, server, status }) =>
        cairn.webEvent(clientIp(request, server, config.trustProxy), body.event, body.post_id).then((r) => status(202, r)),
      {
        body: S.WebEventRequest,
        response: { 202: S.WebEventResponse, ...S.publicErrors },
        detail: { summary: "Count a page event (daily counters only)", tags: ["public"] },
      },
    )
    .get("/", (): Response => landingResponse({ baseUrl: config.publicBaseUrl, registrationOpen: config.registration === "open", version: VERSION, sourceUrl: config.sourceUrl }), {
      detail: { summary: "Landing page (HTML): what this instance is, how to get the CLI and a key", tags: ["pages"] },
    })
    .get("/install", (): Response => installResponse(), {
      detail: { summary: "Install guide (HTML): download, verify and install the cairn binary, or build it", tags: ["pages"] },
    })
    .get("/docs", (): Response => docsResponse(document()), {
      detail: { summary: "API reference (HTML) rendered from the OpenAPI document", tags: ["pages"] },
    })
    .get("/v1/openapi.json", () => document(), {
      detail: { summary: "This OpenAPI 3.1 document, generated from the route schemas", tags: ["pages"] },
    })
    // Last: the keyed plugin's derive (authentication) reaches the routes after it.
    .use(keyed);
  handleInternally = (request) => app.handle(request);

  /** `route` (the pattern, never the URL: no note id) is what the log says; `path` what the messages judge. */
  function errorFor(error: unknown, code: unknown, request: Request, path: string, route: string, requestId: string): Response {
    if (error instanceof AppError) return errorResponse(error);
    if (code === "NOT_FOUND") return errorResponse(routeNotFound());
    if (error instanceof ValidationError && error.type !== "response") {
      return errorResponse(validationToAppError(error, path));
    }
    if (code === "PARSE") {
      // Elysia wraps what onParse throws in a ParseError: the body reader's 413, 415 and bad JSON,
      // and the key check's 401, or its storage failure (judged below as itself).
      const cause = (error as Error).cause;
      if (cause instanceof AppError) return errorResponse(cause);
      if (cause === undefined) return errorResponse(invalid("The request body is not valid JSON."));
      error = cause;
    }
    if (store.isUnavailable(error)) {
      log.warn("storage unavailable", { requestId, method: request.method, route, error: String((error as Error)?.message ?? error) });
      return errorResponse(new AppError("unavailable", "Storage is busy or unreachable; retry shortly."));
    }
    log.error("request failed", { requestId, method: request.method, route, error: String((error as Error)?.stack ?? error) });
    return errorResponse(internalError(requestId));
  }

  /** The note and its comments as a page; a missing note is a small HTML page with the same status as the JSON answer. */
  async function notePage(id: string): Promise<Response> {
    try {
      const note = await cairn.publicNote(id);
      const { comments } = await cairn.comments(id);
      // Never the request's Host (a forged one would be cached into the page, as on the landing page):
      // without PUBLIC_BASE_URL the link is a path the browser resolves, and there is no og:url.
      const base = config.publicBaseUrl;
      const noteUrl = (noteId: string) => `${base ?? ""}/v1/public/posts/${noteId}`;
      return notePageResponse(note, comments, base === null ? undefined : noteUrl(note.id), note.superseded_by === null ? undefined : noteUrl(note.superseded_by));
    } catch (error) {
      if (error instanceof AppError && (error.code === "not_found" || error.code === "invalid_request")) {
        return missingNotePageResponse(STATUS[error.code], error.message);
      }
      throw error;
    }
  }

  // Built on first use, once every route is registered.
  let cached: OpenApiDocument | undefined;
  const document = (): OpenApiDocument => (cached ??= openApiDocument(app, { version: VERSION, baseUrl: config.publicBaseUrl }));
  return app;
}
