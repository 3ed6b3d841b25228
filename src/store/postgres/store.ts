// The PostgreSQL engine: Drizzle's PostgreSQL dialect over Bun's built-in SQL
// client (connection.ts), one class per resource; this class composes them
// behind the Store interface. Any number of processes (replicas, `cairn
// admin`) share one database, so what is held in memory follows a log that
// every write adds to in its transaction: the in-memory postings of
// src/core/search follow the search log (search.ts, search-log.ts), as on
// SQLite; the notes a replica read (note-views.ts) and the keys it found
// valid follow the change log (note-log.ts), answered from only within a
// lease, and a key change waits the lease out before it answers. Every
// read-then-write holds a row lock for its transaction.
import type { SQL as BunSQL } from "bun";
import { count, eq } from "drizzle-orm";
import { ComposedStore } from "../composed-store.ts";
import { DEFAULT_NOTE_CACHE_BYTES } from "../note-records.ts";
import type { Counts, Readiness, Store } from "../types.ts";
import { PostgresComments } from "./comments.ts";
import { isUnavailableError, openDatabase, type Db, type PostgresOptions } from "./connection.ts";
import { PostgresContributors } from "./contributors.ts";
import { migrateDatabase, migrationsCurrent } from "./migrate.ts";
import { KeyAndLogReads } from "./note-log.ts";
import { NoteViews } from "./note-views.ts";
import { PostgresNotes } from "./notes.ts";
import { PostgresOutbox } from "./outbox.ts";
import { PostgresSearch } from "./search.ts";
import { comments, contributors, posts, votes } from "./schema.ts";
import { PostgresVotes } from "./votes.ts";
import { PostgresWebEvents } from "./web-events.ts";
import { PostgresIdempotency } from "./idempotency.ts";

export type { PostgresOptions } from "./connection.ts";

export class PostgresStore extends ComposedStore implements Store {
  readonly engine = "postgres" as const;
  /** Keys found valid are remembered while the change log says none changed (see keyGeneration). */
  readonly keySignalOffReason = null;
  /** Notes are answered from memory only while the note log says they are current (note-views.ts): no signal needed. */
  readonly noteSignalOffReason = null;
  get searchMemoryOffReason(): string | null {
    return this.searchIndex.memory.offReason;
  }
  searchMemoryBuilt(): Promise<void> {
    return this.searchIndex.memory.loaded();
  }
  readonly searchIndex: PostgresSearch;
  private readonly client: BunSQL;
  private readonly db: Db;
  protected readonly contributors: PostgresContributors;
  protected readonly notes: PostgresNotes;
  protected readonly comments: PostgresComments;
  protected readonly votes: PostgresVotes;
  protected readonly webEvents: PostgresWebEvents;
  protected readonly outbox: PostgresOutbox;
  protected readonly idempotency: PostgresIdempotency;
  private readonly keysAndLog: KeyAndLogReads;

  constructor(options: PostgresOptions) {
    super();
    ({ client: this.client, db: this.db } = openDatabase(options));
    const noteCacheBytes = options.noteCacheBytes ?? DEFAULT_NOTE_CACHE_BYTES;
    const views = new NoteViews(noteCacheBytes);
    const keysAndLog = (this.keysAndLog = new KeyAndLogReads(this.client, views, options.poolSize >= 2));
    this.contributors = new PostgresContributors(this.db, keysAndLog);
    this.searchIndex = new PostgresSearch(this.client, options.searchMemoryBytes ?? 0);
    this.notes = new PostgresNotes(this.client, this.searchIndex, views, keysAndLog, noteCacheBytes);
    this.comments = new PostgresComments(this.db, views);
    this.votes = new PostgresVotes(this.db, views);
    this.webEvents = new PostgresWebEvents(this.db);
    this.outbox = new PostgresOutbox(this.db);
    this.idempotency = new PostgresIdempotency(this.db);
  }

  /** No signal files: nothing to re-map. */
  remapReplacedSignals(): string[] {
    return [];
  }

  /** A key change has waited the lease out when it answers (note-log.ts): seen by every replica's next request. */
  get keySignalUnsettled(): boolean {
    return false;
  }

  async migrate(): Promise<void> {
    await migrateDatabase(this.db);
    await this.searchIndex.memory.start();
  }

  async readiness(): Promise<Readiness> {
    try {
      return (await migrationsCurrent(this.db)) ? { ready: true } : { ready: false, reason: "database migrations are not current" };
    } catch {
      return { ready: false, reason: "storage is not answering" };
    }
  }

  async close(): Promise<void> {
    this.keysAndLog.close();
    this.searchIndex.memory.close();
    await this.client.close({ timeout: 5 });
  }

  isUnavailable(error: unknown): boolean {
    return isUnavailableError(error);
  }

  async backup(): Promise<void> {
    throw new Error("on PostgreSQL, back up with pg_dump (see docs/deploy.md); `cairn admin backup` copies the SQLite engine only");
  }

  async counts(): Promise<Counts> {
    const n = async (table: typeof contributors | typeof posts | typeof comments | typeof votes, where?: ReturnType<typeof eq>) =>
      Number((await this.db.select({ n: count() }).from(table).where(where))[0].n);
    return {
      contributors: await n(contributors),
      activeContributors: await n(contributors, eq(contributors.active, true)),
      notes: await n(posts),
      comments: await n(comments),
      votes: await n(votes),
    };
  }

  // ---- contributors and keys ----
  /**
   * Moves when this replica reads a key change from the change log; NaN
   * outside the lease (note-log.ts). A key change (a revoke through any
   * replica or `cairn admin`, a new key) waits the lease out after it commits
   * before it answers, so it is refused on the very next request everywhere.
   */
  keyGeneration(): number {
    return this.keysAndLog.keyGeneration();
  }

  // Contributors, notes, comments, votes, web events and the outbox: ComposedStore hands them to the resources.
}
