-- Issue 20: each replica holds the search index in memory and follows
-- search_log (src/store/postgres/search-log.ts); the per-term tables every
-- writer updated go. Written by drizzle-kit; one statement added by hand: the
-- single row of search_log_trim. search_vectors stays (replicas build from it).
CREATE TABLE "search_log" (
	"seq" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "search_log_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
	"pk" bigint NOT NULL,
	"removed" text
);
--> statement-breakpoint
CREATE TABLE "search_log_trim" (
	"only" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"upto" "xid8" DEFAULT '0'::xid8 NOT NULL,
	CONSTRAINT "search_log_trim_one_row" CHECK ("search_log_trim"."only")
);
--> statement-breakpoint
DROP TABLE "search_postings" CASCADE;--> statement-breakpoint
DROP TABLE "search_terms" CASCADE;--> statement-breakpoint
DROP TABLE "search_totals" CASCADE;--> statement-breakpoint
CREATE INDEX "search_log_xid" ON "search_log" USING btree ("xid");--> statement-breakpoint
INSERT INTO "search_log_trim" DEFAULT VALUES;
