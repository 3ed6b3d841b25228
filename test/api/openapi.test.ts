// GET /v1/openapi.json: a valid OpenAPI 3 document (checked by a real
// validator from npm) that lists every route the server answers and no route
// it does not, declares the bearer key where one is needed, and gives every
// error response the contract's {"error": {"code", "message"}} shape.
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../helpers/server.ts";
import { CONTRACT_ROUTES, NO_BREAKERS, call, createNote, expectError, register, type Contributor } from "../helpers/api.ts";
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
          const schema = resolveRef(doc, response?.content?.["application/json"]?.schema);
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
});
