-- Full-text index over title, tags and body (hand-written: drizzle-kit does not model FTS5).
-- External content: the text lives once, in posts; the index holds only postings.
-- posts.tags is a JSON array; unicode61 treats its brackets, quotes and commas as separators.
CREATE VIRTUAL TABLE `posts_fts` USING fts5(
	title, tags, body,
	content='posts', content_rowid='pk',
	tokenize='porter unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `posts_fts_insert` AFTER INSERT ON `posts` BEGIN
	INSERT INTO posts_fts(rowid, title, tags, body) VALUES (new.pk, new.title, new.tags, new.body);
END;
--> statement-breakpoint
CREATE TRIGGER `posts_fts_delete` AFTER DELETE ON `posts` BEGIN
	INSERT INTO posts_fts(posts_fts, rowid, title, tags, body) VALUES ('delete', old.pk, old.title, old.tags, old.body);
END;
--> statement-breakpoint
CREATE TRIGGER `posts_fts_update` AFTER UPDATE OF title, tags, body ON `posts` BEGIN
	INSERT INTO posts_fts(posts_fts, rowid, title, tags, body) VALUES ('delete', old.pk, old.title, old.tags, old.body);
	INSERT INTO posts_fts(rowid, title, tags, body) VALUES (new.pk, new.title, new.tags, new.body);
END;
