// A note's row as the SQLite engine reads it, and the record it becomes
// (tags are stored as JSON text). Shared by notes.ts and search.ts.
// NOTE_SELECT lists the same columns for plain bun:sqlite statements.
import type { NewNote, NoteRecord } from "../types.ts";
import { posts } from "./schema.ts";

export const noteColumns = {
  pk: posts.pk,
  id: posts.id,
  contributorNo: posts.contributorNo,
  title: posts.title,
  body: posts.body,
  tags: posts.tags,
  score: posts.score,
  commentCount: posts.commentCount,
  createdAt: posts.createdAt,
  supersedes: posts.supersedes,
  supersededBy: posts.supersededBy,
};

type Column<K extends keyof typeof noteColumns> = (typeof noteColumns)[K]["_"];
export type NoteRow = { [K in keyof typeof noteColumns]: Column<K>["notNull"] extends true ? Column<K>["data"] : Column<K>["data"] | null };

export function toNote(row: NoteRow): NoteRecord {
  return {
    id: row.id,
    contributorNo: row.contributorNo,
    title: row.title,
    body: row.body,
    tags: JSON.parse(row.tags) as string[],
    score: row.score,
    commentCount: row.commentCount,
    createdAt: row.createdAt,
    supersedes: row.supersedes,
    supersededBy: row.supersededBy,
  };
}

/** The columns of noteColumns for a plain statement on `posts` aliased `p`. */
export const NOTE_SELECT = `p.pk, p.id, p.contributor_no AS contributorNo, p.title, p.body, p.tags, p.score, p.comment_count AS commentCount,
  p.created_at AS createdAt, p.supersedes, p.superseded_by AS supersededBy`;

/** The columns of a similar-notes listing (ListedNote) for a plain statement on `posts` aliased `p`. */
export const LISTED_SELECT = "p.pk, p.id, p.contributor_no AS contributorNo, p.title, p.score, p.created_at AS createdAt";

/**
 * The record of a note just inserted, from the values bound and the columns'
 * defaults (no score, no comment, not superseded): what reading the row back
 * would give (the store contract's create test compares the two).
 */
export function toCreated(note: NewNote, supersedes: string | null): NoteRecord {
  return {
    id: note.id,
    contributorNo: note.contributorNo,
    title: note.title,
    body: note.body,
    tags: [...note.tags],
    score: 0,
    commentCount: 0,
    createdAt: note.createdAt,
    supersedes,
    supersededBy: null,
  };
}
