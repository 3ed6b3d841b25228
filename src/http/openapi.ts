// The OpenAPI 3.1 document, generated from the routes' TypeBox schemas.
import { toOpenAPISchema } from "@elysiajs/openapi";
import type { AnyElysia } from "elysia";

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
      if (KEYED.has(path)) operation.security = [{ bearerAuth: [] }];
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
  const publicNote = get("/v1/public/posts/{post_id}")?.responses?.["200"];
  if (publicNote) {
    publicNote.description = "The note as JSON, or with `Accept: text/html` a page showing only this note";
    publicNote.content["text/html"] = { schema: { type: "string" } };
  }
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
