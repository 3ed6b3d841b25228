-- Hand-written (drizzle-kit does not model the search tables): the FTS5 index
-- no longer changes in the note's own write transaction; it follows the
-- search log, like the term counts, up to fts_seq
-- (src/store/sqlite/fts-follow.ts; docs/benchmarks.md, "Writes of ~2 KB
-- notes, fourth round"). Until now it changed with every note, so it holds
-- the whole log.
ALTER TABLE `search_totals` ADD `fts_seq` integer NOT NULL DEFAULT 0;--> statement-breakpoint
UPDATE `search_totals` SET `fts_seq` = (SELECT coalesce(max(`seq`), 0) FROM `search_log`);
