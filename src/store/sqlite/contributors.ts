// Contributors on SQLite: registration (with its welcome mail in the same
// write), key lookup by prefix, the key generation every process watches
// (the key signal), activation, the /v1/me summary and the admin listing.
import type { Database } from "bun:sqlite";
import { count, desc, eq, sql } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type { KeyCandidate, MailKind } from "../types.ts";
import { ChangeSignal, SIGNAL_CHECK_MS } from "./change-signal.ts";
import type { GroupCommit } from "./group-commit.ts";
import type { SqliteOutbox } from "./outbox.ts";
import type * as schema from "./schema.ts";
import { contributors, posts } from "./schema.ts";
import { onFirstUse } from "./on-first-use.ts";

export class SqliteContributors {
  /** Built on first use, after migrations have made the tables. */
  private readonly statements = onFirstUse(() => this.prepare());
  /** Announces key changes to every process on this data directory (see change-signal.ts). */
  private keyChanges: ChangeSignal;
  /** Moves when the signal file is re-mapped, so the key generation moves too. */
  private keyEpoch = 0;

  constructor(
    private readonly sqlite: Database,
    private readonly db: BunSQLiteDatabase<typeof schema>,
    private readonly commit: GroupCommit,
    private readonly outbox: SqliteOutbox,
    private readonly dataDir: string,
  ) {
    this.keyChanges = ChangeSignal.open(dataDir);
  }

  /**
   * True when a running server may not map the key signal file this process
   * bumps yet: this process made it, it was replaced since, or it is younger
   * than two server checks (another process, a server, made it after it was
   * removed, and the other servers may still map the old one).
   */
  get keySignalUnsettled(): boolean {
    return this.keyChanges.created || this.keyChanges.replaced() || Date.now() - this.keyChanges.madeAtMs < 2 * SIGNAL_CHECK_MS;
  }

  /** Null when key-standing changes are announced across processes; otherwise why not (keys are then never remembered). */
  get keySignalOffReason(): string | null {
    return this.keyChanges.unavailableReason;
  }

  /** Re-maps the key signal when its file was removed or replaced (the generation moves); its path, or null. */
  remapReplacedSignal(): string | null {
    if (!this.keyChanges.replaced()) return null;
    this.keyChanges = ChangeSignal.open(this.dataDir);
    this.keyEpoch++;
    return this.keyChanges.path;
  }

  private prepare() {
    const db = this.db;
    const no = sql.placeholder("contributorNo");
    return {
      // Read by every keyed request whose key is not remembered, as a plain
      // bun:sqlite statement: Drizzle's row mapping costs a third of its time.
      keyCandidates: this.sqlite.query<KeyCandidate, [string]>(
        "SELECT contributor_no AS contributorNo, key_digest AS keyDigest, active = 1 AS active FROM contributors WHERE key_prefix = ?",
      ),
      insert: db
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
    };
  }

  create(input: { email: string; keyPrefix: string; keyDigest: Uint8Array; createdAt: number }, mail?: { kind: MailKind }) {
    // The contributor and its welcome mail commit together or not at all.
    return this.commit.write(() => {
      const contributor = this.statements().insert.get({ ...input, keyDigest: Buffer.from(input.keyDigest) })!;
      if (mail) this.outbox.enqueue({ contributorNo: contributor.contributorNo, recipient: input.email, kind: mail.kind, createdAt: input.createdAt });
      return contributor;
    });
  }

  keyCandidates(prefix: string): KeyCandidate[] {
    // SQLite answers `active = 1` as 0 or 1; the interface (and the contract suite) say boolean.
    return this.statements().keyCandidates.all(prefix).map((c) => ({ ...c, active: Boolean(c.active) }));
  }

  keyGeneration(): number {
    // The epoch keeps the value moving when a replaced file is re-mapped (a new file starts at 0 again).
    return this.keyChanges.read() + this.keyEpoch * 2 ** 33;
  }

  setActive(contributorNo: number, active: boolean): boolean {
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

  /** A new key for an active contributor; after COMMIT every process forgets the keys it remembered. */
  async replaceKey(contributorNo: number, keyPrefix: string, keyDigest: Uint8Array): Promise<boolean> {
    const replaced = await this.commit.write(
      () =>
        this.sqlite
          .query("UPDATE contributors SET key_prefix = ?, key_digest = ? WHERE contributor_no = ? AND active = 1")
          .run(keyPrefix, Buffer.from(keyDigest), contributorNo).changes === 1,
    );
    // Committed: the old key is refused by every process's next request.
    if (replaced) this.keyChanges.bump();
    return replaced;
  }

  summary(contributorNo: number, recentLimit: number) {
    const contributor = this.statements().contributor.get({ contributorNo });
    if (!contributor) return null;
    // No write of this process can run between these synchronous reads, and
    // only this process writes notes, so the count and the list agree.
    return {
      ...contributor,
      postCount: this.statements().postCount.get({ contributorNo })!.postCount,
      recentPosts: this.statements().recentPosts.all({ contributorNo, limit: recentLimit }),
    };
  }

  /** Oldest first; with `email`, only that address (compared without case). */
  list(email?: string): { contributorNo: number; email: string; active: boolean; createdAt: number; postCount: number }[] {
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
}
