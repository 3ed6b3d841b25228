CREATE TABLE `note_tags` (
	`tag` text NOT NULL,
	`post_pk` integer NOT NULL,
	`score` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`tag`, `post_pk`),
	FOREIGN KEY (`post_pk`) REFERENCES `posts`(`pk`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `note_tags_order` ON `note_tags` (`tag`,`score`,`created_at`,`post_pk`);--> statement-breakpoint
CREATE INDEX `note_tags_post` ON `note_tags` (`post_pk`);--> statement-breakpoint
ALTER TABLE `posts` ADD `supersedes` text;--> statement-breakpoint
ALTER TABLE `posts` ADD `superseded_by` text;--> statement-breakpoint
CREATE UNIQUE INDEX `posts_supersedes_unique` ON `posts` (`supersedes`);--> statement-breakpoint
-- Hand-written: the tags of the notes that exist already (none is superseded yet).
INSERT INTO `note_tags` (`tag`, `post_pk`, `score`, `created_at`)
  SELECT DISTINCT j.value, p.pk, p.score, p.created_at FROM `posts` p, json_each(p.tags) j;
