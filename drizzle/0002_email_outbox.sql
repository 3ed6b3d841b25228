CREATE TABLE `email_outbox` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`contributor_no` integer NOT NULL,
	`recipient` text NOT NULL,
	`kind` text NOT NULL,
	`created_at` integer NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`leased_until` integer,
	`last_error` text,
	`sent_at` integer,
	`gave_up_at` integer,
	FOREIGN KEY (`contributor_no`) REFERENCES `contributors`(`contributor_no`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `email_outbox_pending` ON `email_outbox` (`next_attempt_at`) WHERE sent_at IS NULL AND gave_up_at IS NULL;--> statement-breakpoint
CREATE INDEX `email_outbox_contributor` ON `email_outbox` (`contributor_no`);