// What both engines' in-memory note records share: the budget of a note
// cache and what one record costs in it. (SQLite keeps a cache behind its
// change signal; PostgreSQL keeps the notes a replica read while its note log
// says they are current, src/store/postgres/note-views.ts.)
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
