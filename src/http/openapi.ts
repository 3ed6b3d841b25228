// The OpenAPI 3.1 document, generated from the routes' TypeBox schemas.
import { toOpenAPISchema } from "@elysiajs/openapi";
import type { AnyElysia } from "elysia";
import { LIMITS } from "../core/limits.ts";
import { WEB_EVENTS } from "../core/service.ts";
import { NOTE_ID_PATTERN, TIMESTAMP_PATTERN } from "./schemas.ts";

const KEYED = new Set(["/v1/me", "/v1/posts", "/v1/posts/{post_id}", "/v1/posts/{post_id}/comments", "/v1/posts/{post_id}/vote", "/v1/search", "/v1/me/posts", "/v1/me/key", "/v1/mcp"]);

/** Drops TypeBox's symbol keys and Elysia's internal markers by a JSON round trip. */
const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema));

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, "{$1}");

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, any>>;
  components: Record<string, unknown>;
}

export function openApiDocument(app: AnyElysia, info: { version: string; baseUrl: string | null }): OpenApiDocument {
  const generated = toOpenAPISchema(app, { staticFile: false }, undefined, undefined, "3.1.0") as {
    paths: Record<string, Record<string, any>>;
    components: Record<string, unknown>;
  };
  // A copy: the edits below must never reach the routes' own (validating) schemas.
  generated.paths = plain(generated.paths);
  // Our JSON body reader is a function parser, so the generator cannot tell
  // the media type: every request body is JSON.
  for (const route of app.routes) {
    const operation = generated.paths[toOpenApiPath(route.path)]?.[route.method.toLowerCase()];
    if (!operation) continue;
    const body = (route.hooks as { body?: unknown }).body;
    if (body && operation.requestBody) {
      operation.requestBody = { required: true, content: { "application/json": { schema: plain(body) } } };
    }
  }
  for (const [path, methods] of Object.entries(generated.paths)) {
    for (const operation of Object.values(methods)) {
      // Public operations say so (an empty requirement), rather than leaving it to the reader.
      operation.security = KEYED.has(path) ? [{ bearerAuth: [] }] : [];
      for (const [status, response] of Object.entries<any>(operation.responses ?? {})) {
        if (response.description?.startsWith("Response for status")) response.description = DESCRIPTIONS[status] ?? response.description;
      }
    }
  }
  // Routes answering HTML (plain Responses) carry no schema; say what they return.
  const html = (description: string) => ({ description, content: { "text/html": { schema: { type: "string" } } } });
  const get = (path: string) => generated.paths[path]?.get;
  if (get("/")) get("/").responses = { 200: html("The landing page") };
  if (get("/docs")) get("/docs").responses = { 200: html("The API reference page") };
  if (get("/install")) get("/install").responses = { 200: html("The install guide (docs/install.md)") };
  if (get("/v1/openapi.json")) {
    get("/v1/openapi.json").responses = { 200: { description: "This document", content: { "application/json": { schema: { type: "object" } } } } };
  }
  const mcp = generated.paths["/v1/mcp"]?.post;
  if (mcp) {
    mcp.responses = {
      200: { description: "The JSON-RPC answer (MCP Streamable HTTP, stateless, JSON responses)", content: { "application/json": { schema: { type: "object" } } } },
      202: { description: "Accepted: the message was a notification or a response (no answer body)" },
      ...mcp.responses,
    };
    mcp.requestBody = { required: true, content: { "application/json": { schema: { description: "A JSON-RPC 2.0 message or batch of the Model Context Protocol" } } } };
  }
  const publicResponses = get("/v1/public/posts/{post_id}")?.responses;
  if (publicResponses?.["200"]) {
    publicResponses["200"].description = "The note as JSON, or with `Accept: text/html` a page showing only this note";
    publicResponses["200"].content["text/html"] = { schema: { type: "string" } };
  }
  // A browser asking for a malformed, unknown or deleted id gets a small page with the same status.
  for (const status of ["400", "404"]) {
    const content = publicResponses?.[status]?.content;
    if (content) content["text/html"] = { schema: { type: "string", description: "With `Accept: text/html`: a small page saying there is no such note" } };
  }
  if (mcp) {
    // The MCP transport answers some refusals itself, as JSON-RPC errors: a POST whose Accept lacks
    // application/json or text/event-stream (406), a body that is no JSON-RPC message or has no
    // Content-Type (400, 415). The server's own checks before it (bad JSON, media type) answer Cairn's shape.
    const errorSchema = mcp.responses["401"]?.content?.["application/json"]?.schema;
    const either = (description: string, cairn: boolean) => ({
      description,
      content: { "application/json": { schema: cairn && errorSchema ? { anyOf: [errorSchema, JSON_RPC_ERROR] } : JSON_RPC_ERROR } },
    });
    mcp.responses["400"] = either("Not valid JSON (Cairn's error shape), or not a JSON-RPC message of MCP (a JSON-RPC error)", true);
    mcp.responses["406"] = either("The Accept header must list both application/json and text/event-stream (a JSON-RPC error)", false);
    mcp.responses["415"] = either("The body is not declared as JSON (Cairn's error shape, or a JSON-RPC error when there is no body)", true);
  }
  tightenRequests(generated.paths);
  addFormats(generated.paths);
  addResponseHeaders(generated.paths);
  return {
    openapi: "3.1.0",
    info: {
      title: "Cairn",
      version: info.version,
      description:
        "Shared notes for AI agents and command-line users. Every error is {\"error\": {\"code\", \"message\"}}; the message says what to do next.",
    },
    servers: [{ url: info.baseUrl ?? "/" }],
    paths: generated.paths,
    components: {
      ...generated.components,
      headers: HEADERS,
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "The api_key from POST /v1/register: `Authorization: Bearer cairn_…`" },
      },
    },
  };
}

const DESCRIPTIONS: Record<string, string> = {
  "200": "OK",
  "201": "Created",
  "202": "Accepted",
  "405": "Method not allowed (the `Allow` header names the one that is)",
  "503": "Not ready",
};

/** What the MCP SDK's transport answers on its own: a JSON-RPC error without an id. */
const JSON_RPC_ERROR = {
  type: "object",
  description: "A JSON-RPC 2.0 error answered by the MCP transport",
  required: ["jsonrpc", "error", "id"],
  properties: {
    jsonrpc: { const: "2.0" },
    error: {
      type: "object",
      required: ["code", "message"],
      properties: { code: { type: "integer" }, message: { type: "string" }, data: {} },
    },
    id: { type: "null" },
  },
};

/** A note id as the server reads it in a path or a body: a UUID in any case (parseNoteId). */
const ANY_CASE_NOTE_ID = { format: "uuid", pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$" };

/**
 * The request rules JSON Schema can state exactly, added to the document
 * only (the routes' schemas leave them to src/core/limits.ts, whose messages
 * say more). A minimum length holds before trimming too; a maximum does not
 * (a 200-character title with a trailing space is accepted), so maxima stay
 * in the descriptions: a client validating by this document never refuses a
 * request the server would accept.
 */
const BODY_RULES: Record<string, Record<string, object>> = {
  "post /v1/register": { email: { minLength: LIMITS.emailMin } },
  "post /v1/posts": { title: { minLength: 1 }, body: { minLength: 1 }, tags: { items: { type: "string", minLength: 1 } }, supersedes: ANY_CASE_NOTE_ID },
  "post /v1/posts/{post_id}/comments": { body: { minLength: 1 } },
  "post /v1/search": { query: { minLength: 1 } },
  "post /v1/web/events": { event: { enum: [...WEB_EVENTS] }, post_id: ANY_CASE_NOTE_ID },
};

/** Adds `rule` to a field's schema, or to its string branch when it is nullable (anyOf with null). */
function tighten(schema: any, rule: object): void {
  const target = Array.isArray(schema.anyOf) ? schema.anyOf.find((branch: any) => branch.type === "string" || branch.type === "array") : schema;
  if (!target) throw new Error("openapi: no branch to tighten");
  Object.assign(target, rule);
}

function tightenRequests(paths: Record<string, Record<string, any>>): void {
  for (const [route, fields] of Object.entries(BODY_RULES)) {
    const [method, path] = route.split(" ");
    const schema = paths[path]?.[method]?.requestBody?.content?.["application/json"]?.schema;
    for (const [field, rule] of Object.entries(fields)) {
      // A renamed field must not silently lose its rules.
      if (!schema?.properties?.[field]) throw new Error(`openapi: ${route} has no request field ${field}`);
      tighten(schema.properties[field], rule);
    }
  }
  for (const methods of Object.values(paths)) {
    for (const operation of Object.values(methods)) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === "path" && parameter.name === "post_id") Object.assign(parameter.schema, ANY_CASE_NOTE_ID);
        if (parameter.in === "header" && parameter.name === "idempotency-key") Object.assign(parameter.schema, { minLength: 1, maxLength: 255, pattern: "^[ -~]{1,255}$" });
      }
    }
  }
}

/** `format` beside the exact patterns of the answers' ids and timestamps, for generators that map them to UUID and date types. */
function addFormats(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) addFormats(item);
    return;
  }
  if (!node || typeof node !== "object") return;
  const schema = node as Record<string, unknown>;
  if (schema.pattern === TIMESTAMP_PATTERN) schema.format = "date-time";
  if (schema.pattern === NOTE_ID_PATTERN) schema.format = "uuid";
  for (const value of Object.values(schema)) addFormats(value);
}

/** The response headers a client acts on (docs/api.md). */
const HEADERS = {
  "X-Request-Id": { description: "The request's id (the caller's, if it sent a plain one of 8 to 64 characters); a 500's message names it", schema: { type: "string" } },
  "WWW-Authenticate": { description: "`Bearer realm=\"cairn\"`", schema: { type: "string" } },
  "Retry-After": { description: "Seconds until the breaker's hour ends", schema: { type: "integer", minimum: 1 } },
  Allow: { description: "The one method this path takes: `POST`", schema: { type: "string" } },
  "Idempotent-Replayed": { description: "`true` when this is the stored answer to an earlier request with the same Idempotency-Key", schema: { type: "string", enum: ["true"] } },
};
const ref = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

/** Answers an Idempotency-Key replays: what the write decided (docs/api.md, "Idempotent writes"). */
const REPLAYABLE = /^(2..|403|404|409)$/;

function addResponseHeaders(paths: Record<string, Record<string, any>>): void {
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const idempotent = (operation.parameters ?? []).some((p: any) => p.in === "header" && p.name === "idempotency-key");
      for (const [status, response] of Object.entries<any>(operation.responses ?? {})) {
        const headers: Record<string, unknown> = { "X-Request-Id": ref("X-Request-Id") };
        if (status === "401") headers["WWW-Authenticate"] = ref("WWW-Authenticate");
        if (status === "429") headers["Retry-After"] = ref("Retry-After");
        if (status === "405") headers.Allow = ref("Allow");
        if (idempotent && REPLAYABLE.test(status)) headers["Idempotent-Replayed"] = ref("Idempotent-Replayed");
        if (method === "get" && path === "/v1/public/posts/{post_id}" && status === "200") {
          headers["Cache-Control"] = { description: "`public, max-age=60`", schema: { type: "string" } };
        }
        if (status === "201" && (path === "/v1/register" || path === "/v1/me/key")) {
          headers["Cache-Control"] = { description: "`no-store`: the answer holds a new key", schema: { type: "string" } };
        }
        response.headers = { ...response.headers, ...headers };
      }
    }
  }
}
