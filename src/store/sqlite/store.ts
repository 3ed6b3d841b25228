// The SQLite engine: one file in DATA_DIR, WAL mode, foreign keys on.
// bun:sqlite is synchronous, so a transaction runs to completion before any
// other request's code runs. Request writes are group-committed (see write());
// BEGIN IMMEDIATE orders writers across processes (the server and `cairn admin`).
import { Database, type Statement } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { and, count, desc, eq, sql } from "drizzle-orm";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type {
  CommentRecord,
  ContributorListing,
  KeyCandidate,
  Counts,
  DeleteOutcome,
  MailKind,
  NewNote,
  NoteRecord,
  Readiness,
  SearchRequest,
  Store,
  VoteOutcome,
  VoteValue,
  WebEventCount,
} from "../types.ts";
import { migrations } from "./migrations.ts";
import { BoundedCache } from "../bounded-cache.ts";
import { ChangeSignal, NOTE_SIGNAL_FILE } from "./change-signal.ts";
import { SqliteOutbox } from "./outbox.ts";
import { SqliteSearch } from "./search.ts";
import * as schema from "./schema.ts";
import { comments, contributors, posts, votes, webEventCounts } from "./schema.ts";

const MIGRATIONS_TABLE = "__drizzle_migrations";

/** Notes kept in memory at most, whatever their size; the byte budget is a setting (NOTE_CACHE_MB). */
const NOTE_CACHE_ENTRIES = 10_000;
const DEFAULT_NOTE_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * What a cached note costs: its strings twice (the record and the JSON body
 * the HTTP layer keeps per note version, see src/http/note-body.ts), at up to
 * two bytes per UTF-16 unit, plus the objects around them.
 */
const noteBytes = (note: NoteRecord) => 4 * (note.title.length + note.body.length + note.tags.join("").length) + 600;

/** The most request writes committed together. */
const MAX_WRITE_BATCH = 256;

// Engine failures that mean "storage cannot answer now", not a bug.
const UNAVAILABLE_CODES = ["SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_IOERR", "SQLITE_FULL", "SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PROTOCOL"];

export interface SqliteOptions {
  dataDir: string;
  durability?: "normal" | "full";
  /** Byte budget of the note cache (estimated; see noteBytes). */
  noteCacheBytes?: number;
}

export function databasePath(dataDir: string): string {
  return join(dataDir, "cairn.db");
}

const noteColumns = {
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

function toNote(row: NoteRow): NoteRecord {
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

export class SqliteStore implements Store {
  readonly engine = "sqlite" as const;
  readonly sqlite: Database;
  private readonly db: BunSQLiteDatabase<typeof schema>;
  private prepared?: ReturnType<SqliteStore["prepare"]>;
  /**
   * Recently read notes. A note read costs two B-tree lookups on a UUID index
   * and half of a keyed GET's time; a hit costs a Map lookup. Every write that
   * changes a note (vote, comment, delete) drops its entry inside the write, so
   * no stale score or count is served, and bumps the note signal after COMMIT:
   * another server on the same directory sees the signal move on its next
   * read and drops its whole cache (see getNote).
   */
  private readonly noteCache: BoundedCache<string, NoteRecord>;
  /** Announces key changes to every process on this data directory (see change-signal.ts). */
  private keyChanges: ChangeSignal;
  /** Moves when a signal file is re-mapped, so the key generation moves too. */
  private keyEpoch = 0;
  /** Announces note changes (vote, comment, delete) to every server on this data directory. */
  private noteChanges: ChangeSignal;
  /** The note generation the cache reflects: every change up to it is in the cache. */
  private notesSeen = NaN;
  /** Set by a write that changed a note, so its batch bumps the note signal after COMMIT. */
  private notesChanged = false;
  private writeQueue: { work: () => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void }[] = [];
  private flushScheduled = false;
  private readonly outbox: SqliteOutbox;
  /** The search index, written in the same transactions as the notes (see search.ts). */
  readonly searchIndex: SqliteSearch;

  private readonly dataDir: string;

  constructor(options: SqliteOptions) {
    this.dataDir = options.dataDir;
    // The file holds e-mail addresses and key digests: owner-only from the start
    // (SQLite gives the -wal and -shm files the database file's mode).
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    const file = databasePath(options.dataDir);
    const isNew = !existsSync(file);
    this.sqlite = new Database(file, { create: true, strict: true });
    if (isNew) chmodSync(file, 0o600);
    this.sqlite.exec("PRAGMA busy_timeout = 5000");
    this.sqlite.exec("PRAGMA journal_mode = WAL");
    this.sqlite.exec(`PRAGMA synchronous = ${options.durability === "full" ? "FULL" : "NORMAL"}`);
    this.sqlite.exec("PRAGMA foreign_keys = ON");
    this.sqlite.exec("PRAGMA temp_store = MEMORY");
    this.sqlite.exec("PRAGMA cache_size = -32000");
    this.db = drizzle(this.sqlite, { schema });
    this.outbox = new SqliteOutbox(this.sqlite, this.db);
    this.searchIndex = new SqliteSearch(this.sqlite);
    this.keyChanges = ChangeSignal.open(options.dataDir);
    this.noteChanges = ChangeSignal.open(options.dataDir, NOTE_SIGNAL_FILE);
    this.notesSeen = this.noteChanges.read();
    this.noteCache = new BoundedCache(NOTE_CACHE_ENTRIES, options.noteCacheBytes ?? DEFAULT_NOTE_CACHE_BYTES, noteBytes);
  }

  /** True when this process made the key signal file (it was missing when the store opened). */
  get keySignalCreated(): boolean {
    return this.keyChanges.created;
  }

  /**
   * Re-maps signal files that were removed or replaced since they were
   * mapped, and says which; the server calls it every second. A re-mapped
   * key signal moves the key generation (remembered keys are forgotten) and
   * a re-mapped note signal empties the note cache.
   */
  remapReplacedSignals(): string[] {
    const remapped: string[] = [];
    if (this.keyChanges.replaced()) {
      this.keyChanges = ChangeSignal.open(this.dataDir);
      this.keyEpoch++;
      remapped.push(this.keyChanges.path);
    }
    if (this.noteChanges.replaced()) {
      this.noteChanges = ChangeSignal.open(this.dataDir, NOTE_SIGNAL_FILE);
      this.notesSeen = NaN;
      remapped.push(this.noteChanges.path);
    }
    return remapped;
  }

  /** Null when note changes are announced across processes; otherwise why not (notes are then never cached). */
  get noteSignalOffReason(): string | null {
    return this.noteChanges.unavailableReason;
  }

  /** True when the key signal file this process bumps is no longer the one at its path. */
  get keySignalReplaced(): boolean {
    return this.keyChanges.replaced();
  }

  keySignalUnsettled(): boolean {
    return this.keySignalCreated || this.keySignalReplaced;
  }

  /** Null when key-standing changes are announced across processes; otherwise why not (keys are then never remembered). */
  get keySignalOffReason(): string | null {
    return this.keyChanges.unavailableReason;
  }

  /** Hot statements, prepared once on first use (after migrations have run). */
  private get statements() {
    return (this.prepared ??= this.prepare());
  }

  // Every per-request query is prepared once: building a Drizzle query costs
  // far more than running it on an indexed SQLite table.
  private prepare() {
    const db = this.db;
    const id = sql.placeholder("id");
    const no = sql.placeholder("contributorNo");
    const postPk = sql.placeholder("postPk");
    const voteOf = and(eq(votes.postPk, postPk), eq(votes.contributorNo, no));
    return {
      // The two reads of every keyed GET, as plain bun:sqlite statements:
      // Drizzle's row mapping costs a third of their time.
      keyCandidates: this.sqlite.query<KeyCandidate, [string]>(
        "SELECT contributor_no AS contributorNo, key_digest AS keyDigest, active = 1 AS active FROM contributors WHERE key_prefix = ?",
      ),
      noteById: this.sqlite.query<NoteRow, [string]>(
        `SELECT pk, id, contributor_no AS contributorNo, title, body, tags, score, comment_count AS commentCount,
                created_at AS createdAt FROM posts WHERE id = ?`,
      ),
      insertContributor: db
        .insert(contributors)
        .values({
          email: sql.placeholder("email"),
          keyPrefix: sql.placeholder("keyPrefix"),
          keyDigest: sql.placeholder("keyDigest"),
          createdAt: sql.placeholder("createdAt"),
        })
        .returning({ contributorNo: contributors.contributorNo, createdAt: contributors.createdAt })
        .prepare(),
      contributor: db
        .select({ contributorNo: contributors.contributorNo, createdAt: contributors.createdAt })
        .from(contributors)
        .where(eq(contributors.contributorNo, no))
        .prepare(),
      postCount: db.select({ postCount: count() }).from(posts).where(eq(posts.contributorNo, no)).prepare(),
      recentPosts: db
        .select({ id: posts.id, title: posts.title, createdAt: posts.createdAt })
        .from(posts)
        .where(eq(posts.contributorNo, no))
        .orderBy(desc(posts.pk))
        .limit(sql.placeholder("limit"))
        .prepare(),
      latestNote: db
        .select({ id: posts.id, title: posts.title, body: posts.body, tags: posts.tags })
        .from(posts)
        .where(eq(posts.contributorNo, no))
        .orderBy(desc(posts.pk))
        .limit(1)
        .prepare(),
      insertNote: db
        .insert(posts)
        .values({
          id,
          contributorNo: no,
          title: sql.placeholder("title"),
          body: sql.placeholder("body"),
          tags: sql.placeholder("tags"),
          createdAt: sql.placeholder("createdAt"),
        })
        .returning(noteColumns)
        .prepare(),
      notePk: db.select({ pk: posts.pk, contributorNo: posts.contributorNo }).from(posts).where(eq(posts.id, id)).prepare(),
      deleteNote: db.delete(posts).where(eq(posts.pk, postPk)).prepare(),
      // The newest first, to be cut at the limit and reversed.
      comments: db
        .select({ contributorNo: comments.contributorNo, body: comments.body, createdAt: comments.createdAt })
        .from(comments)
        .where(eq(comments.postPk, postPk))
        .orderBy(desc(comments.pk))
        .limit(sql.placeholder("limit"))
        .prepare(),
      commentCount: db.select({ commentCount: posts.commentCount }).from(posts).where(eq(posts.pk, postPk)).prepare(),
      insertComment: db
        .insert(comments)
        .values({ postPk, contributorNo: no, body: sql.placeholder("body"), createdAt: sql.placeholder("createdAt") })
        .prepare(),
      bumpCommentCount: db
        .update(posts)
        .set({ commentCount: sql`${posts.commentCount} + 1` })
        .where(eq(posts.pk, postPk))
        .returning({ commentCount: posts.commentCount })
        .prepare(),
      vote: db.select({ value: votes.value }).from(votes).where(voteOf).prepare(),
      deleteVote: db.delete(votes).where(voteOf).prepare(),
      upsertVote: db
        .insert(votes)
        .values({ postPk, contributorNo: no, value: sql.placeholder("value"), createdAt: sql.placeholder("at") })
        .onConflictDoUpdate({
          target: [votes.postPk, votes.contributorNo],
          set: { value: sql`excluded.value`, createdAt: sql`excluded.created_at` },
        })
        .prepare(),
      addScore: db
        .update(posts)
        .set({ score: sql`${posts.score} + ${sql.placeholder("delta")}` })
        .where(eq(posts.pk, postPk))
        .returning({ score: posts.score })
        .prepare(),
      score: db.select({ score: posts.score }).from(posts).where(eq(posts.pk, postPk)).prepare(),
      countWebEvent: db
        .insert(webEventCounts)
        .values({ day: sql.placeholder("day"), event: sql.placeholder("event"), postId: sql.placeholder("postId"), count: 1 })
        .onConflictDoUpdate({
          target: [webEventCounts.day, webEventCounts.event, webEventCounts.postId],
          set: { count: sql`${webEventCounts.count} + 1` },
        })
        .prepare(),
    };
  }

  private immediate<T>(work: () => T): T {
    return this.sqlite.transaction(work).immediate();
  }

  /**
   * Group commit: request writes queued during one turn of the event loop run
   * in ONE write transaction, each inside its own savepoint (a failing write
   * rolls back alone), in arrival order. Each promise settles after COMMIT, so
   * an acknowledged write is durable. One commit per batch instead of per
   * request is what lets SQLite + FTS5 take thousands of notes a second.
   */
  private write<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.writeQueue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flushWrites());
      }
    });
  }

  private txStatements?: Record<"begin" | "savepoint" | "release" | "rollbackTo" | "commit" | "rollback", Statement>;
  private get tx() {
    return (this.txStatements ??= {
      begin: this.sqlite.prepare("BEGIN IMMEDIATE"),
      savepoint: this.sqlite.prepare("SAVEPOINT job"),
      release: this.sqlite.prepare("RELEASE job"),
      rollbackTo: this.sqlite.prepare("ROLLBACK TO job"),
      commit: this.sqlite.prepare("COMMIT"),
      rollback: this.sqlite.prepare("ROLLBACK"),
    });
  }

  /** Inside a write: drop the note's cache entry and have the batch announce the change after COMMIT. */
  private noteChanged(id: string): void {
    this.noteCache.delete(id);
    this.notesChanged = true;
  }

  /** After COMMIT. When nobody else bumped meanwhile, our cache is still current: only our own entries changed, and they are gone. */
  private announceNoteChanges(): void {
    this.notesChanged = false;
    const before = this.noteChanges.bump();
    if (before === this.notesSeen) this.notesSeen = (before + 1) | 0;
  }

  private flushWrites(): void {
    this.flushScheduled = false;
    const jobs = this.writeQueue.splice(0, MAX_WRITE_BATCH);
    if (this.writeQueue.length > 0) {
      this.flushScheduled = true;
      setImmediate(() => this.flushWrites());
    }
    if (jobs.length === 0) return;
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      this.tx.begin.run();
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    for (const job of jobs) {
      this.tx.savepoint.run();
      try {
        outcomes.push({ ok: true, value: job.work() });
        this.tx.release.run();
      } catch (error) {
        this.tx.rollbackTo.run();
        this.tx.release.run();
        outcomes.push({ ok: false, error });
      }
    }
    try {
      this.tx.commit.run();
    } catch (error) {
      this.notesChanged = false;
      try {
        this.tx.rollback.run();
      } catch {
        // already rolled back by SQLite
      }
      for (const job of jobs) job.reject(error);
      return;
    }
    if (this.notesChanged) this.announceNoteChanges();
    jobs.forEach((job, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.error);
    });
  }

  async migrate(): Promise<void> {
    this.sqlite.exec(
      `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`,
    );
    this.immediate(() => {
      // Read inside the write lock so two processes never apply the same step.
      const last = this.sqlite
        .query<{ created_at: number }, []>(`SELECT created_at FROM ${MIGRATIONS_TABLE} ORDER BY created_at DESC LIMIT 1`)
        .get();
      for (const migration of migrations) {
        if (last && Number(last.created_at) >= migration.createdAt) continue;
        for (const statement of migration.statements) this.sqlite.exec(statement);
        this.sqlite
          .query(`INSERT INTO ${MIGRATIONS_TABLE} (hash, created_at) VALUES (?, ?)`)
          .run(migration.hash, migration.createdAt);
      }
      // Rows finished before addresses were dropped on sending (issue 12) lose theirs now.
      this.outbox.forgetFinishedAddresses();
      this.searchIndex.catchUp();
    });
  }

  async readiness(): Promise<Readiness> {
    try {
      const last = this.sqlite
        .query<{ created_at: number }, []>(`SELECT created_at FROM ${MIGRATIONS_TABLE} ORDER BY created_at DESC LIMIT 1`)
        .get();
      const newest = migrations[migrations.length - 1];
      if (!last || Number(last.created_at) < newest.createdAt) return { ready: false, reason: "database migrations are not current" };
      return { ready: true };
    } catch (error) {
      return { ready: false, reason: "storage is not answering" };
    }
  }

  async close(): Promise<void> {
    try {
      this.sqlite.exec("PRAGMA optimize");
    } catch {
      // closing matters more than the optimiser hint
    }
    this.sqlite.close();
  }

  async createContributor(
    input: { email: string; keyPrefix: string; keyDigest: Uint8Array; createdAt: number },
    mail?: { kind: MailKind },
  ) {
    const insert = () => this.statements.insertContributor.get({ ...input, keyDigest: Buffer.from(input.keyDigest) })!;
    // The contributor and its welcome mail commit together or not at all.
    return this.write(() => {
      const contributor = insert();
      if (mail) this.outbox.enqueue({ contributorNo: contributor.contributorNo, recipient: input.email, kind: mail.kind, createdAt: input.createdAt });
      return contributor;
    });
  }

  async keyCandidates(prefix: string): Promise<KeyCandidate[]> {
    // SQLite answers `active = 1` as 0 or 1; the interface (and the contract suite) say boolean.
    return this.statements.keyCandidates.all(prefix).map((c) => ({ ...c, active: Boolean(c.active) }));
  }

  keyGeneration(): number {
    // The epoch keeps the value moving when a replaced file is re-mapped (a new file starts at 0 again).
    return this.keyChanges.read() + this.keyEpoch * 2 ** 33;
  }

  async setActive(contributorNo: number, active: boolean): Promise<boolean> {
    const updated = this.db
      .update(contributors)
      .set({ active })
      .where(eq(contributors.contributorNo, contributorNo))
      .returning({ contributorNo: contributors.contributorNo })
      .all();
    // Committed (autocommit): every process forgets the keys it remembered before its next request.
    this.keyChanges.bump();
    return updated.length > 0;
  }

  async contributorSummary(contributorNo: number, recentLimit: number) {
    const contributor = this.statements.contributor.get({ contributorNo });
    if (!contributor) return null;
    // No write of this process can run between these synchronous reads, and
    // only this process writes notes, so the count and the list agree.
    return {
      ...contributor,
      postCount: this.statements.postCount.get({ contributorNo })!.postCount,
      recentPosts: this.statements.recentPosts.all({ contributorNo, limit: recentLimit }),
    };
  }

  async createNote(note: NewNote, isDuplicate: (latest: { title: string; body: string; tags: string[] }) => boolean) {
    return this.write((): NoteRecord | { duplicateOf: string } => {
      const latest = this.statements.latestNote.get({ contributorNo: note.contributorNo });
      if (latest && isDuplicate({ title: latest.title, body: latest.body, tags: JSON.parse(latest.tags) })) return { duplicateOf: latest.id };
      const row = this.statements.insertNote.get({ ...note, tags: JSON.stringify(note.tags) })!;
      this.searchIndex.add({ pk: row.pk, title: note.title, tags: note.tags, body: note.body });
      return toNote(row);
    });
  }

  async getNote(id: string): Promise<NoteRecord | null> {
    // Read before the row: a change committed meanwhile moves it past what is cached.
    const generation = this.noteChanges.read();
    if (generation !== this.notesSeen) {
      // Another process changed a note (or the signal is off: NaN never equals).
      this.noteCache.clear();
      this.notesSeen = generation;
    }
    const cached = this.noteCache.get(id);
    if (cached) return cached;
    const row = this.statements.noteById.get(id);
    if (!row) return null;
    const note = toNote(row);
    if (!Number.isNaN(generation)) this.noteCache.set(id, note);
    return note;
  }

  async deleteNote(id: string, contributorNo: number): Promise<DeleteOutcome> {
    return this.write((): DeleteOutcome => {
      const note = this.statements.notePk.get({ id });
      if (!note) return "missing";
      if (note.contributorNo !== contributorNo) return "not_author";
      this.noteChanged(id);
      // Comments and votes go by ON DELETE CASCADE.
      this.searchIndex.remove(note.pk);
      this.statements.deleteNote.run({ postPk: note.pk });
      return "deleted";
    });
  }

  async listComments(noteId: string, limit: number): Promise<{ comments: CommentRecord[]; total: number } | null> {
    const note = this.statements.notePk.get({ id: noteId });
    if (!note) return null;
    // Synchronous reads: no write runs between them, so the count and the list agree.
    const total = this.statements.commentCount.get({ postPk: note.pk })!.commentCount;
    return { comments: this.statements.comments.all({ postPk: note.pk, limit }).reverse(), total };
  }

  async addComment(noteId: string, comment: { contributorNo: number; body: string; createdAt: number }) {
    return this.write(() => {
      const note = this.statements.notePk.get({ id: noteId });
      if (!note) return null;
      this.noteChanged(noteId);
      this.statements.insertComment.run({ postPk: note.pk, ...comment });
      const { commentCount } = this.statements.bumpCommentCount.get({ postPk: note.pk })!;
      return { comment, commentCount };
    });
  }

  async setVote(noteId: string, contributorNo: number, value: VoteValue, at: number): Promise<VoteOutcome> {
    return this.write((): VoteOutcome => {
      const note = this.statements.notePk.get({ id: noteId });
      if (!note) return { kind: "missing" };
      if (note.contributorNo === contributorNo) return { kind: "own_note" };
      this.noteChanged(noteId);
      const key = { postPk: note.pk, contributorNo };
      const previous = (this.statements.vote.get(key)?.value ?? 0) as VoteValue;
      if (previous === value) return { kind: "ok", score: this.statements.score.get(key)!.score, value };
      if (value === 0) this.statements.deleteVote.run(key);
      else this.statements.upsertVote.run({ ...key, value, at });
      const { score } = this.statements.addScore.get({ ...key, delta: value - previous })!;
      return { kind: "ok", score, value };
    });
  }

  async search(request: SearchRequest): Promise<NoteRecord[]> {
    return (await this.searchIndex.search(request)).map(toNote);
  }

  isUnavailable(error: unknown): boolean {
    const code = (error as { code?: unknown })?.code;
    return typeof code === "string" && UNAVAILABLE_CODES.some((prefix) => code.startsWith(prefix));
  }

  /** An online, consistent copy of the database into `file` (must not exist). */
  async backup(file: string): Promise<void> {
    this.sqlite.query("VACUUM INTO ?").run(file);
  }

  async countWebEvent(day: string, event: string, postId: string | null): Promise<void> {
    await this.write(() =>
      this.statements.countWebEvent.run({ day, event, postId: postId ?? "" }),
    );
  }

  async webEventCounts(): Promise<WebEventCount[]> {
    return this.db
      .select()
      .from(webEventCounts)
      .orderBy(webEventCounts.day, webEventCounts.event, webEventCounts.postId)
      .all()
      .map((row) => ({ ...row, postId: row.postId === "" ? null : row.postId }));
  }

  /**
   * Contributors for `cairn admin contributors`, oldest first; with `email`,
   * only that address (compared without case).
   */
  async contributorList(email?: string): Promise<ContributorListing[]> {
    const rows = this.sqlite
      .query<{ contributorNo: number; email: string; active: number; createdAt: number; postCount: number }, [string | null]>(
        `SELECT c.contributor_no AS contributorNo, c.email, c.active, c.created_at AS createdAt,
                (SELECT count(*) FROM posts p WHERE p.contributor_no = c.contributor_no) AS postCount
           FROM contributors c
          WHERE ?1 IS NULL OR lower(c.email) = lower(?1)
          ORDER BY c.contributor_no`,
      )
      .all(email?.trim() ?? null);
    return rows.map((row) => ({ ...row, active: row.active === 1 }));
  }

  async counts(): Promise<Counts> {
    const one = (query: string) => (this.sqlite.query<{ n: number }, []>(query).get()?.n ?? 0) as number;
    return {
      contributors: one("SELECT count(*) AS n FROM contributors"),
      activeContributors: one("SELECT count(*) AS n FROM contributors WHERE active = 1"),
      notes: one("SELECT count(*) AS n FROM posts"),
      comments: one("SELECT count(*) AS n FROM comments"),
      votes: one("SELECT count(*) AS n FROM votes"),
    };
  }

  async claimDueMail(now: number, limit: number, leaseMs: number) {
    return this.outbox.claimDue(now, limit, leaseMs);
  }

  async markMailSent(id: number, at: number) {
    this.outbox.markSent(id, at);
  }

  async markMailFailed(id: number, error: string, nextAttemptAt: number) {
    this.outbox.markFailed(id, error, nextAttemptAt);
  }

  async markMailGivenUp(id: number, error: string, at: number) {
    this.outbox.markGivenUp(id, error, at);
  }

  async outboxCounts() {
    return this.outbox.counts();
  }
}
