-- Written by drizzle-kit from src/store/postgres/schema.ts, then one edit by
-- hand: the search terms are compared as code points (COLLATE "C"), the way
-- SQLite compares them, so a vocabulary range [from, to) holds the same terms on
-- both engines (typo correction, src/core/search/typos.ts).
CREATE TABLE "comments" (
	"pk" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "comments_pk_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"post_pk" bigint NOT NULL,
	"contributor_no" integer NOT NULL,
	"body" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "contributors" (
	"contributor_no" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "contributors_contributor_no_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"email" text NOT NULL,
	"key_prefix" text NOT NULL,
	"key_digest" "bytea" NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "email_outbox" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "email_outbox_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"contributor_no" integer NOT NULL,
	"recipient" text NOT NULL,
	"kind" text NOT NULL,
	"created_at" bigint NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" bigint NOT NULL,
	"leased_until" bigint,
	"last_error" text,
	"sent_at" bigint,
	"gave_up_at" bigint
);
--> statement-breakpoint
CREATE TABLE "posts" (
	"pk" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "posts_pk_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text NOT NULL,
	"contributor_no" integer NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"score" integer DEFAULT 0 NOT NULL,
	"comment_count" integer DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "posts_id_unique" UNIQUE("id")
);
--> statement-breakpoint
CREATE TABLE "search_postings" (
	"term" text COLLATE "C" NOT NULL,
	"tier" smallint NOT NULL,
	"pk" bigint NOT NULL,
	CONSTRAINT "search_postings_term_tier_pk_pk" PRIMARY KEY("term","tier","pk")
);
--> statement-breakpoint
CREATE TABLE "search_terms" (
	"term" text COLLATE "C" NOT NULL,
	"tier" smallint NOT NULL,
	"notes" integer NOT NULL,
	CONSTRAINT "search_terms_term_tier_pk" PRIMARY KEY("term","tier")
);
--> statement-breakpoint
CREATE TABLE "search_totals" (
	"shard" integer PRIMARY KEY NOT NULL,
	"notes" bigint DEFAULT 0 NOT NULL,
	"title_terms" bigint DEFAULT 0 NOT NULL,
	"tag_terms" bigint DEFAULT 0 NOT NULL,
	"body_terms" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "search_vectors" (
	"pk" bigint PRIMARY KEY NOT NULL,
	"vector" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "votes" (
	"post_pk" bigint NOT NULL,
	"contributor_no" integer NOT NULL,
	"value" integer NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "votes_post_pk_contributor_no_pk" PRIMARY KEY("post_pk","contributor_no"),
	CONSTRAINT "votes_value_check" CHECK ("votes"."value" IN (-1, 1))
);
--> statement-breakpoint
CREATE TABLE "web_event_counts" (
	"day" text NOT NULL,
	"event" text NOT NULL,
	"post_id" text DEFAULT '' NOT NULL,
	"count" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "web_event_counts_day_event_post_id_pk" PRIMARY KEY("day","event","post_id")
);
--> statement-breakpoint
ALTER TABLE "comments" ADD CONSTRAINT "comments_post_pk_posts_pk_fk" FOREIGN KEY ("post_pk") REFERENCES "public"."posts"("pk") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "comments" ADD CONSTRAINT "comments_contributor_no_contributors_contributor_no_fk" FOREIGN KEY ("contributor_no") REFERENCES "public"."contributors"("contributor_no") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "email_outbox" ADD CONSTRAINT "email_outbox_contributor_no_contributors_contributor_no_fk" FOREIGN KEY ("contributor_no") REFERENCES "public"."contributors"("contributor_no") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "posts" ADD CONSTRAINT "posts_contributor_no_contributors_contributor_no_fk" FOREIGN KEY ("contributor_no") REFERENCES "public"."contributors"("contributor_no") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "votes" ADD CONSTRAINT "votes_post_pk_posts_pk_fk" FOREIGN KEY ("post_pk") REFERENCES "public"."posts"("pk") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "votes" ADD CONSTRAINT "votes_contributor_no_contributors_contributor_no_fk" FOREIGN KEY ("contributor_no") REFERENCES "public"."contributors"("contributor_no") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "comments_post_time" ON "comments" USING btree ("post_pk","created_at","pk");--> statement-breakpoint
CREATE INDEX "contributors_key_prefix" ON "contributors" USING btree ("key_prefix");--> statement-breakpoint
CREATE INDEX "email_outbox_pending" ON "email_outbox" USING btree ("next_attempt_at") WHERE sent_at IS NULL AND gave_up_at IS NULL;--> statement-breakpoint
CREATE INDEX "email_outbox_contributor" ON "email_outbox" USING btree ("contributor_no");--> statement-breakpoint
CREATE INDEX "posts_contributor_pk" ON "posts" USING btree ("contributor_no","pk");--> statement-breakpoint
CREATE INDEX "search_postings_pk_term" ON "search_postings" USING btree ("pk","term");