// Contributors on PostgreSQL: registration (with its welcome mail in the same
// transaction), key lookup by prefix (read on every keyed request, coalesced
// with the others of the moment, note-log.ts; a key found valid is
// remembered only while the change log says no key changed, and a change
// waits the lease out before it answers, so a revoke holds at every replica
// on the next request), activation, the /v1/me summary and the
// admin listing.
import { and, count, desc, eq, sql } from "drizzle-orm";
import type { ContributorListing, KeyCandidate, MailKind } from "../types.ts";
import type { Db } from "./connection.ts";
import { KEY_CHANGE_WAIT_MS, type KeyAndLogReads } from "./note-log.ts";
import { contributors, decodeText, emailOutbox, encodeText, posts } from "./schema.ts";

export class PostgresContributors {
  constructor(
    private readonly db: Db,
    /** The key reads of concurrent requests, one statement per turn of the event loop, which also reads the note log (note-log.ts). */
    private readonly keys: KeyAndLogReads,
  ) {}

  async create(
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

  /** Read on every keyed request, after it arrived (coalesced with the other requests of this moment). */
  keyCandidates(prefix: string): Promise<KeyCandidate[]> {
    return this.keys.keyCandidates(prefix);
  }

  async setActive(contributorNo: number, active: boolean): Promise<boolean> {
    const updated = await this.db
      .update(contributors)
      .set({ active })
      .where(eq(contributors.contributorNo, contributorNo))
      .returning({ contributorNo: contributors.contributorNo });
    if (updated.length > 0) await Bun.sleep(KEY_CHANGE_WAIT_MS);
    return updated.length > 0;
  }

  /** A new key for an active contributor; answers once every replica has forgotten the old one (KEY_CHANGE_WAIT_MS). */
  async replaceKey(contributorNo: number, keyPrefix: string, keyDigest: Uint8Array): Promise<boolean> {
    const updated = await this.db
      .update(contributors)
      .set({ keyPrefix, keyDigest: Buffer.from(keyDigest) })
      .where(and(eq(contributors.contributorNo, contributorNo), eq(contributors.active, true)))
      .returning({ contributorNo: contributors.contributorNo });
    if (updated.length === 1) await Bun.sleep(KEY_CHANGE_WAIT_MS);
    return updated.length === 1;
  }

  async summary(contributorNo: number, recentLimit: number) {
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

  /**
   * Oldest first; with `email`, only that address, its ASCII letters in any
   * case. lower() takes the case mapping of its argument's collation, which is
   * the database's: COLLATE "C" folds ASCII only, as SQLite's lower() does,
   * whatever locale `createdb` gave the database (in a Turkish one lower('I')
   * is 'ı', so "INFO@…" did not find "info@…"; in en_US it folded 'Ä' too,
   * where SQLite does not).
   */
  async list(email?: string): Promise<ContributorListing[]> {
    const filter = email === undefined ? null : encodeText(email.trim());
    const rows = await this.db.execute<{ contributorNo: number; email: string; active: boolean; createdAt: string; postCount: string }>(sql`
      SELECT c.contributor_no AS "contributorNo", c.email, c.active, c.created_at AS "createdAt",
             (SELECT count(*) FROM posts p WHERE p.contributor_no = c.contributor_no) AS "postCount"
        FROM contributors c
       WHERE ${filter}::text IS NULL OR lower(c.email COLLATE "C") = lower(${filter}::text COLLATE "C")
       ORDER BY c.contributor_no`);
    return rows.map((row) => ({
      contributorNo: Number(row.contributorNo),
      email: decodeText(row.email),
      active: row.active,
      createdAt: Number(row.createdAt),
      postCount: Number(row.postCount),
    }));
  }
}
