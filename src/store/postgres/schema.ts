// The PostgreSQL engine's tables: the same resources as src/store/sqlite/schema.ts,
// in PostgreSQL's types. drizzle-kit writes the migrations in drizzle/postgres/
// from this file (drizzle.postgres.config.ts).
import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  customType,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => "bytea" });
/**
 * Text that may hold NUL. PostgreSQL's text cannot (SQLite's can, and Cairn
 * keeps every character as sent: docs/design.md, "Input"), so U+0000 is
 * stored as U+E000 "0" and U+E000 itself as U+E000 U+E000; reads undo it.
 * Anything without either character is stored unchanged.
 */
const ESCAPE = "\uE000";
export const encodeText = (value: string) =>
  value.includes("\u0000") || value.includes(ESCAPE) ? value.replace(/[\u0000\uE000]/g, (c) => (c === "\u0000" ? `${ESCAPE}0` : ESCAPE + ESCAPE)) : value;
export const decodeText = (value: string) => (value.includes(ESCAPE) ? value.replace(/\uE000([\s\S])/g, (_, c: string) => (c === "0" ? "\u0000" : ESCAPE)) : value);
const anyText = customType<{ data: string; driverData: string }>({
  dataType: () => "text",
  toDriver: encodeText,
  fromDriver: decodeText,
});

/** Epoch milliseconds. */
const millis = (name: string) => bigint(name, { mode: "number" });

export const contributors = pgTable(
  "contributors",
  {
    // An identity column: a contributor number is never handed out twice.
    contributorNo: integer("contributor_no").primaryKey().generatedAlwaysAsIdentity(),
    email: anyText("email").notNull(),
    keyPrefix: text("key_prefix").notNull(),
    keyDigest: bytea("key_digest").notNull(),
    active: boolean("active").notNull().default(true),
    createdAt: millis("created_at").notNull(),
  },
  (table) => [index("contributors_key_prefix").on(table.keyPrefix)],
);

export const posts = pgTable(
  "posts",
  {
    pk: bigint("pk", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    id: text("id").notNull().unique(),
    contributorNo: integer("contributor_no")
      .notNull()
      .references(() => contributors.contributorNo),
    title: anyText("title").notNull(),
    body: anyText("body").notNull(),
    tags: text("tags").array().notNull().default(sql`'{}'::text[]`),
    score: integer("score").notNull().default(0),
    commentCount: integer("comment_count").notNull().default(0),
    createdAt: millis("created_at").notNull(),
    /** The id of the author's older note this one replaces (docs/design.md, "Superseding"). */
    supersedes: text("supersedes"),
    /** The id of the newer note that replaced this one; such a note is kept out of the search index. */
    supersededBy: text("superseded_by"),
  },
  (table) => [
    index("posts_contributor_pk").on(table.contributorNo, table.pk),
    // A note is superseded by one note at most: two racing supersedes cannot both commit.
    uniqueIndex("posts_supersedes_unique").on(table.supersedes),
  ],
);

/** The tags of every searchable (not superseded) note, with its net score and time: as on SQLite (see there). */
export const noteTags = pgTable(
  "note_tags",
  {
    tag: text("tag").notNull(),
    postPk: bigint("post_pk", { mode: "number" })
      .notNull()
      .references(() => posts.pk, { onDelete: "cascade" }),
    score: integer("score").notNull(),
    createdAt: millis("created_at").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.tag, table.postPk] }),
    index("note_tags_order").on(table.tag, table.score, table.createdAt, table.postPk),
    index("note_tags_post").on(table.postPk),
  ],
);

// Search (src/store/postgres/search.ts): each replica holds the index in
// memory (src/core/search/memory-index.ts), built from search_vectors and kept
// level through search_log (src/store/postgres/search-log.ts). A note write
// adds only rows of its own (its vector, its log row): nothing all writers share.

/** PostgreSQL's 64-bit transaction id (pg_current_xact_id()). */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => "xid8" });

/** Each note's term vector (src/core/search/vector.ts). */
export const searchVectors = pgTable("search_vectors", {
  pk: bigint("pk", { mode: "number" }).primaryKey(),
  vector: text("vector").notNull(),
});

/**
 * Every add (removed null) and remove (the removed vector, its row being
 * gone) of the index, written in the note's transaction with that
 * transaction's id: readers take the rows committed since their last snapshot
 * (pg_visible_in_snapshot), which is commit order where sequence values are not.
 */
export const searchLog = pgTable(
  "search_log",
  {
    seq: bigint("seq", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    xid: xid8("xid").notNull().default(sql`pg_current_xact_id()`),
    pk: bigint("pk", { mode: "number" }).notNull(),
    removed: text("removed"),
  },
  (table) => [index("search_log_xid").on(table.xid)],
);

/** One row: the newest transaction id among the log rows trimmed so far (a reader whose place is older builds again). */
export const searchLogTrim = pgTable(
  "search_log_trim",
  {
    only: boolean("only").primaryKey().default(true),
    upto: xid8("upto").notNull().default(sql`'0'::xid8`),
  },
  (table) => [check("search_log_trim_one_row", sql`${table.only}`)],
);

// Note views (src/store/postgres/note-views.ts): each replica keeps the notes
// it served in memory and drops one when note_log says it changed. The rows
// are written by a trigger on posts (drizzle/postgres/0005_note_log.sql), so
// every update or delete of a note, whichever statement makes it, is logged
// in its own transaction.

/** The id of every note updated or deleted, with the writing transaction's id (read as search_log is). */
export const noteLog = pgTable(
  "note_log",
  {
    seq: bigint("seq", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    xid: xid8("xid").notNull().default(sql`pg_current_xact_id()`),
    id: text("id").notNull(),
  },
  (table) => [index("note_log_xid").on(table.xid)],
);

/** One row: the newest transaction id among the note log rows trimmed so far, or of a TRUNCATE of posts (a reader whose place is older forgets every view). */
export const noteLogTrim = pgTable(
  "note_log_trim",
  {
    only: boolean("only").primaryKey().default(true),
    upto: xid8("upto").notNull().default(sql`'0'::xid8`),
  },
  (table) => [check("note_log_trim_one_row", sql`${table.only}`)],
);

export const comments = pgTable(
  "comments",
  {
    pk: bigint("pk", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    postPk: bigint("post_pk", { mode: "number" })
      .notNull()
      .references(() => posts.pk, { onDelete: "cascade" }),
    contributorNo: integer("contributor_no")
      .notNull()
      .references(() => contributors.contributorNo),
    body: anyText("body").notNull(),
    createdAt: millis("created_at").notNull(),
  },
  // Listed by time: replicas insert concurrently, so pk order need not be time order.
  (table) => [index("comments_post_time").on(table.postPk, table.createdAt, table.pk)],
);

export const votes = pgTable(
  "votes",
  {
    postPk: bigint("post_pk", { mode: "number" })
      .notNull()
      .references(() => posts.pk, { onDelete: "cascade" }),
    contributorNo: integer("contributor_no")
      .notNull()
      .references(() => contributors.contributorNo),
    value: integer("value").notNull(),
    createdAt: millis("created_at").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.postPk, table.contributorNo] }),
    check("votes_value_check", sql`${table.value} IN (-1, 1)`),
  ],
);

export const webEventCounts = pgTable(
  "web_event_counts",
  {
    day: text("day").notNull(),
    event: text("event").notNull(),
    // '' for counters that are not per note.
    postId: text("post_id").notNull().default(""),
    count: bigint("count", { mode: "number" }).notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.day, table.event, table.postId] })],
);

/** The e-mail outbox: as on SQLite (see there); claims use FOR UPDATE SKIP LOCKED. */
export const emailOutbox = pgTable(
  "email_outbox",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    contributorNo: integer("contributor_no")
      .notNull()
      .references(() => contributors.contributorNo),
    recipient: anyText("recipient").notNull(),
    kind: text("kind").notNull(),
    createdAt: millis("created_at").notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: millis("next_attempt_at").notNull(),
    leasedUntil: millis("leased_until"),
    lastError: text("last_error"),
    sentAt: millis("sent_at"),
    gaveUpAt: millis("gave_up_at"),
  },
  (table) => [
    index("email_outbox_pending").on(table.nextAttemptAt).where(sql`sent_at IS NULL AND gave_up_at IS NULL`),
    index("email_outbox_contributor").on(table.contributorNo),
  ],
);

/** Idempotency keys: as on SQLite (see there). */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    contributorNo: integer("contributor_no")
      .notNull()
      .references(() => contributors.contributorNo),
    key: text("key").notNull(),
    fingerprint: text("fingerprint").notNull(),
    token: text("token").notNull(),
    status: integer("status"),
    // JSON text as sent (JSON escapes NUL, so plain text holds it).
    response: text("response"),
    noteId: text("note_id"),
    createdAt: millis("created_at").notNull(),
    expiresAt: millis("expires_at").notNull(),
    leasedUntil: millis("leased_until").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.contributorNo, table.key] }),
    index("idempotency_keys_note").on(table.noteId),
    index("idempotency_keys_expiry").on(table.expiresAt),
    index("idempotency_keys_contributor_created").on(table.contributorNo, table.createdAt),
  ],
);
