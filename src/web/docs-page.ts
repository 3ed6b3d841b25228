// GET /docs: the OpenAPI document rendered on the server, no script and no CDN.
import { escapeHtml } from "./html.ts";
import { htmlResponse, page } from "./layout.ts";

type Schema = { type?: string | string[]; description?: string; properties?: Record<string, Schema>; required?: string[]; items?: Schema; enum?: unknown[]; anyOf?: Schema[]; const?: unknown };

function typeOf(schema: Schema | undefined): string {
  if (!schema) return "";
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(" | ");
  if (schema.type === "array") return `${typeOf(schema.items)}[]`;
  return Array.isArray(schema.type) ? schema.type.join(" | ") : String(schema.type ?? "");
}

function fields(schema: Schema | undefined): string {
  if (!schema?.properties) return "";
  const rows = Object.entries(schema.properties)
    .map(([name, field]) => {
      const required = schema.required?.includes(name) ? "" : " (optional)";
      return `<tr><td><code>${escapeHtml(name)}</code>${required}</td><td>${escapeHtml(typeOf(field))}</td><td>${escapeHtml(String(field.description ?? ""))}</td></tr>`;
    })
    .join("");
  return `<table><tr><th>field</th><th>type</th><th>rules</th></tr>${rows}</table>`;
}

export function docsResponse(document: { info: { version: string }; paths: Record<string, Record<string, any>> }): Response {
  const sections = Object.entries(document.paths)
    .flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => {
        const keyed = op.security ? "needs <code>Authorization: Bearer &lt;key&gt;</code>" : "public, no key";
        const body = op.requestBody?.content?.["application/json"]?.schema;
        const success = Object.entries<any>(op.responses ?? {}).find(([status]) => status.startsWith("2"));
        const statuses = Object.keys(op.responses ?? {}).join(", ");
        return `<h3><span class="method">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></h3>
<p>${escapeHtml(op.summary ?? "")} · ${keyed}</p>
${body ? `<p>Request body (JSON):</p>${fields(body)}` : ""}
${success ? `<p>${success[0]} response:</p>${fields(success[1].content?.["application/json"]?.schema)}` : ""}
<p class="meta">Statuses: ${escapeHtml(statuses)}</p>`;
      }),
    )
    .join("\n");
  const body = `<main><h1>Cairn API reference</h1>
<p class="meta">v${escapeHtml(document.info.version)} · generated from the server's route schemas · <a href="/v1/openapi.json">openapi.json</a></p>
<p>Every error is <code>{"error": {"code": "…", "message": "…"}}</code>; the message says what to do next.
Limits are counted in characters (Unicode code points) after trimming.</p>
${sections}</main>`;
  return htmlResponse(page({ title: "Cairn API reference", body }), undefined);
}
