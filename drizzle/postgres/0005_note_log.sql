-- Issue 20: each replica keeps the notes it served in memory (note views,
-- src/store/postgres/note-views.ts) and the keys it found valid, and forgets
-- them when this log says they changed (src/store/postgres/note-log.ts).
-- Written by drizzle-kit; the triggers added by hand. The row triggers log
-- every update or delete of a note (a vote, a comment, a supersede, a delete,
-- whichever statement makes it) in the writing transaction, and a row 'keys'
-- for every change of a key's standing (active, prefix, digest); a TRUNCATE
-- of posts (`admin copy`) moves the trim mark, so every replica forgets all. note_log_trim starts empty (read as
-- 0), so `admin copy` still finds a migrated database empty.
CREATE TABLE "note_log" (
	"seq" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "note_log_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
	"id" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "note_log_trim" (
	"only" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"upto" "xid8" DEFAULT '0'::xid8 NOT NULL,
	CONSTRAINT "note_log_trim_one_row" CHECK ("note_log_trim"."only")
);
--> statement-breakpoint
CREATE INDEX "note_log_xid" ON "note_log" USING btree ("xid");
--> statement-breakpoint
CREATE OR REPLACE FUNCTION cairn_note_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO note_log (id) VALUES (OLD.id);
	RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER posts_updated_note_log AFTER UPDATE ON posts
	FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION cairn_note_changed();--> statement-breakpoint
CREATE TRIGGER posts_deleted_note_log AFTER DELETE ON posts
	FOR EACH ROW EXECUTE FUNCTION cairn_note_changed();--> statement-breakpoint
CREATE OR REPLACE FUNCTION cairn_notes_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO note_log_trim (upto) VALUES (pg_current_xact_id()) ON CONFLICT ("only") DO UPDATE SET upto = excluded.upto;
	RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER posts_truncated AFTER TRUNCATE ON posts
	FOR EACH STATEMENT EXECUTE FUNCTION cairn_notes_truncated();--> statement-breakpoint
CREATE OR REPLACE FUNCTION cairn_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO note_log (id) VALUES ('keys');
	RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER contributors_key_log AFTER UPDATE ON contributors
	FOR EACH ROW WHEN (OLD.active IS DISTINCT FROM NEW.active OR OLD.key_prefix IS DISTINCT FROM NEW.key_prefix OR OLD.key_digest IS DISTINCT FROM NEW.key_digest)
	EXECUTE FUNCTION cairn_key_changed();--> statement-breakpoint
CREATE TRIGGER contributors_deleted_key_log AFTER DELETE ON contributors
	FOR EACH ROW EXECUTE FUNCTION cairn_key_changed();
