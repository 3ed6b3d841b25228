// Note views on PostgreSQL: the notes this replica read, kept in memory and
// answered from while this replica knows they are current, so that a keyed
// GET sends no statement of its own (docs/design.md, "Note views on
// PostgreSQL"; figures in docs/benchmarks.md, "Issue 20: note views").
//
// What a GET shows can change through any replica (a vote, a comment, a
// supersede, a delete), so every update or delete of a note row is logged in
// its transaction by a trigger (note_log, drizzle/postgres/0005_note_log.sql).
// This replica reads the log in commit order (note-log.ts: the rows whose
// transaction was not yet visible in the snapshot of its last read, as the
// search log is read), every LOG_FOLLOW_MS and with every key it reads, and
// drops the views it names. A view is answered from only while the last read
// of the log was sent at most LOG_LEASE_MS ago (the lease): another replica's
// change shows within that; this replica's own at once (it drops the view
// when its write commits).
//
// A row read races the log: a row read before a change commits can come back
// after the log read that dropped the note's view. So each row read is
// registered while in flight, and a change seen meanwhile keeps its answer
// out of memory (it still answers the request that asked: it was read after
// that request arrived).
//
// This class is memory only: no SQL, no clock of its own beyond `now`.
import { BoundedCache } from "../bounded-cache.ts";
import { NOTE_CACHE_ENTRIES, noteRecordBytes } from "../note-records.ts";
import type { NoteRecord } from "../types.ts";

/**
 * The lease: what this replica holds in memory (note views, and the keys it
 * found valid, note-log.ts) is answered from only while the last log read
 * was sent at most this long ago. Another replica's change shows within it;
 * a key change waits it out before answering (KEY_CHANGE_WAIT_MS), so a
 * revoke holds on the next request at every replica.
 */
export const LOG_LEASE_MS = 250;
/** How often a replica reads the log without being asked, well inside the lease. */
export const LOG_FOLLOW_MS = 50;

/** What one read of the note log found (note-log.ts). */
export interface LogRead {
  /** When the statement was sent (performance.now()): its snapshot is later. */
  sentAt: number;
  /** That statement's snapshot: the place the next read starts from. */
  snapshot: string;
  /** The log no longer reaches back to the place this read started from (or there was none): every view may be old. */
  trimmed: boolean;
  /** Ids of the notes changed since that place. */
  changed: string[];
}

/** Row reads in flight for one note, and whether a change to it was seen since the first was sent. */
interface Fill {
  reads: number;
  changed: boolean;
}

export class NoteViews {
  private readonly views: BoundedCache<string, NoteRecord>;
  /** The snapshot of the newest log read applied (null: none yet), and when that read was sent. */
  private place: string | null = null;
  private placeSentAt = -Infinity;
  private readonly filling = new Map<string, Fill>();

  constructor(
    bytes: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.views = new BoundedCache(NOTE_CACHE_ENTRIES, bytes, noteRecordBytes);
  }

  /** Where the next log read starts (null: from nowhere, which forgets every view). */
  get position(): string | null {
    return this.place;
  }

  /** Whether views may be answered from now (the last log read was sent recently enough). */
  get fresh(): boolean {
    return this.now() - this.placeSentAt <= LOG_LEASE_MS;
  }

  /** The note's view when it is held and current; undefined: read the row. */
  current(id: string): NoteRecord | undefined {
    return this.fresh ? this.views.get(id) : undefined;
  }

  /** Before a statement reading these notes' rows is sent. */
  reading(ids: Iterable<string>): void {
    for (const id of ids) {
      const fill = this.filling.get(id);
      if (fill) fill.reads++;
      else this.filling.set(id, { reads: 1, changed: false });
    }
  }

  /** After it answered (`found` by id; null: it failed): each record is kept unless its note changed meanwhile. */
  read(ids: Iterable<string>, found: ReadonlyMap<string, NoteRecord> | null): void {
    for (const id of ids) {
      const fill = this.filling.get(id);
      if (!fill) continue;
      const record = found?.get(id);
      if (record && !fill.changed) this.views.set(id, record);
      if (--fill.reads === 0) this.filling.delete(id);
    }
  }

  /** These notes changed (a log read saw it, or this replica committed the change): their views go. */
  changed(ids: Iterable<string | null | undefined>): void {
    for (const id of ids) {
      if (!id) continue;
      this.views.delete(id);
      const fill = this.filling.get(id);
      if (fill) fill.changed = true;
    }
  }

  /** A log read: the notes it names are dropped (all of them when the log was trimmed past this replica's place). */
  applied(read: LogRead): void {
    if (read.trimmed) {
      this.views.clear();
      for (const fill of this.filling.values()) fill.changed = true;
    } else this.changed(read.changed);
    // Reads may answer out of order (two in flight): the place is the snapshot of the last one sent.
    if (read.sentAt >= this.placeSentAt) {
      this.place = read.snapshot;
      this.placeSentAt = read.sentAt;
    }
  }

  /** Views held (for tests and figures). */
  get size(): number {
    return this.views.size;
  }
}
