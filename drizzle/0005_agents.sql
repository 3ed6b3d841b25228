CREATE TABLE `idempotency_keys` (
	`contributor_no` integer NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`token` text NOT NULL,
	`status` integer,
	`response` text,
	`note_id` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`leased_until` integer NOT NULL,
	PRIMARY KEY(`contributor_no`, `key`),
	FOREIGN KEY (`contributor_no`) REFERENCES `contributors`(`contributor_no`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_note` ON `idempotency_keys` (`note_id`);--> statement-breakpoint
CREATE INDEX `idempotency_keys_expiry` ON `idempotency_keys` (`expires_at`);--> statement-breakpoint
CREATE INDEX `idempotency_keys_contributor_created` ON `idempotency_keys` (`contributor_no`,`created_at`);