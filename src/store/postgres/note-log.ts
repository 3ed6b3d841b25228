// The change log (note_log, drizzle/postgres/0005_note_log.sql) as a replica
// reads it: the notes updated or deleted, and a row 'keys' for every change of
// a key's standing, each written in its transaction by a trigger. A replica
// reads it every LOG_FOLLOW_MS, and in the statement that reads the keys of
// the requests of the moment (one statement per turn of the event loop for
// every key asked for meanwhile, coalesced-reads.ts). What it learns keeps
// two memories current: the note views (note-views.ts) and the keys found
// valid (src/core/known-keys.ts, through keyGeneration). Both are answered
// from only within the lease (LOG_LEASE_MS after the last log read was sent).
//
// A revoke holds on the next request at every replica: a key change waits
// KEY_CHANGE_WAIT_MS (more than the lease) after it commits before it
// answers, so by then every replica either read the log after the commit (and
// forgot every key it remembered) or holds no lease (and reads keys from the
// database). docs/design.md, "Keys and authentication".
//
// Replicas commit concurrently, so a row's seq is not its commit order: as
// for the search log (search-log.ts), a replica's place is the snapshot of its
// last read, and the next read takes the rows visible now whose transaction
// was not yet visible in that snapshot (pg_visible_in_snapshot). A memory is
// dropped on any change, so reading a row twice does no harm.
import type { ReservedSQL, SQL as BunSQL } from "bun";
import type { KeyCandidate } from "../types.ts";
import { CoalescedReads, textArray } from "./coalesced-reads.ts";
import { isUnavailableError } from "./connection.ts";
import { LOG_FOLLOW_MS, LOG_LEASE_MS, type NoteViews } from "./note-views.ts";

/** The id a key change logs (the trigger on contributors): no note has it. */
export const KEYS_CHANGED = "keys";
/** What a key change (revoke, activate, new key) waits after it commits before it answers: the lease, and a margin. */
export const KEY_CHANGE_WAIT_MS = LOG_LEASE_MS + 50;

/**
 * Key reads in flight at most. Two: with one in flight a request waited for
 * the read before its own to come back (docs/benchmarks.md, "Issue 20: note views").
 */
export const KEY_READS_IN_FLIGHT = 2;
/** Log rows kept: a replica that has not read the log over this many changes forgets all its views. */
export const NOTE_LOG_KEEP = 10_000;
/** The log is trimmed once per this many rows (by whichever replica reads past the mark first). */
export const NOTE_LOG_TRIM_EVERY = 1_024;

interface KeyRow {
  key_prefix: string;
  contributor_no: number;
  key_digest: Uint8Array;
  active: boolean;
}

/** The statement's rows: one per key found, and one (key_prefix null) for the log. */
interface Row extends KeyRow {
  snap: string | null;
  trimmed: boolean | null;
  changed: string[] | null;
  newest: string | null;
}

/**
 * The key rows of `prefixes`, and the ids of the notes changed since snapshot
 * `from` (null: none yet, which reads as trimmed), with this statement's
 * snapshot. The log rows are found by the xid index; the snapshot text is
 * parsed once (OFFSET 0), as search-log.ts does.
 */
export function keysAndChanges(client: BunSQL, prefixes: string[], from: string | null): Promise<Row[]> {
  return client`
    SELECT key_prefix, contributor_no, key_digest, active,
           NULL::text AS snap, NULL::boolean AS trimmed, NULL::text[] AS changed, NULL::bigint AS newest
      FROM contributors WHERE key_prefix = ANY(${textArray(prefixes)}::text[])
    UNION ALL
    SELECT NULL, NULL, NULL, NULL, pg_current_snapshot()::text,
           f.snapshot IS NULL OR coalesce((SELECT upto FROM note_log_trim), '0'::xid8) >= pg_snapshot_xmin(f.snapshot),
           c.changed, c.newest
      FROM (SELECT ${from}::text::pg_snapshot AS snapshot OFFSET 0) f
     CROSS JOIN LATERAL (
       SELECT array_agg(DISTINCT l.id) AS changed, max(l.seq) AS newest FROM note_log l
        WHERE l.xid >= pg_snapshot_xmin(f.snapshot) AND NOT pg_visible_in_snapshot(l.xid, f.snapshot)) c` as Promise<Row[]>;
}

export class KeyAndLogReads {
  private readonly reads: CoalescedReads<KeyRow[], KeyCandidate[]>;
  /** The newest log row seen: the log is trimmed when it passes a multiple of NOTE_LOG_TRIM_EVERY. */
  private newest = 0;
  /** Moves whenever a log read names a key change (or was trimmed past this replica's place). */
  private generation = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  private closed = false;
  /**
   * The connection the key and log reads go out on, reserved from the pool
   * for them while the replica follows the log. Through the pool they queued
   * behind the requests' statements: when every connection was busy (creates
   * at 32 connections on a saturated host) a log read could come back more
   * than the lease after it was sent, and each lapse then cost a key read for
   * every key in use (docs/benchmarks.md, "Issue 20: own notes indexed at commit, the lease on a
   * connection of its own").
   */
  private connection: Promise<ReservedSQL> | null = null;

  constructor(
    private readonly client: BunSQL,
    private readonly views: NoteViews,
    /** Reserve a connection for the reads (false with a pool of one: it would hold the only connection). */
    private readonly ownConnection = true,
  ) {
    this.reads = new CoalescedReads(
      async (prefixes) => {
        const sentAt = performance.now();
        const rows = await this.onOwnConnection((sql) => keysAndChanges(sql, prefixes, this.views.position));
        const byPrefix = new Map<string, KeyRow[]>();
        for (const row of rows) {
          if (row.key_prefix === null) {
            const changed = row.changed ?? [];
            // Before the lease is renewed (same turn): no request sees the new lease with the old generation.
            if (row.trimmed || changed.includes(KEYS_CHANGED)) this.generation++;
            this.views.applied({ sentAt, snapshot: row.snap!, trimmed: row.trimmed!, changed });
            if (row.newest !== null) this.trimNow(Number(row.newest));
            continue;
          }
          const list = byPrefix.get(row.key_prefix);
          if (list) list.push(row);
          else byPrefix.set(row.key_prefix, [row]);
        }
        return byPrefix;
      },
      (rows = []): KeyCandidate[] => rows.map((row) => ({ contributorNo: row.contributor_no, keyDigest: new Uint8Array(row.key_digest), active: row.active })),
      KEY_READS_IN_FLIGHT,
    );
  }

  /** The key rows of a prefix, read after this call (with the other requests' of this moment); the views follow the log in the same statement. */
  keyCandidates(prefix: string): Promise<KeyCandidate[]> {
    return this.reads.read(prefix);
  }

  /** Reads the log (with any keys asked for meanwhile): settles when the views are level with it. */
  follow(): Promise<void> {
    return this.reads.sent();
  }

  /**
   * Store.keyGeneration: a number that moves when this replica reads a key
   * change from the log; NaN outside the lease (nothing may be remembered
   * then). The first call starts the reads on a timer (a `serve` process;
   * `cairn admin` never asks).
   */
  keyGeneration(): number {
    if (this.timer === null && !this.closed) this.startFollowing();
    return this.views.fresh ? this.generation : NaN;
  }

  /** The log read every LOG_FOLLOW_MS, so the lease holds while no request reads a key. */
  startFollowing(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => void this.follow().catch(() => {}), LOG_FOLLOW_MS);
    this.timer.unref?.();
    void this.follow().catch(() => {});
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.dropConnection();
  }

  /** Runs a read on the reserved connection (reserved on first use; again after it failed); on the pool before following starts and after close. */
  private async onOwnConnection<T>(read: (sql: BunSQL) => Promise<T>): Promise<T> {
    if (this.timer === null || !this.ownConnection) return read(this.client);
    const pending = (this.connection ??= this.client.reserve());
    let connection: ReservedSQL;
    try {
      connection = await pending;
    } catch (error) {
      if (this.connection === pending) this.connection = null;
      throw error;
    }
    try {
      return await read(connection);
    } catch (error) {
      // A broken connection is given back; the next read reserves another.
      if (isUnavailableError(error) && this.connection === pending) this.dropConnection();
      throw error;
    }
  }

  private dropConnection(): void {
    const pending = this.connection;
    this.connection = null;
    void pending?.then(
      (connection) => connection.release(),
      () => {},
    );
  }

  private trimNow(newest: number): void {
    const passed = Math.floor(newest / NOTE_LOG_TRIM_EVERY) > Math.floor(this.newest / NOTE_LOG_TRIM_EVERY);
    this.newest = Math.max(this.newest, newest);
    if (passed) void trimNoteLog(this.client, newest).catch(() => {});
  }
}

/**
 * Deletes the log rows past the newest `keep`, at most up to `seq`, and only
 * those of transactions older than every running one, recording the newest
 * transaction id deleted: a replica whose place is older forgets its views.
 */
export async function trimNoteLog(client: BunSQL, seq: number, keep = NOTE_LOG_KEEP): Promise<void> {
  await client`
    WITH gone AS (
      DELETE FROM note_log WHERE seq <= ${seq - keep} AND xid < pg_snapshot_xmin(pg_current_snapshot()) RETURNING xid
    ), newest AS (SELECT xid FROM gone ORDER BY xid DESC LIMIT 1)
    INSERT INTO note_log_trim (upto) SELECT xid FROM newest
    ON CONFLICT ("only") DO UPDATE SET upto = excluded.upto WHERE note_log_trim.upto < excluded.upto`;
}
