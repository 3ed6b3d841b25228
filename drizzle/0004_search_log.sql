-- Hand-written (drizzle-kit does not model it): every change to the search
-- index in commit order, so each server's in-memory postings
-- (src/core/search/memory-index.ts) follow writes made by any process on the
-- database. An added note's vector is read from search_vectors; a removed
-- note's vector travels in `removed`, as the row that held it is gone.
-- Old rows are trimmed by the writer (src/store/sqlite/search.ts).
CREATE TABLE `search_log` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`pk` integer NOT NULL,
	`removed` text
);
