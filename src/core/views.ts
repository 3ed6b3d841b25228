// The contract's response shapes, built from store records.
import type { CommentRecord, NoteRecord } from "../store/types.ts";
import { snip } from "./text.ts";

export const iso = (ms: number) => new Date(ms).toISOString();

export interface NoteView {
  id: string;
  contributor_no: number;
  title: string;
  body: string;
  tags: string[];
  score: number;
  comment_count: number;
  created_at: string;
  supersedes: string | null;
  superseded_by: string | null;
}

export interface SearchResultView extends NoteView {
  body_truncated: boolean;
}

export interface CommentView {
  contributor_no: number;
  body: string;
  created_at: string;
}

// The store hands out the same record object until the note changes (its
// cache drops the record on every vote, comment or delete), so a view built
// once per record is never stale, and the HTTP layer can key its serialised
// body on the view object in turn.
const viewsOfRecords = new WeakMap<NoteRecord, NoteView>();

export function noteView(note: NoteRecord): NoteView {
  let view = viewsOfRecords.get(note);
  if (!view) {
    view = buildNoteView(note);
    viewsOfRecords.set(note, view);
  }
  return view;
}

function buildNoteView(note: NoteRecord): NoteView {
  return {
    id: note.id,
    contributor_no: note.contributorNo,
    title: note.title,
    body: note.body,
    tags: note.tags,
    score: note.score,
    comment_count: note.commentCount,
    created_at: iso(note.createdAt),
    supersedes: note.supersedes,
    superseded_by: note.supersededBy,
  };
}

export function searchResultView(note: NoteRecord, snipChars: number): SearchResultView {
  const { text, truncated } = snip(note.body, snipChars);
  return { ...buildNoteView(note), body: text, body_truncated: truncated };
}

export function commentView(comment: CommentRecord): CommentView {
  return { contributor_no: comment.contributorNo, body: comment.body, created_at: iso(comment.createdAt) };
}
