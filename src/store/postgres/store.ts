// The PostgreSQL engine: Drizzle's PostgreSQL dialect over Bun's built-in SQL
// client (drizzle-orm/bun-sql), a pool of `poolSize` connections. Any number
// of processes (replicas, `cairn admin`) share one database, so nothing here
// is remembered between calls: no note cache, no key memory (keyGeneration is
// NaN), and every read-then-write holds a row lock for its transaction.
// Search is the shared ranking of src/core/search over tables of our own
// (search.ts), written in the same transactions as the notes.
import { SQL as BunSQL } from "bun";
import { and, asc, count, desc, eq, inArray, isNull, lte, or, sql } from "drizzle-orm";
import { drizzle, type BunSQLDatabase } from "drizzle-orm/bun-sql";
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
import { migrations } from "./migrations.ts";
import * as schema from "./schema.ts";
import { comments, contributors, decodeText, emailOutbox, encodeText, posts, votes, webEventCounts } from "./schema.ts";
import { indexNote, PostgresSearchSource, unindexNote, type Execute } from "./search.ts";

export interface PostgresOptions {
  url: string;
  poolSize: number;
}

const MIGRATIONS_TABLE = "__drizzle_migrations";
/** pg_advisory_xact_lock key of the migration step: "cairn" as a number. */
const MIGRATION_LOCK = 0x636169726e;
const MAX_ERROR_CHARS = 500;
/** A sent or given-up row's address: personal data needed only to deliver (as on SQLite, src/store/sqlite/outbox.ts). */
const FORGOTTEN = "";

// SQLSTATE classes that mean "the database cannot answer now": connection
// exceptions (08), insufficient resources (53), operator intervention (57),
// serialization and deadlock (40).
const UNAVAILABLE_SQLSTATES = /^(08|53|57|40)/;
const UNAVAILABLE_CODES = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ConnectionRefused",
  "ConnectionClosed",
]);

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

function toNote(row: { id: string; contributorNo: number; title: string; body: string; tags: string[]; score: number; commentCount: number; createdAt: number }): NoteRecord {
  return {
    id: row.id,
    contributorNo: row.contributorNo,
    title: row.title,
    body: row.body,
    tags: row.tags,
    score: row.score,
    commentCount: row.commentCount,
    createdAt: Number(row.createdAt),
  };
}

type Db = BunSQLDatabase<typeof schema>;
type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

/** Statements of search.ts, run in this transaction. */
const executor = (tx: Tx): Execute => async (query) => (await tx.execute(query)) as never;

export class PostgresStore implements Store {
  readonly engine = "postgres" as const;
  /** Keys are read from the database on every request (see keyGeneration), by design. */
  readonly keySignalOffReason = null;
  /** Notes are read from the database on every request (no cache to go stale across replicas), by design. */
  readonly noteSignalOffReason = null;
  private readonly client: BunSQL;
  private readonly db: Db;

  constructor(options: PostgresOptions) {
    this.client = new BunSQL(options.url, { max: options.poolSize, idleTimeout: 60, connectionTimeout: 10 });
    this.db = drizzle({ client: this.client, schema });
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
    await this.db.transaction(async (tx) => {
      // Held until COMMIT: a second process waits here, then finds the steps applied.
      await tx.execute(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      await tx.execute(
        sql.raw(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (id serial PRIMARY KEY, hash text NOT NULL, created_at bigint)`),
      );
      const last = await tx.execute<{ created_at: string }>(
        sql.raw(`SELECT created_at FROM ${MIGRATIONS_TABLE} ORDER BY created_at DESC LIMIT 1`),
      );
      const applied = last.length > 0 ? Number(last[0].created_at) : -Infinity;
      for (const migration of migrations) {
        if (applied >= migration.createdAt) continue;
        for (const statement of migration.statements) await tx.execute(sql.raw(statement));
        await tx.execute(sql`INSERT INTO ${sql.raw(MIGRATIONS_TABLE)} (hash, created_at) VALUES (${migration.hash}, ${migration.createdAt})`);
      }
    });
  }

  async readiness(): Promise<Readiness> {
    try {
      const last = await this.db.execute<{ created_at: string }>(
        sql.raw(`SELECT created_at FROM ${MIGRATIONS_TABLE} ORDER BY created_at DESC LIMIT 1`),
      );
      const newest = migrations[migrations.length - 1];
      if (last.length === 0 || Number(last[0].created_at) < newest.createdAt) return { ready: false, reason: "database migrations are not current" };
      return { ready: true };
    } catch {
      return { ready: false, reason: "storage is not answering" };
    }
  }

  async close(): Promise<void> {
    await this.client.close({ timeout: 5 });
  }

  async createContributor(
    input: { email: string; keyPrefix: string; keyDigest: Uint8Array; createdAt: number },
    mail?: { kind: MailKind },
  ) {
    // The contributor and its welcome mail commit together or not at all.
    return this.db.transaction(async (tx) => {
      const [contributor] = await tx
        .insert(contributors)
        .values({ email: input.email, keyPrefix: input.keyPrefix, keyDigest: Buffer.from(input.keyDigest), createdAt: input.createdAt })
        .returning({ contributorNo: contributors.contributorNo, createdAt: contributors.createdAt });
      if (mail) {
        await tx.insert(emailOutbox).values({
          contributorNo: contributor.contributorNo,
          recipient: input.email,
          kind: mail.kind,
          createdAt: input.createdAt,
          nextAttemptAt: input.createdAt,
        });
      }
      return { contributorNo: contributor.contributorNo, createdAt: Number(contributor.createdAt) };
    });
  }

  async keyCandidates(prefix: string): Promise<KeyCandidate[]> {
    // The two reads of every keyed GET go straight to Bun.SQL: a tagged
    // template is prepared once per connection, and building the Drizzle query
    // each time cost more than running it.
    const rows = (await this.client`SELECT contributor_no, key_digest, active FROM contributors WHERE key_prefix = ${prefix}`) as {
      contributor_no: number;
      key_digest: Uint8Array;
      active: boolean;
    }[];
    return rows.map((row) => ({ contributorNo: row.contributor_no, keyDigest: new Uint8Array(row.key_digest), active: row.active }));
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
    const updated = await this.db
      .update(contributors)
      .set({ active })
      .where(eq(contributors.contributorNo, contributorNo))
      .returning({ contributorNo: contributors.contributorNo });
    return updated.length > 0;
  }

  async contributorSummary(contributorNo: number, recentLimit: number) {
    // One snapshot: the count and the list agree even while another replica posts.
    return this.db.transaction(
      async (tx) => {
        const [contributor] = await tx
          .select({ contributorNo: contributors.contributorNo, createdAt: contributors.createdAt })
          .from(contributors)
          .where(eq(contributors.contributorNo, contributorNo));
        if (!contributor) return null;
        const [{ postCount }] = await tx.select({ postCount: count() }).from(posts).where(eq(posts.contributorNo, contributorNo));
        const recent = await tx
          .select({ id: posts.id, title: posts.title, createdAt: posts.createdAt })
          .from(posts)
          .where(eq(posts.contributorNo, contributorNo))
          .orderBy(desc(posts.pk))
          .limit(recentLimit);
        return {
          contributorNo: contributor.contributorNo,
          createdAt: Number(contributor.createdAt),
          postCount: Number(postCount),
          recentPosts: recent.map((post) => ({ id: post.id, title: post.title, createdAt: Number(post.createdAt) })),
        };
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
  }

  async createNote(note: NewNote, isDuplicate: (latest: { title: string; body: string; tags: string[] }) => boolean) {
    return this.db.transaction(async (tx): Promise<NoteRecord | { duplicateOf: string }> => {
      // The author's row lock orders this author's creates across every replica:
      // the duplicate check and the insert are one step.
      await tx.select({ no: contributors.contributorNo }).from(contributors).where(eq(contributors.contributorNo, note.contributorNo)).for("update");
      const [latest] = await tx
        .select({ id: posts.id, title: posts.title, body: posts.body, tags: posts.tags })
        .from(posts)
        .where(eq(posts.contributorNo, note.contributorNo))
        .orderBy(desc(posts.pk))
        .limit(1);
      if (latest && isDuplicate({ title: latest.title, body: latest.body, tags: latest.tags })) return { duplicateOf: latest.id };
      const [row] = await tx
        .insert(posts)
        .values({
          id: note.id,
          contributorNo: note.contributorNo,
          title: note.title,
          body: note.body,
          tags: note.tags,
          createdAt: note.createdAt,
        })
        .returning(noteColumns);
      await indexNote(executor(tx), { pk: row.pk, title: note.title, tags: note.tags, body: note.body });
      return toNote(row);
    });
  }

  async getNote(id: string): Promise<NoteRecord | null> {
    const [row] = (await this.client`SELECT id, contributor_no, title, body, tags, score, comment_count, created_at FROM posts WHERE id = ${id}`) as {
      id: string;
      contributor_no: number;
      title: string;
      body: string;
      tags: string[];
      score: number;
      comment_count: number;
      created_at: string;
    }[];
    if (!row) return null;
    return {
      id: row.id,
      contributorNo: row.contributor_no,
      title: decodeText(row.title),
      body: decodeText(row.body),
      tags: [...row.tags],
      score: row.score,
      commentCount: row.comment_count,
      createdAt: Number(row.created_at),
    };
  }

  async deleteNote(id: string, contributorNo: number): Promise<DeleteOutcome> {
    return this.db.transaction(async (tx): Promise<DeleteOutcome> => {
      const [note] = await tx
        .select({ pk: posts.pk, contributorNo: posts.contributorNo })
        .from(posts)
        .where(eq(posts.id, id))
        .for("update");
      if (!note) return "missing";
      if (note.contributorNo !== contributorNo) return "not_author";
      // Comments and votes go by ON DELETE CASCADE.
      await unindexNote(executor(tx), note.pk);
      await tx.delete(posts).where(eq(posts.pk, note.pk));
      return "deleted";
    });
  }

  async listComments(noteId: string, limit: number): Promise<{ comments: CommentRecord[]; total: number } | null> {
    // One snapshot: the count and the list agree while other replicas comment.
    return this.db.transaction(
      async (tx) => {
        const [note] = await tx.select({ pk: posts.pk, commentCount: posts.commentCount }).from(posts).where(eq(posts.id, noteId));
        if (!note) return null;
        const rows = await tx
          .select({ contributorNo: comments.contributorNo, body: comments.body, createdAt: comments.createdAt })
          .from(comments)
          .where(eq(comments.postPk, note.pk))
          .orderBy(desc(comments.createdAt), desc(comments.pk))
          .limit(limit);
        return { comments: rows.reverse().map((row) => ({ ...row, createdAt: Number(row.createdAt) })), total: note.commentCount };
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
  }

  async addComment(noteId: string, comment: { contributorNo: number; body: string; createdAt: number }) {
    return this.db.transaction(async (tx) => {
      // The count goes up under the note's row lock: exact under concurrent comments.
      const [note] = await tx
        .update(posts)
        .set({ commentCount: sql`${posts.commentCount} + 1` })
        .where(eq(posts.id, noteId))
        .returning({ pk: posts.pk, commentCount: posts.commentCount });
      if (!note) return null;
      await tx.insert(comments).values({ postPk: note.pk, ...comment });
      return { comment, commentCount: note.commentCount };
    });
  }

  async setVote(noteId: string, contributorNo: number, value: VoteValue, at: number): Promise<VoteOutcome> {
    return this.db.transaction(async (tx): Promise<VoteOutcome> => {
      // The note's row lock orders every vote on it: the previous vote read here is still current at the update.
      const [note] = await tx
        .select({ pk: posts.pk, contributorNo: posts.contributorNo, score: posts.score })
        .from(posts)
        .where(eq(posts.id, noteId))
        .for("update");
      if (!note) return { kind: "missing" };
      if (note.contributorNo === contributorNo) return { kind: "own_note" };
      const key = and(eq(votes.postPk, note.pk), eq(votes.contributorNo, contributorNo));
      const [previousRow] = await tx.select({ value: votes.value }).from(votes).where(key);
      const previous = (previousRow?.value ?? 0) as VoteValue;
      if (previous === value) return { kind: "ok", score: note.score, value };
      if (value === 0) await tx.delete(votes).where(key);
      else {
        await tx
          .insert(votes)
          .values({ postPk: note.pk, contributorNo, value, createdAt: at })
          .onConflictDoUpdate({ target: [votes.postPk, votes.contributorNo], set: { value, createdAt: at } });
      }
      const [{ score }] = await tx
        .update(posts)
        .set({ score: sql`${posts.score} + ${value - previous}` })
        .where(eq(posts.pk, note.pk))
        .returning({ score: posts.score });
      return { kind: "ok", score, value };
    });
  }

  async search(request: SearchRequest): Promise<NoteRecord[]> {
    if (request.words.length === 0 || request.limit <= 0) return [];
    // One snapshot for the statistics, postings, vectors and rows.
    return this.db.transaction(
      async (tx) => {
        const source = new PostgresSearchSource(executor(tx));
        const rows = await source.search(request, (pks) => tx.select(noteColumns).from(posts).where(inArray(posts.pk, pks)));
        return rows.map(toNote);
      },
      { isolationLevel: "repeatable read", accessMode: "read only" },
    );
  }

  async backup(): Promise<void> {
    throw new Error("on PostgreSQL, back up with pg_dump (see docs/deploy.md); `cairn admin backup` copies the SQLite engine only");
  }

  isUnavailable(error: unknown): boolean {
    const e = error as { code?: unknown; errno?: unknown };
    if (typeof e?.errno === "string" && UNAVAILABLE_SQLSTATES.test(e.errno)) return true;
    return typeof e?.code === "string" && UNAVAILABLE_CODES.has(e.code);
  }

  async countWebEvent(day: string, event: string, postId: string | null): Promise<void> {
    await this.db
      .insert(webEventCounts)
      .values({ day, event, postId: postId ?? "", count: 1 })
      .onConflictDoUpdate({
        target: [webEventCounts.day, webEventCounts.event, webEventCounts.postId],
        set: { count: sql`${webEventCounts.count} + 1` },
      });
  }

  async webEventCounts(): Promise<WebEventCount[]> {
    const rows = await this.db.select().from(webEventCounts).orderBy(webEventCounts.day, webEventCounts.event, webEventCounts.postId);
    return rows.map((row) => ({ ...row, count: Number(row.count), postId: row.postId === "" ? null : row.postId }));
  }

  async contributorList(email?: string): Promise<ContributorListing[]> {
    const filter = email === undefined ? null : encodeText(email.trim());
    const rows = await this.db.execute<{ contributorNo: number; email: string; active: boolean; createdAt: string; postCount: string }>(sql`
      SELECT c.contributor_no AS "contributorNo", c.email, c.active, c.created_at AS "createdAt",
             (SELECT count(*) FROM posts p WHERE p.contributor_no = c.contributor_no) AS "postCount"
        FROM contributors c
       WHERE ${filter}::text IS NULL OR lower(c.email) = lower(${filter}::text)
       ORDER BY c.contributor_no`);
    return rows.map((row) => ({
      contributorNo: Number(row.contributorNo),
      email: decodeText(row.email),
      active: row.active,
      createdAt: Number(row.createdAt),
      postCount: Number(row.postCount),
    }));
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

  async claimDueMail(now: number, limit: number, leaseMs: number): Promise<OutboxMail[]> {
    // SKIP LOCKED: senders on several replicas claim disjoint rows without
    // waiting on each other. The candidates are a MATERIALIZED CTE: as an
    // `IN (subquery)` PostgreSQL may run the subquery more than once, and each
    // run skips the rows the previous one locked, so a claim of 1 took every
    // due row (found by the two-replica suite).
    const rows = await this.db.execute<{ id: string; contributorNo: number; recipient: string; kind: string; createdAt: string; attempts: number }>(sql`
      WITH claimable AS MATERIALIZED (
        SELECT id FROM email_outbox
         WHERE sent_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= ${now}
           AND (leased_until IS NULL OR leased_until <= ${now})
         ORDER BY next_attempt_at, id
         LIMIT ${limit}
         FOR UPDATE SKIP LOCKED
      )
      UPDATE email_outbox o SET leased_until = ${now + leaseMs}, attempts = o.attempts + 1
        FROM claimable WHERE o.id = claimable.id
      RETURNING o.id, o.contributor_no AS "contributorNo", o.recipient, o.kind, o.created_at AS "createdAt", o.attempts`);
    return rows
      .map((row) => ({
        id: Number(row.id),
        contributorNo: Number(row.contributorNo),
        recipient: decodeText(row.recipient),
        kind: row.kind as MailKind,
        createdAt: Number(row.createdAt),
        attempts: Number(row.attempts),
      }))
      .sort((a, b) => a.id - b.id);
  }

  async markMailSent(id: number, at: number): Promise<void> {
    await this.db.update(emailOutbox).set({ sentAt: at, leasedUntil: null, recipient: FORGOTTEN }).where(and(eq(emailOutbox.id, id), isNull(emailOutbox.sentAt)));
  }

  async markMailFailed(id: number, error: string, nextAttemptAt: number): Promise<void> {
    await this.db
      .update(emailOutbox)
      .set({ leasedUntil: null, lastError: error.slice(0, MAX_ERROR_CHARS), nextAttemptAt })
      .where(and(eq(emailOutbox.id, id), isNull(emailOutbox.sentAt)));
  }

  async markMailGivenUp(id: number, error: string, at: number): Promise<void> {
    await this.db
      .update(emailOutbox)
      .set({ leasedUntil: null, lastError: error.slice(0, MAX_ERROR_CHARS), gaveUpAt: at, recipient: FORGOTTEN })
      .where(and(eq(emailOutbox.id, id), isNull(emailOutbox.sentAt)));
  }

  async outboxCounts(): Promise<OutboxCounts> {
    const [row] = await this.db
      .select({
        pending: sql<string>`count(*) FILTER (WHERE ${emailOutbox.sentAt} IS NULL AND ${emailOutbox.gaveUpAt} IS NULL)`,
        sent: sql<string>`count(${emailOutbox.sentAt})`,
        gaveUp: sql<string>`count(*) FILTER (WHERE ${emailOutbox.gaveUpAt} IS NOT NULL AND ${emailOutbox.sentAt} IS NULL)`,
      })
      .from(emailOutbox);
    return { pending: Number(row.pending), sent: Number(row.sent), gaveUp: Number(row.gaveUp) };
  }
}
