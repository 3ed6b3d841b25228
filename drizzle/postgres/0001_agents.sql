CREATE TABLE "idempotency_keys" (
	"contributor_no" integer NOT NULL,
	"key" text NOT NULL,
	"fingerprint" text NOT NULL,
	"token" text NOT NULL,
	"status" integer,
	"response" text,
	"note_id" text,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"leased_until" bigint NOT NULL,
	CONSTRAINT "idempotency_keys_contributor_no_key_pk" PRIMARY KEY("contributor_no","key")
);
--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_contributor_no_contributors_contributor_no_fk" FOREIGN KEY ("contributor_no") REFERENCES "public"."contributors"("contributor_no") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idempotency_keys_note" ON "idempotency_keys" USING btree ("note_id");--> statement-breakpoint
CREATE INDEX "idempotency_keys_expiry" ON "idempotency_keys" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "idempotency_keys_contributor_created" ON "idempotency_keys" USING btree ("contributor_no","created_at");