// GET /v1/openapi.json: a valid OpenAPI 3 document (checked by a real
// validator from npm) that lists every route the server answers and no route
// it does not, declares the bearer key where one is needed, and gives every
// error response the contract's {"error": {"code", "message"}} shape. A client
// generated from it gets what the server really sends: each real answer below
// is checked against the status, media type, body schema (with no undeclared
// field) and headers the document declares for it (JSON Schema 2020-12, ajv).
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../helpers/server.ts";
import { CONTRACT_ROUTES, NEVER_SEEN_ID, NO_BREAKERS, call, createNote, expectError, register, type Contributor } from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";

forEachEngine((engine) => {

  let server: RunningServer;
  let base: string;
  let doc: any;
  let author: Contributor;
  let reader: Contributor;

  const CONTRACT = CONTRACT_ROUTES;

  /** The routes that need `Authorization: Bearer <key>`; every other one is public. */
  const KEYED = new Set([
    "GET /v1/me",
    "POST /v1/posts",
    "GET /v1/posts/{post_id}",
    "DELETE /v1/posts/{post_id}",
    "GET /v1/posts/{post_id}/comments",
    "POST /v1/posts/{post_id}/comments",
    "POST /v1/posts/{post_id}/vote",
    "POST /v1/search",
    "GET /v1/me/posts",
    "POST /v1/me/key",
    "POST /v1/mcp",
    // Not offered (405), but keyed like the POST.
    "GET /v1/mcp",
    "DELETE /v1/mcp",
  ]);

  const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

  /** Every operation of the document as "METHOD /path" with its Operation object. */
  function operations(document: any): { name: string; method: string; path: string; op: any }[] {
    return Object.entries<any>(document.paths ?? {}).flatMap(([path, item]) =>
      Object.entries<any>(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, op })),
    );
  }

  /** Follows local `#/components/...` references. */
  function resolveRef(document: any, node: any): any {
    let current = node;
    for (let hops = 0; current && typeof current.$ref === "string" && hops < 20; hops++) {
      const ref: string = current.$ref;
      if (!ref.startsWith("#/")) throw new Error(`non-local $ref ${ref}`);
      current = ref
        .slice(2)
        .split("/")
        .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))
        .reduce((at: any, part) => at?.[part], document);
    }
    return current;
  }

  beforeAll(async () => {
    server = await startServer({ engine, env: NO_BREAKERS });
    base = server.url;
    const res = await call(base, "GET", "/v1/openapi.json");
    if (res.status !== 200) throw new Error(`GET /v1/openapi.json answered ${res.status}: ${res.text.slice(0, 300)}`);
    expect(res.headers.get("content-type") ?? "").toContain("application/json");
    doc = res.data;
    author = await register(base);
    reader = await register(base);
  });

  afterAll(async () => {
    await server?.stop();
  });

  describe("GET /v1/openapi.json", () => {
    test("is public and passes a real OpenAPI schema validator", async () => {
      const validator = new Validator();
      const result = await validator.validate(doc);
      if (!result.valid) throw new Error(`invalid OpenAPI document: ${JSON.stringify(result.errors, null, 2).slice(0, 3000)}`);
      expect(result.valid).toBe(true);
      expect(validator.version).toMatch(/^3\./);
    });

    test("is OpenAPI 3.x with info, servers and paths", () => {
      expect(typeof doc.openapi).toBe("string");
      expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
      expect(typeof doc.info?.title).toBe("string");
      expect(typeof doc.info?.version).toBe("string");
      expect(Array.isArray(doc.servers)).toBe(true);
      expect(Object.keys(doc.paths).length).toBeGreaterThan(0);
    });

    test("lists every route of the contract", () => {
      const listed = operations(doc).map((o) => o.name);
      const missing = CONTRACT.filter((route) => !listed.includes(route));
      expect(missing).toEqual([]);
    });

    test("lists no phantom route: every documented operation is answered (never the unknown-route 404)", async () => {
      // A baseline: what an unknown route answers.
      const phantom = await call(base, "GET", "/v1/no-such-route");
      const notFoundRoute = expectError(phantom, 404, "not_found");
      const unknownMethod = await call(base, "PATCH", "/v1/posts");
      expect(unknownMethod.status).toBe(404);

      // Real ids, so the note routes answer about a note rather than "not found".
      const note = await createNote(base, author.key);
      const answers: Record<string, number> = {};
      for (const { name, method, path, op } of operations(doc)) {
        const url = path.replace(/\{post_id\}/g, note.id);
        expect(url).not.toContain("{"); // every path parameter is one this test knows
        const keyed = Array.isArray(op.security) && op.security.length > 0;
        // The reader is not the author: DELETE answers 403, the note stays for the other calls.
        const options: Parameters<typeof call>[3] = keyed ? { key: reader.key } : {};
        if (method !== "GET" && method !== "DELETE" && method !== "HEAD") options.json = {};
        const res = await call(base, method, url, options);
        answers[name] = res.status;
        if (res.status === 404) {
          // The only 404 a documented route may give is about the note, never about the route.
          expect(res.data?.error?.message).not.toBe(notFoundRoute);
          throw new Error(`${name} answered 404: ${res.text.slice(0, 300)}`);
        }
        expect(res.status).not.toBe(405);
        expect(res.status).toBeLessThan(500);
      }
      // Spot-check that the calls reached the handlers they were meant for.
      expect(answers["GET /v1/posts/{post_id}"]).toBe(200);
      expect(answers["DELETE /v1/posts/{post_id}"]).toBe(403);
      expect(answers["POST /v1/posts"]).toBe(400);
      expect(answers["GET /v1/healthz"]).toBe(200);
      expect(answers["GET /v1/public/posts/{post_id}"]).toBe(200);
    });

    test("every route registered in the server's app is documented", async () => {
      // The route table itself (no server needed: nothing is called).
      const { createApp } = await import("../../src/http/app.ts");
      const app = createApp({ cairn: {} as any, store: {} as any, config: { publicBaseUrl: null } as any, log: {} as any, isAccepting: () => true });
      const registered = app.routes
        .filter((route: { method: string }) => route.method !== "ALL" && route.method !== "WS")
        .map((route: { method: string; path: string }) => `${route.method.toUpperCase()} ${route.path.replace(/:([A-Za-z_]+)/g, "{$1}")}`);
      expect(registered.length).toBeGreaterThanOrEqual(CONTRACT.length);
      const listed = operations(doc).map((o) => o.name);
      expect(registered.filter((route: string) => !listed.includes(route))).toEqual([]);
      expect(listed.filter((route) => !registered.includes(route))).toEqual([]);
    });

    test("keyed operations declare the bearer key and a 401; public ones need no key", () => {
      const schemes = doc.components?.securitySchemes ?? {};
      const bearerNames = Object.entries<any>(schemes)
        .filter(([, scheme]) => scheme.type === "http" && String(scheme.scheme).toLowerCase() === "bearer")
        .map(([name]) => name);
      expect(bearerNames.length).toBeGreaterThan(0);
      // No document-wide requirement would silently put a key on the public routes.
      expect(doc.security === undefined || (Array.isArray(doc.security) && doc.security.length === 0)).toBe(true);

      for (const { name, op } of operations(doc)) {
        if (KEYED.has(name)) {
          expect({ name, security: op.security }).toEqual({ name, security: expect.any(Array) });
          const names = (op.security as Record<string, string[]>[]).flatMap((requirement) => Object.keys(requirement));
          if (!names.some((n) => bearerNames.includes(n))) throw new Error(`${name} does not declare the bearer key`);
          if (!op.responses?.["401"]) throw new Error(`${name} declares no 401 response`);
        } else {
          const security = op.security ?? [];
          if (security.length > 0 && !security.some((r: object) => Object.keys(r).length === 0)) {
            throw new Error(`${name} is public in the contract but the document asks for a key`);
          }
        }
      }
    });

    test("the key rules the document states are the server's: keyed routes answer 401 without a key", async () => {
      for (const { name, method, path } of operations(doc).filter((o) => KEYED.has(o.name))) {
        const res = await call(base, method, path.replace("{post_id}", "01890a5d-ac96-774b-bcce-b302099a8057"), method === "GET" || method === "DELETE" ? {} : { json: {} });
        if (res.status !== 401) throw new Error(`${name} without a key answered ${res.status}`);
        expectError(res, 401, "unauthorized");
      }
    });

    test("every error response has the {error: {code, message}} shape", () => {
      let checked = 0;
      for (const { name, op } of operations(doc)) {
        for (const [status, raw] of Object.entries<any>(op.responses ?? {})) {
          if (!/^[45]/.test(status)) continue;
          // The contract fixes readyz's 503 as {"status": "not_ready", "reason"}: a probe answer, not an error body.
          if (name === "GET /v1/readyz" && status === "503") continue;
          const response = resolveRef(doc, raw);
          let schema = resolveRef(doc, response?.content?.["application/json"]?.schema);
          // POST /v1/mcp: its MCP transport answers some refusals itself as JSON-RPC errors (406 only so);
          // where the server's own checks answer too, one branch is the contract's shape.
          if (name === "POST /v1/mcp" && Array.isArray(schema?.anyOf)) schema = schema.anyOf.map((branch: any) => resolveRef(doc, branch)).find((branch: any) => branch.properties?.error && !branch.properties?.jsonrpc);
          if (name === "POST /v1/mcp" && status === "406") continue;
          const where = `${name} ${status}`;
          if (!schema) throw new Error(`${where}: no application/json schema`);
          expect({ where, type: schema.type, required: schema.required }).toEqual({ where, type: "object", required: ["error"] });
          const error = resolveRef(doc, schema.properties?.error);
          // A 409 on POST /v1/posts is a duplicate (naming the existing note in error.post_id) or request_in_progress (issue 19).
          const required = ["code", "message"];
          if (name === "POST /v1/posts" && status === "409") expect(resolveRef(doc, schema.properties?.error)?.properties?.post_id).toBeDefined();
          // A 422 on a write carrying text is secret_detected (naming the field and the kind of credential) or idempotency_key_reused.
          if ((name === "POST /v1/posts" || name === "POST /v1/posts/{post_id}/comments") && status === "422") {
            const properties = resolveRef(doc, schema.properties?.error)?.properties;
            expect({ where, field: properties?.field?.type, kind: properties?.kind?.type }).toEqual({ where, field: "string", kind: "string" });
          }
          expect({ where, type: error?.type, required: [...(error?.required ?? [])].sort() }).toEqual({ where, type: "object", required });
          expect({ where, code: resolveRef(doc, error.properties?.code)?.type, message: resolveRef(doc, error.properties?.message)?.type }).toEqual({
            where,
            code: "string",
            message: "string",
          });
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(20);
    });

    test("request bodies are JSON and the path parameter is declared", () => {
      for (const { name, path, op } of operations(doc)) {
        if (op.requestBody) {
          const body = resolveRef(doc, op.requestBody);
          expect({ name, types: Object.keys(body.content ?? {}) }).toEqual({ name, types: ["application/json"] });
        }
        if (path.includes("{post_id}")) {
          const params = (op.parameters ?? []).map((p: any) => resolveRef(doc, p));
          expect({ name, param: params.some((p: any) => p.name === "post_id" && p.in === "path" && p.required === true) }).toEqual({ name, param: true });
        }
      }
    });
  });
  describe("the document declares what the server really sends and accepts", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);

    /** The schema with every object that lists its properties closed: a field the server sends must be declared. */
    function closed(schema: any): any {
      if (Array.isArray(schema)) return schema.map(closed);
      if (!schema || typeof schema !== "object") return schema;
      const out: any = {};
      for (const [key, value] of Object.entries<any>(schema)) {
        out[key] = key === "properties" ? Object.fromEntries(Object.entries<any>(value).map(([name, field]) => [name, closed(field)])) : closed(value);
      }
      if (schema.properties && !("additionalProperties" in schema)) out.additionalProperties = false;
      return out;
    }

    /** Asserts that `res`, the answer to `method path`, is one the document declares: status, media type, body and headers. */
    function conforms(method: string, path: string, res: Awaited<ReturnType<typeof call>>): void {
      const where = `${method} ${path} ${res.status}`;
      const op = doc.paths[path]?.[method.toLowerCase()];
      if (!op) throw new Error(`${method} ${path} is not in the document`);
      const response = resolveRef(doc, op.responses?.[String(res.status)]);
      if (!response) throw new Error(`${where} is not declared (declared: ${Object.keys(op.responses ?? {}).join(", ")}): ${res.text.slice(0, 200)}`);
      const type = (res.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
      if (!response.content && res.text === "") return; // a declared answer without a body (202 to an MCP notification)
      const media = response.content?.[type];
      if (!media) throw new Error(`${where} answers ${type}, the document declares ${Object.keys(response.content ?? {}).join(", ") || "no body"}`);
      if (type === "application/json") {
        const validate = ajv.compile(closed(media.schema));
        if (!validate(res.data)) throw new Error(`${where}: the body does not match the declared schema: ${ajv.errorsText(validate.errors)}: ${res.text.slice(0, 200)}`);
      }
      const declared = Object.keys(response.headers ?? {}).map((name) => name.toLowerCase());
      for (const header of ["www-authenticate", "retry-after", "allow", "idempotent-replayed", "cache-control", "x-request-id"]) {
        if (header === "cache-control" && type === "text/html") continue; // every page says it; the page routes are not a client's
        if (res.headers.get(header) !== null && !declared.includes(header)) throw new Error(`${where} sends ${header}, the document does not declare it`);
      }
    }

    /** Whether the document's schema for `method path`'s request accepts this body, path id and headers. */
    function documentAccepts(method: string, path: string, request: { json?: unknown; id?: string; headers?: Record<string, string> }): boolean {
      const op = doc.paths[path][method.toLowerCase()];
      if (request.json !== undefined && !ajv.validate(op.requestBody.content["application/json"].schema, request.json)) return false;
      for (const parameter of op.parameters ?? []) {
        const value = parameter.in === "path" ? request.id : parameter.in === "header" ? request.headers?.[parameter.name] : undefined;
        if (value !== undefined && !ajv.validate(parameter.schema, value)) return false;
      }
      return true;
    }

    const MCP_ACCEPT = { accept: "application/json, text/event-stream" };
    // Contributors of these tests' own: the phantom-route test above rotates the reader's key (POST /v1/me/key).
    let writer: Contributor;
    let voter: Contributor;
    beforeAll(async () => {
      writer = await register(base);
      voter = await register(base);
    });

    test("POST /v1/mcp: the refusals its MCP transport answers itself (406, 400, 415, as JSON-RPC errors) are declared", async () => {
      const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
      conforms("POST", "/v1/mcp", await call(base, "POST", "/v1/mcp", { key: writer.key, json: list, headers: MCP_ACCEPT }));
      conforms("POST", "/v1/mcp", await call(base, "POST", "/v1/mcp", { key: writer.key, json: { jsonrpc: "2.0", method: "notifications/initialized" }, headers: MCP_ACCEPT }));
      const notAcceptable = await call(base, "POST", "/v1/mcp", { key: writer.key, json: list });
      expect(notAcceptable.status).toBe(406);
      conforms("POST", "/v1/mcp", notAcceptable);
      const notJsonRpc = await call(base, "POST", "/v1/mcp", { key: writer.key, json: { hello: 1 }, headers: MCP_ACCEPT });
      expect(notJsonRpc.status).toBe(400);
      conforms("POST", "/v1/mcp", notJsonRpc);
      const badJson = await call(base, "POST", "/v1/mcp", { key: writer.key, raw: "{", headers: { ...MCP_ACCEPT, "content-type": "application/json" } });
      expect(badJson.status).toBe(400);
      conforms("POST", "/v1/mcp", badJson);
      const noBody = await call(base, "POST", "/v1/mcp", { key: writer.key, headers: MCP_ACCEPT });
      expect(noBody.status).toBe(415);
      conforms("POST", "/v1/mcp", noBody);
      const notJson = await call(base, "POST", "/v1/mcp", { key: writer.key, raw: "x", headers: { ...MCP_ACCEPT, "content-type": "text/plain" } });
      expect(notJson.status).toBe(415);
      conforms("POST", "/v1/mcp", notJson);
    });

    test("GET and DELETE /v1/mcp: 405 with Allow, and a DELETE's body refused as on any DELETE (400, 413, 415) are declared", async () => {
      conforms("GET", "/v1/mcp", await call(base, "GET", "/v1/mcp", { key: writer.key }));
      conforms("GET", "/v1/mcp", await call(base, "GET", "/v1/mcp"));
      conforms("DELETE", "/v1/mcp", await call(base, "DELETE", "/v1/mcp", { key: writer.key }));
      const cases: [number, Parameters<typeof call>[3]][] = [
        [400, { raw: "{", headers: { "content-type": "application/json" } }],
        [413, { json: { pad: "x".repeat(70 * 1024) } }],
        [415, { raw: "x", headers: { "content-type": "text/plain" } }],
      ];
      for (const [status, options] of cases) {
        const res = await call(base, "DELETE", "/v1/mcp", { key: writer.key, ...options });
        expect(res.status).toBe(status);
        conforms("DELETE", "/v1/mcp", res);
      }
    });

    test("GET /v1/public/posts/{post_id}: a browser's 400 and 404 pages are declared as text/html, beside the JSON answers", async () => {
      const note = await createNote(base, writer.key);
      const path = "/v1/public/posts/{post_id}";
      for (const accept of ["application/json", "text/html"]) {
        const headers = { accept };
        conforms("GET", path, await call(base, "GET", `/v1/public/posts/${note.id}`, { headers }));
        const malformed = await call(base, "GET", "/v1/public/posts/not-a-uuid", { headers });
        expect(malformed.status).toBe(400);
        conforms("GET", path, malformed);
        const missing = await call(base, "GET", `/v1/public/posts/${NEVER_SEEN_ID}`, { headers });
        expect(missing.status).toBe(404);
        conforms("GET", path, missing);
      }
    });

    test("the headers a client acts on are declared: WWW-Authenticate (401), Retry-After (429), Allow (405), Idempotent-Replayed", async () => {
      const unauthorized = await call(base, "GET", "/v1/me");
      expect(unauthorized.headers.get("www-authenticate")).toBeTruthy();
      conforms("GET", "/v1/me", unauthorized);
      const note = await createNote(base, writer.key);
      const vote = { key: voter.key, json: { vote: "up" }, headers: { "idempotency-key": `replay-${note.id}` } };
      conforms("POST", "/v1/posts/{post_id}/vote", await call(base, "POST", `/v1/posts/${note.id}/vote`, vote));
      const replay = await call(base, "POST", `/v1/posts/${note.id}/vote`, vote);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      conforms("POST", "/v1/posts/{post_id}/vote", replay);
      conforms("POST", "/v1/register", await call(base, "POST", "/v1/register", { json: { email: `h${Date.now()}@example.org` } }));
      // This server runs without breakers: a 429 (always with Retry-After, test/api/breakers.test.ts) is checked in the document.
      for (const { name, op } of operations(doc)) {
        for (const [status, raw] of Object.entries<any>(op.responses ?? {})) {
          const headers = Object.keys(resolveRef(doc, raw).headers ?? {});
          const needs = ({ "401": "WWW-Authenticate", "429": "Retry-After", "405": "Allow" } as Record<string, string>)[status];
          if (needs && !headers.includes(needs)) throw new Error(`${name} ${status} does not declare ${needs}`);
        }
      }
    });

    test("public operations say so with an empty security requirement; keyed ones name the bearer key", () => {
      for (const { name, op } of operations(doc)) {
        expect({ name, security: Array.isArray(op.security) }).toEqual({ name, security: true });
        if (!KEYED.has(name)) expect({ name, security: op.security }).toEqual({ name, security: [] });
      }
    });

    test("ids and timestamps in answers carry format uuid and date-time, beside their exact patterns", async () => {
      const note = await createNote(base, writer.key);
      const res = await call(base, "GET", `/v1/posts/${note.id}`, { key: writer.key });
      conforms("GET", "/v1/posts/{post_id}", res);
      const schema = resolveRef(doc, doc.paths["/v1/posts/{post_id}"].get.responses["200"].content["application/json"].schema);
      expect(schema.properties.id.format).toBe("uuid");
      expect(schema.properties.created_at.format).toBe("date-time");
      expect(schema.properties.superseded_by.format).toBe("uuid");
      const me = resolveRef(doc, doc.paths["/v1/me"].get.responses["200"].content["application/json"].schema);
      expect(me.properties.recent_posts.items.properties.created_at.format).toBe("date-time");
    });

    test("request schemas state the exact rules (event names, note ids, Idempotency-Key) and never refuse what the server accepts", async () => {
      const note = await createNote(base, writer.key);
      /** The server's verdict and the document's agree. */
      const agree = async (method: string, path: string, url: string, request: { json?: unknown; id?: string; headers?: Record<string, string> }, key?: string) => {
        const res = await call(base, method, url, { key, json: request.json, headers: request.headers });
        const accepted = res.status < 300;
        expect({ url, request, accepted: documentAccepts(method, path, request) }).toEqual({ url, request, accepted });
        if (accepted) conforms(method, path, res);
      };
      for (const event of ["page_view", "copy_link", "copy_command", "nope", "PAGE_VIEW"]) {
        await agree("POST", "/v1/web/events", "/v1/web/events", { json: { event } });
      }
      await agree("POST", "/v1/web/events", "/v1/web/events", { json: { event: "page_view", post_id: note.id.toUpperCase() } });
      await agree("POST", "/v1/web/events", "/v1/web/events", { json: { event: "page_view", post_id: "not-a-uuid" } });
      for (const id of [note.id, note.id.toUpperCase(), "not-a-uuid", `${note.id}0`]) {
        await agree("GET", "/v1/posts/{post_id}", `/v1/posts/${id}`, { id }, writer.key);
      }
      for (const idempotencyKey of ["k", "é", "k".repeat(255), "k".repeat(256)]) {
        await agree("POST", "/v1/posts", "/v1/posts", { json: { title: `Key ${idempotencyKey.length} ${idempotencyKey.charCodeAt(0)} ${note.id}`, body: "b" }, headers: { "idempotency-key": idempotencyKey } }, writer.key);
      }
      // Limits counted after trimming or normalising are wider in the document (their maxima are in the descriptions), never narrower.
      const accepted = [
        { title: `${"t".repeat(199)}x   `, body: `Padded title ${note.id}` },
        { title: `Tags ${note.id}`, body: "b", tags: [" C++ ", "a", "b", "c", "d", "e", "f", "g", "A"] },
        { title: `Newer ${note.id}`, body: "b", supersedes: note.id.toUpperCase() },
      ];
      for (const json of accepted) await agree("POST", "/v1/posts", "/v1/posts", { json }, writer.key);
      for (const json of [{ title: "", body: "b" }, { title: "t", body: "" }, { title: "t", body: "b", tags: [""] }, { title: "t", body: "b", supersedes: "x" }]) {
        await agree("POST", "/v1/posts", "/v1/posts", { json }, writer.key);
      }
      await agree("POST", "/v1/search", "/v1/search", { json: { query: "" } }, writer.key);
      await agree("POST", "/v1/register", "/v1/register", { json: { email: "a@" } });
    });
  });
});
