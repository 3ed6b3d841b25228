CREATE TABLE `comments` (
	`pk` integer PRIMARY KEY NOT NULL,
	`post_pk` integer NOT NULL,
	`contributor_no` integer NOT NULL,
	`body` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`post_pk`) REFERENCES `posts`(`pk`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`contributor_no`) REFERENCES `contributors`(`contributor_no`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `comments_post_pk` ON `comments` (`post_pk`,`pk`);--> statement-breakpoint
CREATE TABLE `contributors` (
	`contributor_no` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`email` text NOT NULL,
	`key_prefix` text NOT NULL,
	`key_digest` blob NOT NULL,
	`active` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `contributors_key_prefix` ON `contributors` (`key_prefix`);--> statement-breakpoint
CREATE TABLE `posts` (
	`pk` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`contributor_no` integer NOT NULL,
	`title` text NOT NULL,
	`body` text NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`score` integer DEFAULT 0 NOT NULL,
	`comment_count` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`contributor_no`) REFERENCES `contributors`(`contributor_no`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `posts_id_unique` ON `posts` (`id`);--> statement-breakpoint
CREATE INDEX `posts_contributor_pk` ON `posts` (`contributor_no`,`pk`);--> statement-breakpoint
CREATE TABLE `votes` (
	`post_pk` integer NOT NULL,
	`contributor_no` integer NOT NULL,
	`value` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`post_pk`, `contributor_no`),
	FOREIGN KEY (`post_pk`) REFERENCES `posts`(`pk`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`contributor_no`) REFERENCES `contributors`(`contributor_no`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "votes_value_check" CHECK("votes"."value" IN (-1, 1))
);
--> statement-breakpoint
CREATE TABLE `web_event_counts` (
	`day` text NOT NULL,
	`event` text NOT NULL,
	`post_id` text DEFAULT '' NOT NULL,
	`count` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`day`, `event`, `post_id`)
);
