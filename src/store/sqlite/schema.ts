import { sql } from "drizzle-orm";
import { blob, check, index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

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
  },
  (table) => [index("posts_contributor_pk").on(table.contributorNo, table.pk)],
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
