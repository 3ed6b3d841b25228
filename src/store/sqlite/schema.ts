import { sql } from "drizzle-orm";
import { blob, check, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const contributors = sqliteTable(
  "contributors",
  {
    // AUTOINCREMENT: a contributor number is never handed out twice.
    contributorNo: integer("contributor_no").primaryKey({ autoIncrement: true }),
    email: text("email").notNull(),
    keyPrefix: text("key_prefix").notNull(),
    keyDigest: blob("key_digest", { mode: "buffer" }).notNull(),
    active: integer("active", { mode: "boolean" }).notNull().default(true),
    createdAt: integer("created_at").notNull(),
  },
  (table) => [index("contributors_key_prefix").on(table.keyPrefix)],
);

export const posts = sqliteTable(
  "posts",
  {
    // A stable integer rowid for the FTS5 external-content index and for the
    // foreign keys of comments and votes; the public id is the UUID.
    pk: integer("pk").primaryKey(),
    id: text("id").notNull().unique(),
    contributorNo: integer("contributor_no")
      .notNull()
      .references(() => contributors.contributorNo),
    title: text("title").notNull(),
    body: text("body").notNull(),
    // JSON array of normalised tags; FTS5 tokenises the JSON punctuation away.
    tags: text("tags").notNull().default("[]"),
    score: integer("score").notNull().default(0),
    commentCount: integer("comment_count").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    /** The id of the author's older note this one replaces (docs/design.md, "Superseding"). */
    supersedes: text("supersedes"),
    /** The id of the newer note that replaced this one; such a note is kept out of the search index. */
    supersededBy: text("superseded_by"),
  },
  (table) => [
    index("posts_contributor_pk").on(table.contributorNo, table.pk),
    // A note is superseded by one note at most: two racing supersedes cannot both commit.
    // Partial (drizzle/0008): most notes supersede none; a NULL entry for each cost writes index pages.
    uniqueIndex("posts_supersedes_unique").on(table.supersedes).where(sql`${table.supersedes} IS NOT NULL`),
  ],
);

/**
 * The tags of every searchable (not superseded) note, with its net score and
 * time copied in, so that a search of tag words alone walks one index in the
 * contract's order (net score, then newest) and stops after the first page.
 */
export const noteTags = sqliteTable(
  "note_tags",
  {
    tag: text("tag").notNull(),
    postPk: integer("post_pk")
      .notNull()
      .references(() => posts.pk, { onDelete: "cascade" }),
    score: integer("score").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  // One tag-ordered index, no (tag, post_pk) key beside it: each batch of
  // writes rewrote a page per distinct tag in each of the two, ~1.7 of a ~2 KB
  // note's 7 pages (docs/benchmarks.md, "Writes of ~2 KB notes, third round";
  // drizzle/0008_note_tags_one_order.sql). A note's tag is stored once by the
  // one statement that adds tags (note-tags.ts), which checks by note_tags_post;
  // that index holds the tag too, so the check and a search's "carries the
  // other tags" read no table row.
  (table) => [
    index("note_tags_order").on(table.tag, table.score, table.createdAt, table.postPk),
    index("note_tags_post").on(table.postPk, table.tag),
  ],
);

export const comments = sqliteTable(
  "comments",
  {
    pk: integer("pk").primaryKey(),
    postPk: integer("post_pk")
      .notNull()
      .references(() => posts.pk, { onDelete: "cascade" }),
    contributorNo: integer("contributor_no")
      .notNull()
      .references(() => contributors.contributorNo),
    body: text("body").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (table) => [index("comments_post_pk").on(table.postPk, table.pk)],
);

export const votes = sqliteTable(
  "votes",
  {
    postPk: integer("post_pk")
      .notNull()
      .references(() => posts.pk, { onDelete: "cascade" }),
    contributorNo: integer("contributor_no")
      .notNull()
      .references(() => contributors.contributorNo),
    value: integer("value").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.postPk, table.contributorNo] }),
    check("votes_value_check", sql`${table.value} IN (-1, 1)`),
  ],
);

export const webEventCounts = sqliteTable(
  "web_event_counts",
  {
    day: text("day").notNull(),
    event: text("event").notNull(),
    // '' for counters that are not per note.
    postId: text("post_id").notNull().default(""),
    count: integer("count").notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.day, table.event, table.postId] })],
);

/**
 * Durable outbox of e-mails (the welcome mail at registration). A row is
 * written in the same transaction as its contributor; the sender in src/mail
 * claims due rows with a lease, and marks them sent once the SMTP server has
 * accepted the message. `last_error` never holds an address.
 */
export const emailOutbox = sqliteTable(
  "email_outbox",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    contributorNo: integer("contributor_no")
      .notNull()
      .references(() => contributors.contributorNo),
    recipient: text("recipient").notNull(),
    kind: text("kind").notNull(),
    createdAt: integer("created_at").notNull(),
    /** Delivery attempts started (counted when a row is claimed). */
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at").notNull(),
    /** Set while a sender holds the row; a row whose lease ran out (crash) is claimed again. */
    leasedUntil: integer("leased_until"),
    lastError: text("last_error"),
    sentAt: integer("sent_at"),
    /** Set when the sender stops trying (the server refused the recipient, or the mail grew too old). */
    gaveUpAt: integer("gave_up_at"),
  },
  (table) => [
    // Only pending rows are indexed: the sender's poll reads this index alone.
    index("email_outbox_pending").on(table.nextAttemptAt).where(sql`sent_at IS NULL AND gave_up_at IS NULL`),
    index("email_outbox_contributor").on(table.contributorNo),
  ],
);

/**
 * Idempotency keys (issue 19; rules in src/core/idempotency.ts). One row per
 * contributor and key: reserved (status NULL, held by `token` until
 * `leased_until`) while the first request runs, then holding the first
 * answer, written in the same transaction as the write it answers.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    contributorNo: integer("contributor_no")
      .notNull()
      .references(() => contributors.contributorNo),
    key: text("key").notNull(),
    /** SHA-256 of the route and the body: the same key with another request is refused. */
    fingerprint: text("fingerprint").notNull(),
    /** Which reservation holds the row: only its own request may complete it. */
    token: text("token").notNull(),
    status: integer("status"),
    response: text("response"),
    /** The note the stored answer is about: when it is deleted, the answer becomes its 404 (no text outlives the note). */
    noteId: text("note_id"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    leasedUntil: integer("leased_until").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.contributorNo, table.key] }),
    index("idempotency_keys_note").on(table.noteId),
    // Expired rows are pruned a bounded batch at a time, found by this index.
    index("idempotency_keys_expiry").on(table.expiresAt),
    // The per-contributor cap keeps the newest rows, found by this index.
    index("idempotency_keys_contributor_created").on(table.contributorNo, table.createdAt),
  ],
);
