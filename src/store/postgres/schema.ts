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
} from "drizzle-orm/pg-core";

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => "bytea" });
/** A weighted tsvector (A title, B tags, C body), written with the note; see search.ts. */
export const tsvector = customType<{ data: string }>({ dataType: () => "tsvector" });
/** Epoch milliseconds. */
const millis = (name: string) => bigint(name, { mode: "number" });

export const contributors = pgTable(
  "contributors",
  {
    // An identity column: a contributor number is never handed out twice.
    contributorNo: integer("contributor_no").primaryKey().generatedAlwaysAsIdentity(),
    email: text("email").notNull(),
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
    title: text("title").notNull(),
    body: text("body").notNull(),
    tags: text("tags").array().notNull().default(sql`'{}'::text[]`),
    score: integer("score").notNull().default(0),
    commentCount: integer("comment_count").notNull().default(0),
    createdAt: millis("created_at").notNull(),
    // Search: the weighted lexemes and each field's length in tokens (BM25F's length normalisation).
    search: tsvector("search").notNull(),
    titleLen: integer("title_len").notNull(),
    tagsLen: integer("tags_len").notNull(),
    bodyLen: integer("body_len").notNull(),
  },
  (table) => [
    index("posts_contributor_pk").on(table.contributorNo, table.pk),
    index("posts_search").using("gin", table.search),
  ],
);

/**
 * Collection statistics for BM25F, one row per (shard): notes and the summed
 * field lengths. Writers add to a row picked by the note's pk, so concurrent
 * creates seldom wait on one row lock; readers sum the rows.
 */
export const searchStats = pgTable("search_stats", {
  shard: integer("shard").primaryKey(),
  notes: bigint("notes", { mode: "number" }).notNull().default(0),
  titleLen: bigint("title_len", { mode: "number" }).notNull().default(0),
  tagsLen: bigint("tags_len", { mode: "number" }).notNull().default(0),
  bodyLen: bigint("body_len", { mode: "number" }).notNull().default(0),
});

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
    body: text("body").notNull(),
    createdAt: millis("created_at").notNull(),
  },
  (table) => [index("comments_post_pk").on(table.postPk, table.pk)],
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
    recipient: text("recipient").notNull(),
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
