// Notes on SQLite: create (with the duplicate check and the search entry in
// the same write), read through a byte-bounded cache kept right across
// processes by the note signal, delete, search.
import type { Database } from "bun:sqlite";
import { eq, sql } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { BoundedCache } from "../bounded-cache.ts";
import { NOTE_CACHE_ENTRIES, noteRecordBytes as noteBytes } from "../note-records.ts";
import type { DeleteOutcome, IdempotencyCompletion, NewNote, NoteRecord, OwnNoteRecord, SearchRequest, SimilarQuery, SimilarRecord, SupersedeRefusal } from "../types.ts";
import type { SqliteIdempotency } from "./idempotency.ts";
import { ChangeSignal, NOTE_SIGNAL_FILE } from "./change-signal.ts";
import type { CommitHooks, GroupCommit } from "./group-commit.ts";
import type * as schema from "./schema.ts";
import { posts } from "./schema.ts";
import { NOTE_SELECT, toCreated, toNote, type NoteRow } from "./note-row.ts";
import type { SqliteSearch } from "./search.ts";
import { onFirstUse } from "./on-first-use.ts";

export { DEFAULT_NOTE_CACHE_BYTES } from "../note-records.ts";

export class SqliteNotes implements CommitHooks {
  /** Built on first use, after migrations have made the tables. */
  private readonly statements = onFirstUse(() => this.prepare());
  /**
   * Recently read notes. A note read costs two B-tree lookups on a UUID index
   * and half of a keyed GET's time; a hit costs a Map lookup. Every write that
   * changes a note (vote, comment, delete) drops its entry inside the write, so
   * no stale score or count is served, and bumps the note signal after COMMIT:
   * another server on the same directory sees the signal move on its next
   * read and drops its whole cache (see get).
   */
  private readonly cache: BoundedCache<string, NoteRecord>;
  /** Announces note changes (vote, comment, delete) to every server on this data directory. */
  private changes: ChangeSignal;
  /** The note generation the cache reflects: every change up to it is in the cache. */
  private seen = NaN;
  /** Set by a write that changed a note, so its batch bumps the note signal after COMMIT. */
  private changedInBatch = false;

  constructor(
    private readonly sqlite: Database,
    private readonly db: BunSQLiteDatabase<typeof schema>,
    private readonly commit: GroupCommit,
    private readonly searchIndex: SqliteSearch,
    private readonly dataDir: string,
    cacheBytes: number,
    private readonly idempotency: SqliteIdempotency,
  ) {
    this.changes = ChangeSignal.open(dataDir, NOTE_SIGNAL_FILE);
    this.seen = this.changes.read();
    this.cache = new BoundedCache(NOTE_CACHE_ENTRIES, cacheBytes, noteBytes);
  }

  /** Null when note changes are announced across processes; otherwise why not (notes are then never cached). */
  get signalOffReason(): string | null {
    return this.changes.unavailableReason;
  }

  /** Re-maps the note signal when its file was removed or replaced (the cache empties); its path, or null. */
  remapReplacedSignal(): string | null {
    if (!this.changes.replaced()) return null;
    this.changes = ChangeSignal.open(this.dataDir, NOTE_SIGNAL_FILE);
    this.seen = NaN;
    return this.changes.path;
  }

  // Prepared once (after migrations): building a Drizzle query costs far more
  // than running it on an indexed SQLite table.
  private prepare() {
    const db = this.db;
    return {
      // Read by every keyed GET, as a plain bun:sqlite statement: Drizzle's
      // row mapping costs a third of its time.
      byId: this.sqlite.query<NoteRow, [string]>(`SELECT ${NOTE_SELECT} FROM posts p WHERE p.id = ?`),
      // The create path's two statements, as plain bun:sqlite statements too:
      // through Drizzle they were ~5% of the server's main thread under a
      // write load of ~2 KB notes (docs/benchmarks.md, "Writes of ~2 KB
      // notes, third round").
      latest: this.sqlite.query<{ id: string; title: string; body: string; tags: string }, [number]>(
        "SELECT id, title, body, tags FROM posts WHERE contributor_no = ? ORDER BY pk DESC LIMIT 1",
      ),
      // No RETURNING: the new row is the values bound and the columns' defaults (toCreated).
      insert: this.sqlite.query<unknown, [string, number, string, string, string, number, string | null]>(
        "INSERT INTO posts(id, contributor_no, title, body, tags, created_at, supersedes) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ),
      own: this.sqlite.query<Omit<OwnNoteRecord, "tags"> & { tags: string }, [number, number, number]>(
        `SELECT pk, id, title, tags, score, comment_count AS commentCount, supersedes, superseded_by AS supersededBy, created_at AS createdAt
           FROM posts WHERE contributor_no = ? AND pk < ? ORDER BY pk DESC LIMIT ?`,
      ),
      locate: db.select({ pk: posts.pk, contributorNo: posts.contributorNo }).from(posts).where(eq(posts.id, sql.placeholder("id"))).prepare(),
      delete: db.delete(posts).where(eq(posts.pk, sql.placeholder("postPk"))).prepare(),
      ...this.prepareSupersede(),
    };
  }

  /** Statements of superseding (docs/design.md, "Superseding"). */
  private prepareSupersede() {
    const sqlite = this.sqlite;
    return {
      links: sqlite.query<{ pk: number; contributorNo: number; supersedes: string | null; supersededBy: string | null }, [string]>(
        "SELECT pk, contributor_no AS contributorNo, supersedes, superseded_by AS supersededBy FROM posts WHERE id = ?",
      ),
      markSuperseded: sqlite.query<unknown, [number, string]>("UPDATE posts SET superseded_by = ?2 WHERE pk = ?1"),
      // The older note of a deleted newer one: back into search, with its row for the index.
      restore: sqlite.query<NoteRow, [string, string]>(
        `UPDATE posts SET superseded_by = NULL WHERE id = ?1 AND superseded_by = ?2 RETURNING ${NOTE_SELECT.replaceAll("p.", "")}`,
      ),
      forget: sqlite.query<unknown, [string, string]>("UPDATE posts SET supersedes = NULL WHERE id = ?1 AND supersedes = ?2"),
    };
  }

  /** The note's row key and author, or null. */
  locate(id: string): { pk: number; contributorNo: number } | null {
    return this.statements().locate.get({ id }) ?? null;
  }

  /** Inside a write: drop the note's cache entry and have the batch announce the change after COMMIT. */
  changed(id: string): void {
    this.cache.delete(id);
    this.changedInBatch = true;
  }

  /** After COMMIT. When nobody else bumped meanwhile, our cache is still current: only our own entries changed, and they are gone. */
  committed(): void {
    if (!this.changedInBatch) return;
    this.changedInBatch = false;
    const before = this.changes.bump();
    if (before === this.seen) this.seen = (before + 1) | 0;
  }

  failed(): void {
    this.changedInBatch = false;
  }

  create(
    note: NewNote,
    isDuplicate: (latest: { title: string; body: string; tags: string[] }) => boolean,
    completion?: IdempotencyCompletion<NoteRecord | { duplicateOf: string } | SupersedeRefusal>,
  ) {
    return this.commit.write((): NoteRecord | { duplicateOf: string } | SupersedeRefusal => {
      const latest = this.statements().latest.get(note.contributorNo);
      if (latest && isDuplicate({ title: latest.title, body: latest.body, tags: JSON.parse(latest.tags) })) return this.idempotency.answered(completion, { duplicateOf: latest.id });
      const older = note.supersedes ? this.statements().links.get(note.supersedes) : null;
      if (note.supersedes) {
        // Checked and marked in this one write transaction: two notes racing to supersede one cannot both pass.
        if (!older) return this.idempotency.answered(completion, { supersedeMissing: true });
        if (older.contributorNo !== note.contributorNo) return this.idempotency.answered(completion, { supersedeForbidden: true });
        if (older.supersededBy !== null) return this.idempotency.answered(completion, { alreadySupersededBy: older.supersededBy });
      }
      const supersedes = note.supersedes ?? null;
      const { lastInsertRowid } = this.statements().insert.run(note.id, note.contributorNo, note.title, note.body, JSON.stringify(note.tags), note.createdAt, supersedes);
      const pk = Number(lastInsertRowid);
      this.searchIndex.add({ pk, title: note.title, tags: note.tags, body: note.body, vector: note.vector });
      this.searchIndex.tags.addNew(pk, note.tags, note.createdAt);
      if (older && note.supersedes) {
        this.statements().markSuperseded.run(older.pk, note.id);
        this.changed(note.supersedes);
        this.searchIndex.remove(older.pk);
        this.searchIndex.tags.remove(older.pk);
      }
      return this.idempotency.answered(completion, toCreated(note, supersedes));
    });
  }

  /** Newest first below `beforePk`, by the (contributor_no, pk) index: a page costs its rows, whatever the offset. */
  listOwn(contributorNo: number, beforePk: number | null, limit: number): OwnNoteRecord[] {
    const rows = this.statements().own.all(contributorNo, beforePk ?? Number.MAX_SAFE_INTEGER, limit);
    return rows.map((row) => ({ ...row, tags: JSON.parse(row.tags) as string[] }));
  }

  /** Inside a delete: the notes linked to the deleted one let go of it; the one it superseded goes back into search. */
  private unlink(id: string, links: { supersedes: string | null; supersededBy: string | null }): void {
    if (links.supersedes !== null) {
      const restored = this.statements().restore.get(links.supersedes, id);
      if (restored) {
        this.changed(restored.id);
        const tags = JSON.parse(restored.tags) as string[];
        this.searchIndex.add({ pk: restored.pk, title: restored.title, tags, body: restored.body });
        this.searchIndex.tags.add(restored.pk, tags, restored.score, restored.createdAt);
      }
    }
    if (links.supersededBy !== null) {
      this.statements().forget.run(links.supersededBy, id);
      this.changed(links.supersededBy);
    }
  }

  /** The net score of a note changed (a vote): its tag rows follow, in the same write. */
  scored(pk: number, score: number): void {
    this.searchIndex.tags.setScore(pk, score);
  }

  get(id: string): NoteRecord | null {
    // Read before the row: a change committed meanwhile moves it past what is cached.
    const generation = this.changes.read();
    if (generation !== this.seen) {
      // Another process changed a note (or the signal is off: NaN never equals).
      this.cache.clear();
      this.seen = generation;
    }
    const cached = this.cache.get(id);
    if (cached) return cached;
    const row = this.statements().byId.get(id);
    if (!row) return null;
    const note = toNote(row);
    if (!Number.isNaN(generation)) this.cache.set(id, note);
    return note;
  }

  delete(id: string, contributorNo: number): Promise<DeleteOutcome> {
    return this.commit.write((): DeleteOutcome => {
      const note = this.statements().links.get(id);
      if (!note) return "missing";
      if (note.contributorNo !== contributorNo) return "not_author";
      this.changed(id);
      this.unlink(id, note);
      // Comments and votes go by ON DELETE CASCADE.
      this.searchIndex.remove(note.pk);
      this.idempotency.forgetNote(id);
      this.statements().delete.run({ postPk: note.pk });
      return "deleted";
    });
  }

  async search(request: SearchRequest): Promise<NoteRecord[]> {
    return (await this.searchIndex.search(request)).map(toNote);
  }

  async similar(query: SimilarQuery): Promise<SimilarRecord[]> {
    return this.searchIndex.similar(query);
  }
}
