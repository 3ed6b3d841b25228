-- Issue 20: a plain note create in one statement (src/store/postgres/notes.ts,
-- "create"). Written by hand (drizzle-kit generate --custom: no table changes).
-- Under the author's create lock (the advisory lock a delete takes too): when
-- `write` is set and the author's newest note is still the one the replica
-- checked the duplicate rule against (`expected_pk`; NULL: the author had
-- none), the note, its vector, its tags and its search log row are written and
-- their keys come back. Otherwise nothing is written, and the author's newest
-- note comes back (newest_*, all NULL when there is none) for the replica to
-- check and try again. A VOLATILE function's statements each take a fresh
-- snapshot, so the newest note is read after the lock is held.
CREATE OR REPLACE FUNCTION cairn_create_note(
	expected_pk bigint, write boolean, note_id text, author integer, title text, body text, tags text[], created_at bigint, vector text
) RETURNS TABLE (
	pk bigint, score integer, comment_count integer, seq bigint,
	newest_pk bigint, newest_id text, newest_title text, newest_body text, newest_tags text[]
)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	-- 1096111176 = 0x41555448 ("AUTH"), AUTHOR_LOCK in notes.ts.
	PERFORM pg_advisory_xact_lock(1096111176, author);
	SELECT p.pk INTO newest_pk FROM posts p WHERE p.contributor_no = author ORDER BY p.pk DESC LIMIT 1;
	IF NOT write OR newest_pk IS DISTINCT FROM expected_pk THEN
		SELECT p.id, p.title, p.body, p.tags INTO newest_id, newest_title, newest_body, newest_tags FROM posts p WHERE p.pk = newest_pk;
		RETURN NEXT;
		RETURN;
	END IF;
	INSERT INTO posts AS p (id, contributor_no, title, body, tags, created_at)
		VALUES (note_id, author, cairn_create_note.title, cairn_create_note.body, cairn_create_note.tags, cairn_create_note.created_at)
		RETURNING p.pk, p.score, p.comment_count INTO pk, score, comment_count;
	INSERT INTO search_vectors AS v (pk, vector) VALUES (cairn_create_note.pk, cairn_create_note.vector);
	INSERT INTO note_tags AS t (tag, post_pk, score, created_at)
		SELECT DISTINCT tag, cairn_create_note.pk, cairn_create_note.score, cairn_create_note.created_at FROM unnest(cairn_create_note.tags) tag;
	INSERT INTO search_log AS l (pk) VALUES (cairn_create_note.pk) RETURNING l.seq INTO seq;
	RETURN NEXT;
END
$$;
