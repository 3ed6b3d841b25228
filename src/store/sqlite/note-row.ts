// A note's row as the SQLite engine reads it, and the record it becomes
// (tags are stored as JSON text). Shared by notes.ts and search.ts.
import type { NoteRecord } from "../types.ts";
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
};

export type NoteRow = { [K in keyof typeof noteColumns]: (typeof noteColumns)[K]["_"]["data"] };

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
  };
}
