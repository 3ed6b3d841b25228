-- Search index of our own terms (hand-written: drizzle-kit does not model FTS5).
-- src/core/search/analyzer.ts makes each note's index terms; FTS5 stores them
-- split on spaces (tokenize='ascii' keeps non-ASCII bytes inside a term), so
-- its postings and the term statistics below agree by construction. Filled and
-- kept current by src/store/sqlite/search.ts inside each note's write.
DROP TRIGGER IF EXISTS `posts_fts_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `posts_fts_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `posts_fts_update`;
--> statement-breakpoint
DROP TABLE IF EXISTS `posts_fts`;
--> statement-breakpoint
-- One column per impact tier (src/core/search/ranking.ts); a note's term is in
-- exactly one. detail=column: the search needs which notes hold a term in which
-- tier, never positions.
CREATE VIRTUAL TABLE `search_fts` USING fts5(
	t0, t1, t2, t3, t4, t5, t6, t7, t8,
	content='', contentless_delete=1,
	tokenize='ascii', detail='column'
);
--> statement-breakpoint
CREATE TABLE `search_vectors` (
	`pk` integer PRIMARY KEY NOT NULL,
	`vector` text NOT NULL
);
--> statement-breakpoint
-- Notes holding each term, per impact tier (a note holds a term in one tier).
CREATE TABLE `search_terms` (
	`term` text NOT NULL,
	`tier` integer NOT NULL,
	`notes` integer NOT NULL,
	PRIMARY KEY (`term`, `tier`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `search_totals` (
	`id` integer PRIMARY KEY NOT NULL CHECK (`id` = 1),
	`notes` integer NOT NULL,
	`title_terms` integer NOT NULL,
	`tag_terms` integer NOT NULL,
	`body_terms` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `search_totals` VALUES (1, 0, 0, 0, 0);
