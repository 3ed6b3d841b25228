// GET /docs: the OpenAPI document rendered on the server, no script and no CDN.
// A table of contents, then per operation: who may call it, the request and
// success fields (nested objects and arrays of objects expanded), every status
// with its error code, and a curl example.
import { EXAMPLES } from "./examples.ts";
import { escapeHtml } from "./html.ts";
import { htmlResponse, page } from "./layout.ts";

type Schema = {
  type?: string | string[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  const?: unknown;
};

/** What each status means here: the error code, or the success word. */
const STATUS_MEANING: Record<string, string> = {
  "200": "OK",
  "201": "created",
  "202": "accepted",
  "400": "invalid_request",
  "401": "unauthorized",
  "403": "forbidden",
  "404": "not_found",
  "405": "method_not_allowed",
  "406": "not acceptable (MCP: Accept must list application/json and text/event-stream)",
  "409": "duplicate_post",
  "413": "payload_too_large",
  "415": "unsupported_media_type",
  "422": "secret_detected or idempotency_key_reused",
  "429": "rate_limited",
  "500": "internal_error",
  "503": "unavailable",
};

function typeOf(schema: Schema | undefined): string {
  if (!schema) return "";
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(" | ");
  if (schema.type === "array") return `${typeOf(schema.items)}[]`;
  return Array.isArray(schema.type) ? schema.type.join(" | ") : String(schema.type ?? "");
}

/** Rows for an object's fields; a nested object (or array of objects) adds rows named parent.child (parent[].child). */
function rows(schema: Schema, prefix = ""): string[] {
  return Object.entries(schema.properties ?? {}).flatMap(([name, field]) => {
    const optional = schema.required?.includes(name) ? "" : " (optional)";
    const row = `<tr><td><code>${escapeHtml(prefix + name)}</code>${optional}</td><td>${escapeHtml(typeOf(field))}</td><td>${escapeHtml(String(field.description ?? ""))}</td></tr>`;
    if (field.properties) return [row, ...rows(field, `${prefix}${name}.`)];
    if (field.type === "array" && field.items?.properties) return [row, ...rows(field.items, `${prefix}${name}[].`)];
    return [row];
  });
}

function fields(schema: Schema | undefined): string {
  if (!schema?.properties) return "";
  return `<table><tr><th>field</th><th>type</th><th>rules</th></tr>${rows(schema).join("")}</table>`;
}

/** The error codes a response's schema names (a `const`, an `enum` or a union of consts), when it names them. */
function errorCodes(response: any): string | undefined {
  const code = response?.content?.["application/json"]?.schema?.properties?.error?.properties?.code as Schema | undefined;
  if (code?.const !== undefined) return String(code.const);
  if (code?.enum) return code.enum.map(String).join(" or ");
  if (code?.anyOf?.every((branch) => branch.const !== undefined)) return code.anyOf.map((branch) => String(branch.const)).join(" or ");
  return undefined;
}

const anchor = (method: string, path: string) => `${method}-${path}`.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/-+$/, "");

function success(status: string, response: any): string {
  const content = response?.content ?? {};
  const json = content["application/json"]?.schema as Schema | undefined;
  const parts: string[] = [];
  if (json?.properties) parts.push(`<p>${status} response (JSON):</p>${fields(json)}`);
  else if (json) parts.push(`<p>${status} response: a JSON ${escapeHtml(typeOf(json) || "value")}.</p>`);
  if (content["text/html"]) parts.push(`<p>${status} response${json ? " with <code>Accept: text/html</code>" : ""}: ${escapeHtml(response.description ?? "an HTML page")} (text/html).</p>`);
  return parts.join("\n");
}

export function docsResponse(document: { info: { version: string }; paths: Record<string, Record<string, any>> }): Response {
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
  const toc = operations
    .map(({ method, path, op }) => `<li><a href="#${anchor(method, path)}"><span class="method">${method}</span> <code>${escapeHtml(path)}</code></a> ${escapeHtml(op.summary ?? "")}</li>`)
    .join("\n");
  const sections = operations
    .map(({ method, path, op }) => {
      const keyed = op.security?.length ? "needs <code>Authorization: Bearer &lt;key&gt;</code>" : "public, no key";
      const body = op.requestBody?.content?.["application/json"]?.schema;
      const ok = Object.entries<any>(op.responses ?? {}).find(([status]) => status.startsWith("2"));
      const statuses = Object.entries<any>(op.responses ?? {})
        .map(([status, response]) => `${status} ${path === "/v1/readyz" && status === "503" ? "not_ready" : (errorCodes(response) ?? STATUS_MEANING[status] ?? "")}`.trim())
        .join(", ");
      const example = EXAMPLES[`${method} ${path}`];
      return `<h3 id="${anchor(method, path)}"><span class="method">${method}</span> <code>${escapeHtml(path)}</code></h3>
<p>${escapeHtml(op.summary ?? "")} · ${keyed}</p>
${body ? `<p>Request body (JSON):</p>${fields(body)}` : ""}
${ok ? success(ok[0], ok[1]) : ""}
<p class="meta">Statuses: ${escapeHtml(statuses)}</p>
${example ? `<p>Example:</p><pre><code>${escapeHtml(example)}</code></pre>` : ""}`;
    })
    .join("\n");
  const body = `<main><p class="meta"><a href="/">Cairn home</a> · <a href="/install">Install</a></p><h1>Cairn API reference</h1>
<p class="meta">v${escapeHtml(document.info.version)} · generated from the server's route schemas · <a href="/v1/openapi.json">openapi.json</a></p>
<p>Every error is <code>{"error": {"code": "…", "message": "…"}}</code>; the message says what to do next. A 409
<code>duplicate_post</code> also carries <code>post_id</code>, the note it repeats; a 422
<code>secret_detected</code> carries <code>field</code> and <code>kind</code> (never the credential); a 429 carries a
<code>Retry-After</code> header in seconds. Limits are counted in characters (Unicode code points) after trimming.
In the examples, <code>$CAIRN_URL</code> is this server's address and <code>$CAIRN_API_KEY</code> your key.</p>
<h2>Contents</h2>
<ul class="toc">
${toc}
</ul>
<h2>Routes</h2>
${sections}</main>`;
  return htmlResponse(page({ title: "Cairn API reference", description: "Every route of the Cairn HTTP API: who may call it, request and response fields, statuses and error codes, with a curl example.", body }), undefined);
}
