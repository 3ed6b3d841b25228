// The PostgreSQL engine: Drizzle's PostgreSQL dialect over Bun's built-in SQL
// client (connection.ts), one class per resource; this class composes them
// behind the Store interface. Any number of processes (replicas, `cairn
// admin`) share one database, so nothing here is remembered between calls: no
// note cache, no key memory (keyGeneration is NaN), and every read-then-write
// holds a row lock for its transaction. Search is the shared ranking of
// src/core/search over tables of our own (search.ts), written in the same
// transactions as the notes.
import type { SQL as BunSQL } from "bun";
import { count, eq } from "drizzle-orm";
import type {
  CommentRecord,
  ContributorListing,
  Counts,
  DeleteOutcome,
  KeyCandidate,
  MailKind,
  NewNote,
  NoteRecord,
  OutboxCounts,
  OutboxMail,
  Readiness,
  SearchRequest,
  Store,
  VoteOutcome,
  VoteValue,
  WebEventCount,
} from "../types.ts";
import { PostgresComments } from "./comments.ts";
import { isUnavailableError, openDatabase, type Db, type PostgresOptions } from "./connection.ts";
import { PostgresContributors } from "./contributors.ts";
import { migrateDatabase, migrationsCurrent } from "./migrate.ts";
import { PostgresNotes } from "./notes.ts";
import { PostgresOutbox } from "./outbox.ts";
import { comments, contributors, posts, votes } from "./schema.ts";
import { PostgresVotes } from "./votes.ts";
import { PostgresWebEvents } from "./web-events.ts";

export type { PostgresOptions } from "./connection.ts";

export class PostgresStore implements Store {
  readonly engine = "postgres" as const;
  /** Keys are read from the database on every request (see keyGeneration), by design. */
  readonly keySignalOffReason = null;
  /** Notes are read from the database on every request (no cache to go stale across replicas), by design. */
  readonly noteSignalOffReason = null;
  readonly searchMemoryOffReason = null;
  async searchMemoryBuilt(): Promise<void> {}
  private readonly client: BunSQL;
  private readonly db: Db;
  private readonly contributors: PostgresContributors;
  private readonly notes: PostgresNotes;
  private readonly comments: PostgresComments;
  private readonly votes: PostgresVotes;
  private readonly webEvents: PostgresWebEvents;
  private readonly outbox: PostgresOutbox;

  constructor(options: PostgresOptions) {
    ({ client: this.client, db: this.db } = openDatabase(options));
    this.contributors = new PostgresContributors(this.db, this.client);
    this.notes = new PostgresNotes(this.db, this.client);
    this.comments = new PostgresComments(this.db);
    this.votes = new PostgresVotes(this.db);
    this.webEvents = new PostgresWebEvents(this.db);
    this.outbox = new PostgresOutbox(this.db);
  }

  /** No signal files: nothing to re-map. */
  remapReplacedSignals(): string[] {
    return [];
  }

  /** A key change is seen by every replica's next request (keys are read each time). */
  get keySignalUnsettled(): boolean {
    return false;
  }

  async migrate(): Promise<void> {
    await migrateDatabase(this.db);
  }

  async readiness(): Promise<Readiness> {
    try {
      return (await migrationsCurrent(this.db)) ? { ready: true } : { ready: false, reason: "database migrations are not current" };
    } catch {
      return { ready: false, reason: "storage is not answering" };
    }
  }

  async close(): Promise<void> {
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
  async createContributor(input: { email: string; keyPrefix: string; keyDigest: Uint8Array; createdAt: number }, mail?: { kind: MailKind }) {
    return this.contributors.create(input, mail);
  }
  async keyCandidates(prefix: string): Promise<KeyCandidate[]> {
    return this.contributors.keyCandidates(prefix);
  }
  /**
   * NaN: no key is remembered, so a revoke through any replica or `cairn
   * admin` is refused on the very next request everywhere. A keyed request
   * reads its key's row anyway (one indexed lookup in the same pool).
   */
  keyGeneration(): number {
    return NaN;
  }
  async setActive(contributorNo: number, active: boolean): Promise<boolean> {
    return this.contributors.setActive(contributorNo, active);
  }
  async contributorSummary(contributorNo: number, recentLimit: number) {
    return this.contributors.summary(contributorNo, recentLimit);
  }
  async contributorList(email?: string): Promise<ContributorListing[]> {
    return this.contributors.list(email);
  }

  // ---- notes, comments, votes, search ----
  async createNote(note: NewNote, isDuplicate: (latest: { title: string; body: string; tags: string[] }) => boolean) {
    return this.notes.create(note, isDuplicate);
  }
  async getNote(id: string): Promise<NoteRecord | null> {
    return this.notes.get(id);
  }
  async deleteNote(id: string, contributorNo: number): Promise<DeleteOutcome> {
    return this.notes.delete(id, contributorNo);
  }
  async search(request: SearchRequest): Promise<NoteRecord[]> {
    return this.notes.search(request);
  }
  async listComments(noteId: string, limit: number): Promise<{ comments: CommentRecord[]; total: number } | null> {
    return this.comments.list(noteId, limit);
  }
  async addComment(noteId: string, comment: { contributorNo: number; body: string; createdAt: number }) {
    return this.comments.add(noteId, comment);
  }
  async setVote(noteId: string, contributorNo: number, value: VoteValue, at: number): Promise<VoteOutcome> {
    return this.votes.set(noteId, contributorNo, value, at);
  }

  // ---- web events ----
  async countWebEvent(day: string, event: string, postId: string | null): Promise<void> {
    return this.webEvents.count(day, event, postId);
  }
  async webEventCounts(): Promise<WebEventCount[]> {
    return this.webEvents.all();
  }

  // ---- the welcome-mail outbox (outbox.ts) ----
  async claimDueMail(now: number, limit: number, leaseMs: number): Promise<OutboxMail[]> {
    return this.outbox.claimDue(now, limit, leaseMs);
  }
  async markMailSent(id: number, at: number): Promise<void> {
    return this.outbox.markSent(id, at);
  }
  async markMailFailed(id: number, error: string, nextAttemptAt: number): Promise<void> {
    return this.outbox.markFailed(id, error, nextAttemptAt);
  }
  async markMailGivenUp(id: number, error: string, at: number): Promise<void> {
    return this.outbox.markGivenUp(id, error, at);
  }
  async outboxCounts(): Promise<OutboxCounts> {
    return this.outbox.counts();
  }
}
