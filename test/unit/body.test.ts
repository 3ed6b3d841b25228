import { expect, test } from "bun:test";
import { MAX_DEPTH, nestingDepth, readJsonBody } from "../../src/http/body.ts";

const request = (body: string) => new Request("http://localhost/x", { method: "POST", headers: { "content-type": "application/json" }, body });

test("nesting depth ignores brackets inside strings and escapes", () => {
  expect(nestingDepth('{"a":[1,{"b":2}]}')).toBe(3);
  expect(nestingDepth('{"a":"[[[[{{{{"}')).toBe(1);
  expect(nestingDepth('{"a":"\\"[[[["}')).toBe(1);
  expect(nestingDepth("3")).toBe(0);
});

test("bodies nested past the limit are refused quickly with 400, before parsing", async () => {
  const started = performance.now();
  await expect(readJsonBody(request("[".repeat(32000) + "]".repeat(32000)), 65536)).rejects.toMatchObject({ code: "invalid_request" });
  expect(performance.now() - started).toBeLessThan(500);
  const atLimit = "[".repeat(MAX_DEPTH) + "]".repeat(MAX_DEPTH);
  expect(await readJsonBody(request(atLimit), 65536)).toBeArray();
  await expect(readJsonBody(request("[" + atLimit + "]"), 65536)).rejects.toMatchObject({ code: "invalid_request" });
});
