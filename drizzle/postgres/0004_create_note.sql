-- Issue 20: a plain note create in one statement (src/store/postgres/notes.ts,
-- "create"). Written by hand (drizzle-kit generate --custom: no table changes).
-- Under the author's create lock (the advisory lock a delete takes too), and
-- only while the author's newest note is still the one the replica checked the
-- duplicate rule against (`expected_pk`, NULL: none): then the note, its
-- vector, its tags and its search log row. Otherwise nothing is written and no
-- row comes back; the replica then takes the general path. A VOLATILE
-- function's statements each take a fresh snapshot, so the newest note is
-- read after the lock is held, as the general path's second statement reads it.
CREATE OR REPLACE FUNCTION cairn_create_note(
	expected_pk bigint, note_id text, author integer, title text, body text, tags text[], created_at bigint, vector text
) RETURNS TABLE (pk bigint, score integer, comment_count integer, seq bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	-- 1096111176 = 0x41555448 ("AUTH"), AUTHOR_LOCK in notes.ts.
	PERFORM pg_advisory_xact_lock(1096111176, author);
	IF (SELECT p.pk FROM posts p WHERE p.contributor_no = author ORDER BY p.pk DESC LIMIT 1) IS DISTINCT FROM expected_pk THEN
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
