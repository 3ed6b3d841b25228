// Notes on PostgreSQL: create (a plain create is single statements of
// cairn_create_note, drizzle/postgres/0004_create_note.sql: the duplicate
// check against the author's newest note this replica knows, confirmed under
// the author's lock; a create that supersedes or answers an idempotency key
// is one transaction: the duplicate and superseding checks under that lock,
// then the note, its vector, its tags and its search log row in one
// statement), read (from this replica's note views while they are current,
// note-views.ts; otherwise the row, concurrent reads coalesced,
// coalesced-reads.ts), delete, search (this replica's in-memory
// postings, search.ts). The hot statements go straight to Bun.SQL: a tagged
// template is prepared once per connection, and building the Drizzle query
// each time cost more than running it. docs/benchmarks.md, "Issue 20, third round".
import type { ReservedSQL, SQL as BunSQL } from "bun";
import type { DeleteOutcome, IdempotencyCompletion, ListedNote, NewNote, NoteRecord, OwnNoteRecord, SearchRequest, SimilarQuery, SimilarRecord, SupersedeRefusal } from "../types.ts";
import { resultOrder } from "../../core/search/query.ts";
import type { IndexedVector } from "../../core/search/vector.ts";
import { BoundedCache } from "../bounded-cache.ts";
import { CoalescedReads, textArray } from "./coalesced-reads.ts";
import { transaction } from "./connection.ts";
import { answeredOn, forgetNoteAnswersOn } from "./idempotency.ts";
import type { KeyAndLogReads } from "./note-log.ts";
import type { NoteViews } from "./note-views.ts";
import { decodeText, encodeText } from "./schema.ts";
import { LOG_TRIM_EVERY, trimLog } from "./search-log.ts";
import { noteVector, type PostgresSearch } from "./search.ts";

interface NoteRow {
  pk: string;
  id: string;
  contributor_no: number;
  title: string;
  body: string;
  tags: string[];
  score: number;
  comment_count: number;
  created_at: string;
  supersedes: string | null;
  superseded_by: string | null;
}

function toNote(row: NoteRow): NoteRecord {
  return {
    id: row.id,
    contributorNo: row.contributor_no,
    title: decodeText(row.title),
    body: decodeText(row.body),
    tags: [...row.tags],
    score: row.score,
    commentCount: row.comment_count,
    createdAt: Number(row.created_at),
    supersedes: row.supersedes,
    supersededBy: row.superseded_by,
  };
}

/** pg_advisory_xact_lock class of the per-author create lock ("AUTH"); other Cairn locks use single keys whose high half is not this. */
const AUTHOR_LOCK = 0x41555448;

/** A list of keys as one bigint[] parameter. */
const keyArray = (keys: number[]) => `{${keys.join(",")}}`;

/** A list of strings as one jsonb parameter, read back as rows by jsonb_array_elements_text. */
const jsonText = (values: string[]) => JSON.stringify(values);

interface Links {
  pk: string;
  contributor_no: number;
  supersedes: string | null;
  superseded_by: string | null;
}

/** An author's newest note as a replica saw it: its key and what the duplicate rule reads (none: pk and note null). */
interface Latest {
  pk: number | null;
  note: { id: string; title: string; body: string; tags: string[] } | null;
}

/** What cairn_create_note answers: the written note's keys, or (pk null) the author's newest note. */
interface CreateRow {
  pk: string | null;
  score: number | null;
  comment_count: number | null;
  seq: string | null;
  newest_pk: string | null;
  newest_id: string | null;
  newest_title: string | null;
  newest_body: string | null;
  newest_tags: string[] | null;
}

/** expected_pk when this replica does not know the author's newest note: no note has it, so nothing is written. */
const UNKNOWN_PK = -1;
/** Single statements a plain create tries before the general path (each one after another replica wrote for the author). */
const CREATE_ATTEMPTS = 3;

/** Authors whose newest note a replica keeps (NOTE_CACHE_MB / 4 bounds their bytes). */
const LATEST_ENTRIES = 10_000;
const latestBytes = (latest: Latest) => (latest.note ? 4 * (latest.note.title.length + latest.note.body.length + latest.note.tags.join("").length) : 0) + 200;

/** What a committed write hands this replica's postings: the log rows' newest seq and the vectors it added. */
interface Logged {
  seq: number;
  added: Map<number, IndexedVector>;
  /** The seqs of the add rows it logged. */
  addRows: number[];
}

export class PostgresNotes {
  /** Rows of notes not in the views, by id, for the requests of one turn of the event loop in one statement (coalesced-reads.ts). */
  private readonly noteReads: CoalescedReads<NoteRecord, NoteRecord | null>;
  /**
   * Each author's newest note as this replica last saw it (its own creates,
   * the duplicate checks it made): a plain create checks the duplicate rule
   * against it and sends one statement, which writes only while that note is
   * still the author's newest (cairn_create_note, drizzle/postgres/0004).
   * Never answered from.
   */
  private readonly latestOf: BoundedCache<number, Latest>;

  constructor(
    private readonly client: BunSQL,
    private readonly searchIndex: PostgresSearch,
    /** The notes this replica read, answered from while current (note-views.ts); every change this replica commits drops its notes' views. */
    private readonly views: NoteViews,
    /** Reads the note log (with the keys of the moment) when the views are not current. */
    private readonly log: KeyAndLogReads,
    noteCacheBytes: number,
  ) {
    this.latestOf = new BoundedCache(LATEST_ENTRIES, Math.max(noteCacheBytes / 4, 1), latestBytes);
    this.noteReads = new CoalescedReads(
      async (ids) => {
        this.views.reading(ids);
        let found: Map<string, NoteRecord> | null = null;
        try {
          const rows = (await this.client`
            SELECT pk, id, contributor_no, title, body, tags, score, comment_count, created_at, supersedes, superseded_by
              FROM posts WHERE id = ANY(${textArray(ids)}::text[])`) as NoteRow[];
          found = new Map(rows.map((row) => [row.id, toNote(row)]));
          return found;
        } finally {
          this.views.read(ids, found);
        }
      },
      (note) => note ?? null,
    );
  }

  async create(
    note: NewNote,
    isDuplicate: (latest: { title: string; body: string; tags: string[] }) => boolean,
    completion?: IdempotencyCompletion<NoteRecord | { duplicateOf: string } | SupersedeRefusal>,
  ): Promise<NoteRecord | { duplicateOf: string } | SupersedeRefusal> {
    const vector = note.vector?.encoded ?? noteVector(note.title, note.tags, note.body);
    if (!note.supersedes && !completion) {
      const made = await this.createPlain(note, vector, isDuplicate);
      if (made) return made;
    }
    type Outcome = { note: NoteRecord; logged: Logged } | { duplicateOf: string } | SupersedeRefusal;
    const created = await transaction(this.client, async (tx, commitWith): Promise<Outcome> => {
      // A lock per author (an advisory lock: nothing is written for it)
      // orders this author's creates and deletes across every replica: the
      // duplicate check, the superseding check and the insert are one step.
      // The latest note is read by a second statement (sent at once, run
      // after the lock is held), so its snapshot holds a racing create that just committed.
      const [, [latest]] = (await Promise.all([
        tx`SELECT pg_advisory_xact_lock(${AUTHOR_LOCK}, ${note.contributorNo})`,
        tx`SELECT pk, id, title, body, tags FROM posts WHERE contributor_no = ${note.contributorNo} ORDER BY pk DESC LIMIT 1`,
      ])) as [unknown, { pk: string; id: string; title: string; body: string; tags: string[] }[]];
      const newest: Latest = latest
        ? { pk: Number(latest.pk), note: { id: latest.id, title: decodeText(latest.title), body: decodeText(latest.body), tags: [...latest.tags] } }
        : { pk: null, note: null };
      if (newest.note && isDuplicate({ title: newest.note.title, body: newest.note.body, tags: [...newest.note.tags] })) {
        this.latestOf.set(note.contributorNo, newest);
        return answeredOn(tx, completion, { duplicateOf: newest.note.id });
      }
      const older = note.supersedes ? await lockLinks(tx, note.supersedes) : null;
      if (note.supersedes) {
        if (!older) return answeredOn(tx, completion, { supersedeMissing: true } as SupersedeRefusal);
        if (older.contributor_no !== note.contributorNo) return answeredOn(tx, completion, { supersedeForbidden: true } as SupersedeRefusal);
        if (older.superseded_by !== null) return answeredOn(tx, completion, { alreadySupersededBy: older.superseded_by });
      }
      // The plain create (the usual case) sends COMMIT with its one statement; with more to do, COMMIT comes after.
      const last = !older && !completion;
      const insert = tx`
        WITH note AS (
          INSERT INTO posts (id, contributor_no, title, body, tags, created_at, supersedes)
          VALUES (${note.id}, ${note.contributorNo}, ${encodeText(note.title)}, ${encodeText(note.body)},
                  ARRAY(SELECT jsonb_array_elements_text(${jsonText(note.tags)}::text::jsonb)), ${note.createdAt}, ${note.supersedes ?? null})
          RETURNING pk, score, comment_count
        ), vector AS (
          INSERT INTO search_vectors (pk, vector) SELECT pk, ${vector} FROM note
        ), tagged AS (
          INSERT INTO note_tags (tag, post_pk, score, created_at)
          SELECT DISTINCT t, note.pk, note.score, ${note.createdAt}::bigint FROM note, jsonb_array_elements_text(${jsonText(note.tags)}::text::jsonb) t
        ), logged AS (
          INSERT INTO search_log (pk) SELECT pk FROM note RETURNING seq
        )
        SELECT note.pk, note.score, note.comment_count, logged.seq FROM note, logged`;
      const [row] = (await (last ? commitWith(insert) : insert)) as { pk: string; score: number; comment_count: number; seq: string }[];
      const logged: Logged = { seq: Number(row.seq), added: new Map([[Number(row.pk), note.vector?.terms ?? vector]]), addRows: [Number(row.seq)] };
      if (older) {
        // The older note leaves search: its vector, its tags, a remove row in the log (as a delete writes).
        const [gone] = (await tx`
          WITH marked AS (UPDATE posts SET superseded_by = ${note.id} WHERE pk = ${older.pk}),
               tags AS (DELETE FROM note_tags WHERE post_pk = ${older.pk}),
               vector AS (DELETE FROM search_vectors WHERE pk = ${older.pk} RETURNING pk, vector),
               logged AS (INSERT INTO search_log (pk, removed) SELECT pk, vector FROM vector RETURNING seq)
          SELECT seq FROM logged`) as { seq: string }[];
        if (gone) logged.seq = Math.max(logged.seq, Number(gone.seq));
      }
      return { note: await answeredOn(tx, completion, createdRecord(note, row.score, row.comment_count)), logged };
    });
    if (!("note" in created)) return created;
    const pk = Number([...created.logged.added.keys()][0]);
    if (note.supersedes) {
      // The superseded note changed (superseded_by), and left search: the next search reads the log first.
      this.views.changed([note.supersedes]);
      this.written(created.logged);
    } else this.createdNew(pk, created.logged.seq, note, vector);
    this.rememberLatest(created.note, pk);
    return created.note;
  }

  /**
   * A plain create (no supersedes, no idempotency key) as single statements
   * (cairn_create_note): with the author's newest note known to this replica
   * and not repeated, one statement writes the note if that note is still the
   * newest under the author's lock; otherwise it answers the newest note, which
   * is checked by the duplicate rule, and the next statement writes against it
   * (or confirms the duplicate). A note by the author written meanwhile
   * through another replica costs one more statement. Null after
   * CREATE_ATTEMPTS statements without an answer: the general path decides.
   */
  private async createPlain(note: NewNote, vector: string, isDuplicate: (latest: { title: string; body: string; tags: string[] }) => boolean) {
    /** undefined: not known to this replica. */
    let known: Latest | undefined = this.latestOf.get(note.contributorNo);
    for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
      const repeated = known?.note ? isDuplicate({ title: known.note.title, body: known.note.body, tags: [...known.note.tags] }) : false;
      const write = known !== undefined && !repeated;
      const [row] = (await this.client`
        SELECT * FROM cairn_create_note(${known === undefined ? UNKNOWN_PK : known.pk}::bigint, ${write}, ${note.id}, ${note.contributorNo},
               ${encodeText(note.title)}, ${encodeText(note.body)}, ${textArray(note.tags)}::text[], ${note.createdAt}::bigint, ${vector})`) as CreateRow[];
      if (row.pk !== null) {
        const pk = Number(row.pk);
        this.createdNew(pk, Number(row.seq), note, vector);
        const record = createdRecord(note, row.score!, row.comment_count!);
        this.rememberLatest(record, pk);
        return record;
      }
      const newest: Latest =
        row.newest_pk === null
          ? { pk: null, note: null }
          : { pk: Number(row.newest_pk), note: { id: row.newest_id!, title: decodeText(row.newest_title!), body: decodeText(row.newest_body!), tags: [...row.newest_tags!] } };
      this.latestOf.set(note.contributorNo, newest);
      // A repeat of the note that is still the newest under the lock: the duplicate, nothing written.
      if (repeated && known?.note && newest.pk === known.pk) return { duplicateOf: known.note.id };
      known = newest;
    }
    return null;
  }

  private rememberLatest(note: NoteRecord, pk: number): void {
    this.latestOf.set(note.contributorNo, { pk, note: { id: note.id, title: note.title, body: note.body, tags: [...note.tags] } });
  }

  /**
   * After a create that wrote a new note and nothing else to the search log
   * committed: the note goes into this replica's postings now (its next
   * search or similar-notes lookup does not wait for a read of the log; on
   * one replica with similar notes on, that read was on every create's path:
   * docs/benchmarks.md, "Issue 20: own notes indexed at commit, the lease on a connection of its own").
   */
  private createdNew(pk: number, seq: number, note: NewNote, stored: string): void {
    this.searchIndex.log.ownRow(seq);
    this.searchIndex.memory.indexed(new Map([[pk, { vector: note.vector?.terms ?? stored, stored }]]));
    if (seq % LOG_TRIM_EVERY === 0) void trimLog(this.client, seq).catch(() => {});
  }

  /** After a write that logged rows up to `seq` committed (with the vectors it added): this replica's next search finds them; the log is trimmed now and then. */
  private written(logged: Logged): void {
    for (const seq of logged.addRows) this.searchIndex.log.ownRow(seq);
    this.searchIndex.memory.committed(logged.added.size > 0 ? logged.added : undefined);
    if (logged.seq % LOG_TRIM_EVERY === 0) void trimLog(this.client, logged.seq).catch(() => {});
  }

  /** Newest first below `beforePk`, by the (contributor_no, pk) index: a page costs its rows, whatever the offset. */
  async listOwn(contributorNo: number, beforePk: number | null, limit: number): Promise<OwnNoteRecord[]> {
    const rows = (await this.client`
      SELECT pk, id, title, tags, score, comment_count, supersedes, superseded_by, created_at FROM posts
       WHERE contributor_no = ${contributorNo} AND pk < ${beforePk ?? Number.MAX_SAFE_INTEGER}
       ORDER BY pk DESC LIMIT ${limit}`) as { pk: string; id: string; title: string; tags: string[]; score: number; comment_count: number; supersedes: string | null; superseded_by: string | null; created_at: string }[];
    return rows.map((row) => ({
      pk: Number(row.pk),
      id: row.id,
      title: decodeText(row.title),
      tags: [...row.tags],
      score: row.score,
      commentCount: row.comment_count,
      supersedes: row.supersedes,
      supersededBy: row.superseded_by,
      createdAt: Number(row.created_at),
    }));
  }

  /**
   * The note's view while it is current (a keyed request read the log with
   * its key); otherwise its row, read after the request arrived (coalesced
   * with the others of the moment), and the log is read so that the next
   * requests find the views current.
   */
  get(id: string): Promise<NoteRecord | null> {
    const view = this.views.current(id);
    if (view) return Promise.resolve(view);
    if (!this.views.fresh) void this.log.follow().catch(() => {});
    return this.noteReads.read(id);
  }

  async delete(id: string, contributorNo: number): Promise<DeleteOutcome> {
    const outcome = await transaction(this.client, async (tx, commitWith): Promise<DeleteOutcome | (Logged & { links: Links })> => {
      const [author] = (await tx`SELECT contributor_no FROM posts WHERE id = ${id}`) as { contributor_no: number }[];
      if (!author) return "missing";
      if (author.contributor_no !== contributorNo) return "not_author";
      // The author's lock first, as a create takes it: every change to a chain of superseding
      // notes (one author's) is then ordered, and no two transactions lock its notes in opposite orders.
      await tx`SELECT pg_advisory_xact_lock(${AUTHOR_LOCK}, ${contributorNo})`;
      const note = await lockLinks(tx, id);
      if (!note) return "missing";
      const logged: Logged = { seq: 0, added: new Map(), addRows: [] };
      if (note.supersedes !== null) await restore(tx, note.supersedes, id, logged);
      if (note.superseded_by !== null) await tx`UPDATE posts SET supersedes = NULL WHERE id = ${note.superseded_by} AND supersedes = ${id}`;
      await forgetNoteAnswersOn(tx, id);
      // Comments and votes go by ON DELETE CASCADE; the log row carries the removed vector (its row is gone).
      const [row] = (await commitWith(tx`
        WITH note AS (DELETE FROM posts WHERE pk = ${note.pk}),
             vector AS (DELETE FROM search_vectors WHERE pk = ${note.pk} RETURNING pk, vector),
             logged AS (INSERT INTO search_log (pk, removed) SELECT pk, vector FROM vector RETURNING seq)
        SELECT seq FROM logged`)) as { seq: string }[];
      if (row) logged.seq = Math.max(logged.seq, Number(row.seq));
      return { ...logged, links: note };
    });
    if (typeof outcome === "string") return outcome;
    // The note and the notes it linked to changed: on this replica's next request at once (others read the log).
    this.views.changed([id, outcome.links.supersedes, outcome.links.superseded_by]);
    this.latestOf.delete(contributorNo);
    // Even a delete that logged nothing (a superseded note is out of search already) makes this
    // replica's next search level with the log: the writes it waited for (the author's lock) are in it.
    if (outcome.seq > 0) this.written(outcome);
    else this.searchIndex.memory.committed();
    return "deleted";
  }

  async search(request: SearchRequest): Promise<NoteRecord[]> {
    if (request.tags.length > 0 && request.words.length === 0) {
      // Tag words only: the best-scored notes carrying every tag (net score, then newest).
      const pks = await this.searchIndex.bestTagged(request);
      const rows = new Map((await this.rows(pks)).map((note) => [note.pk, note]));
      return pks.flatMap((pk) => {
        const found = rows.get(pk);
        if (!found) return [];
        const { pk: _, ...note } = found;
        return [note];
      });
    }
    const ranked = await this.searchIndex.rank(request);
    if (ranked.length === 0) return [];
    return resultOrder(ranked, await this.rows(ranked.map((r) => r.key)), request.limit).map(({ pk: _, ...note }) => note);
  }

  async similar(query: SimilarQuery): Promise<SimilarRecord[]> {
    const { own, ranked } = await this.searchIndex.similar(query);
    if (ranked.length === 0) return [];
    const shares = new Map(ranked.map((r) => [r.key, r.score / own]));
    return resultOrder(ranked, await this.listed(ranked.map((r) => r.key)), query.limit).map(({ pk, ...note }) => ({ note, share: shares.get(pk)! }));
  }

  /**
   * What a similar-notes listing shows of some notes (a replay loop's ties
   * bring dozens: no body is read), never a superseded one: this replica's
   * postings follow another replica's supersede within SEARCH_FOLLOW_MS, and
   * the row says it at once (as SQLite's statements do).
   */
  private async listed(pks: number[]): Promise<(ListedNote & { pk: number })[]> {
    const rows = (await this.client`
      SELECT pk, id, contributor_no, title, score, created_at
        FROM posts WHERE pk = ANY(${keyArray(pks)}::bigint[]) AND superseded_by IS NULL`) as Pick<NoteRow, "pk" | "id" | "contributor_no" | "title" | "score" | "created_at">[];
    return rows.map((row) => ({
      pk: Number(row.pk),
      id: row.id,
      contributorNo: row.contributor_no,
      title: decodeText(row.title),
      score: row.score,
      createdAt: Number(row.created_at),
    }));
  }

  /** Some notes' records for a search's results, never a superseded one (listed). */
  private async rows(pks: number[]): Promise<(NoteRecord & { pk: number })[]> {
    if (pks.length === 0) return [];
    const rows = (await this.client`
      SELECT pk, id, contributor_no, title, body, tags, score, comment_count, created_at, supersedes, superseded_by
        FROM posts WHERE pk = ANY(${keyArray(pks)}::bigint[]) AND superseded_by IS NULL`) as NoteRow[];
    return rows.map((row) => ({ ...toNote(row), pk: Number(row.pk) }));
  }
}

/** The record of a note just written. */
function createdRecord(note: NewNote, score: number, commentCount: number): NoteRecord {
  return {
    id: note.id,
    contributorNo: note.contributorNo,
    title: note.title,
    body: note.body,
    tags: note.tags,
    score,
    commentCount,
    createdAt: note.createdAt,
    supersedes: note.supersedes ?? null,
    supersededBy: null,
  };
}

/** A note's author and links, row-locked for the transaction; null when it does not exist. */
async function lockLinks(tx: ReservedSQL, id: string): Promise<Links | null> {
  const [row] = (await tx`SELECT pk, contributor_no, supersedes, superseded_by FROM posts WHERE id = ${id} FOR UPDATE`) as Links[];
  return row ?? null;
}

/**
 * Inside the delete of note `id`: the note it superseded (`olderId`) goes
 * back into search: its vector, its tags and an add row in the log (as a create writes).
 */
async function restore(tx: ReservedSQL, olderId: string, id: string, logged: Logged): Promise<void> {
  const [restored] = (await tx`
    UPDATE posts SET superseded_by = NULL WHERE id = ${olderId} AND superseded_by = ${id}
    RETURNING pk, title, body, tags, score, created_at`) as { pk: string; title: string; body: string; tags: string[]; score: number; created_at: string }[];
  if (!restored) return;
  const vector = noteVector(decodeText(restored.title), [...restored.tags], decodeText(restored.body));
  const [row] = (await tx`
    WITH vector AS (INSERT INTO search_vectors (pk, vector) VALUES (${restored.pk}, ${vector}) ON CONFLICT (pk) DO NOTHING RETURNING pk),
         tagged AS (
           INSERT INTO note_tags (tag, post_pk, score, created_at)
           SELECT DISTINCT t, ${restored.pk}::bigint, ${restored.score}::int, ${restored.created_at}::bigint FROM jsonb_array_elements_text(${jsonText([...restored.tags])}::text::jsonb) t
           ON CONFLICT DO NOTHING),
         logged AS (INSERT INTO search_log (pk) SELECT pk FROM vector RETURNING seq)
    SELECT seq FROM logged`) as { seq: string }[];
  if (row) {
    logged.seq = Math.max(logged.seq, Number(row.seq));
    logged.added.set(Number(restored.pk), vector);
    logged.addRows.push(Number(row.seq));
  }
}
