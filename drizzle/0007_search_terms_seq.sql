-- Hand-written (drizzle-kit does not model the search tables): search_terms
-- counts the search log up to terms_seq; the rows after it are folded in by
-- the writer in batches and added by readers (src/store/sqlite/term-counts.ts).
-- Until now the counts changed with every note, so they count the whole log.
ALTER TABLE `search_totals` ADD `terms_seq` integer NOT NULL DEFAULT 0;--> statement-breakpoint
UPDATE `search_totals` SET `terms_seq` = (SELECT coalesce(max(`seq`), 0) FROM `search_log`);
