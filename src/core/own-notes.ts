// GET /v1/me/posts: the page size, the opaque cursor and the listed fields.
// The cursor names the last note's row key: the next page is every note of the
// caller below it (keyset), so notes written or deleted between pages never
// make a page repeat or skip an older note.
import type { OwnNoteRecord } from "../store/types.ts";
import { invalid } from "./errors.ts";
import { iso } from "./views.ts";

export const MY_POSTS_PAGE = 50;

const CURSOR = /^c1\.([A-Za-z0-9_-]{1,24})$/;

export function pageCursor(pk: number): string {
  return `c1.${Buffer.from(String(pk)).toString("base64url")}`;
}

/** The row key a cursor names; 400 for anything this server did not hand out. */
export function parsePageCursor(cursor: string): number {
  const encoded = CURSOR.exec(cursor)?.[1];
  const text = encoded === undefined ? "" : Buffer.from(encoded, "base64url").toString("latin1");
  if (!/^[1-9][0-9]{0,15}$/.test(text) || Number(text) > Number.MAX_SAFE_INTEGER || pageCursor(Number(text)) !== cursor) {
    throw invalid("`cursor` is not a cursor this server handed out: pass the `next` value of the previous page unchanged, or leave it out for the first page.");
  }
  return Number(text);
}

export function ownNoteView(note: OwnNoteRecord) {
  return {
    id: note.id,
    title: note.title,
    tags: note.tags,
    score: note.score,
    comment_count: note.commentCount,
    supersedes: note.supersedes,
    superseded_by: note.supersededBy,
    created_at: iso(note.createdAt),
  };
}
