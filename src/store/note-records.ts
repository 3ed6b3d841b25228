// What both engines' in-memory note records share: the budget of a note
// cache and what one record costs in it. (SQLite keeps a cache behind its
// change signal; PostgreSQL keeps the last record read of each note, reused
// only when a fresh read of its row matches it field for field.)
import type { NoteRecord } from "./types.ts";

/** Notes kept in memory at most, whatever their size; the byte budget is a setting (NOTE_CACHE_MB). */
export const NOTE_CACHE_ENTRIES = 10_000;
export const DEFAULT_NOTE_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * What a cached note costs: its strings twice (the record and the JSON body
 * the HTTP layer keeps per note version, see src/http/note-body.ts), at up to
 * two bytes per UTF-16 unit, plus the objects around them.
 */
export const noteRecordBytes = (note: NoteRecord) => 4 * (note.title.length + note.body.length + note.tags.join("").length) + 600;

/** Whether two records of a note say the same thing, every field. */
export function sameNoteRecord(a: NoteRecord, b: NoteRecord): boolean {
  return (
    a.id === b.id &&
    a.score === b.score &&
    a.commentCount === b.commentCount &&
    a.supersedes === b.supersedes &&
    a.supersededBy === b.supersededBy &&
    a.contributorNo === b.contributorNo &&
    a.createdAt === b.createdAt &&
    a.title === b.title &&
    a.body === b.body &&
    a.tags.length === b.tags.length &&
    a.tags.every((tag, i) => tag === b.tags[i])
  );
}
