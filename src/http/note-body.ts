// A note's JSON body, serialised once per note version. Serialising a note
// (bodies run to several KB) was the largest single cost of a keyed GET;
// the core hands out the same view object until the note changes (see
// src/core/views.ts), so a WeakMap keyed on the view is never stale and lets
// go of bodies together with their views.
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { NoteView } from "../core/views.ts";
import { Note } from "./schemas.ts";

const noteSchema = TypeCompiler.Compile(Note);
const bodies = new WeakMap<NoteView, string>();
// What Elysia sends for objects, so a cached note and a fresh one look alike.
const JSON_CONTENT_TYPE = "application/json;charset=utf-8";

/**
 * The note as a finished Response. A Response skips Elysia's per-request
 * response validation, so the schema check runs here, once per version. The
 * headers that hooks put in `set` (the request id) move into it, so Elysia
 * has nothing to merge: merging copies the whole Response, which cost more
 * than the serialisation saved.
 */
export function noteResponse(view: NoteView, set: { headers: Record<string, string | number> }, extraHeaders?: Record<string, string>): Response {
  let body = bodies.get(view);
  if (body === undefined) {
    if (!noteSchema.Check(view)) {
      const first = noteSchema.Errors(view).First();
      throw new Error(`a note does not match the Note response schema at ${first?.path ?? "?"}: ${first?.message ?? "?"}`);
    }
    body = JSON.stringify(view);
    bodies.set(view, body);
  }
  const headers: Record<string, string> = { "content-type": JSON_CONTENT_TYPE, ...extraHeaders };
  for (const name in set.headers) {
    headers[name] = String(set.headers[name]);
    delete set.headers[name];
  }
  return new Response(body, { headers });
}
