// Notes on SQLite: create (with the duplicate check and the search entry in
// the same write), read through a byte-bounded cache kept right across
// processes by the note signal, delete, search.
import type { Database } from "bun:sqlite";
import { desc, eq, sql } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { BoundedCache } from "../bounded-cache.ts";
import type { DeleteOutcome, NewNote, NoteRecord, SearchRequest, SimilarQuery, SimilarRecord } from "../types.ts";
import { ChangeSignal, NOTE_SIGNAL_FILE } from "./change-signal.ts";
import type { CommitHooks, GroupCommit } from "./group-commit.ts";
import type * as schema from "./schema.ts";
import { posts } from "./schema.ts";
import { noteColumns, toNote, type NoteRow } from "./note-row.ts";
import type { SqliteSearch } from "./search.ts";
import { onFirstUse } from "./on-first-use.ts";

/** Notes kept in memory at most, whatever their size; the byte budget is a setting (NOTE_CACHE_MB). */
const NOTE_CACHE_ENTRIES = 10_000;
export const DEFAULT_NOTE_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * What a cached note costs: its strings twice (the record and the JSON body
 * the HTTP layer keeps per note version, see src/http/note-body.ts), at up to
 * two bytes per UTF-16 unit, plus the objects around them.
 */
const noteBytes = (note: NoteRecord) => 4 * (note.title.length + note.body.length + note.tags.join("").length) + 600;

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
    const no = sql.placeholder("contributorNo");
    return {
      // Read by every keyed GET, as a plain bun:sqlite statement: Drizzle's
      // row mapping costs a third of its time.
      byId: this.sqlite.query<NoteRow, [string]>(
        `SELECT pk, id, contributor_no AS contributorNo, title, body, tags, score, comment_count AS commentCount,
                created_at AS createdAt FROM posts WHERE id = ?`,
      ),
      latest: db
        .select({ id: posts.id, title: posts.title, body: posts.body, tags: posts.tags })
        .from(posts)
        .where(eq(posts.contributorNo, no))
        .orderBy(desc(posts.pk))
        .limit(1)
        .prepare(),
      insert: db
        .insert(posts)
        .values({
          id: sql.placeholder("id"),
          contributorNo: no,
          title: sql.placeholder("title"),
          body: sql.placeholder("body"),
          tags: sql.placeholder("tags"),
          createdAt: sql.placeholder("createdAt"),
        })
        .returning(noteColumns)
        .prepare(),
      locate: db.select({ pk: posts.pk, contributorNo: posts.contributorNo }).from(posts).where(eq(posts.id, sql.placeholder("id"))).prepare(),
      delete: db.delete(posts).where(eq(posts.pk, sql.placeholder("postPk"))).prepare(),
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

  create(note: NewNote, isDuplicate: (latest: { title: string; body: string; tags: string[] }) => boolean) {
    return this.commit.write((): NoteRecord | { duplicateOf: string } => {
      const latest = this.statements().latest.get({ contributorNo: note.contributorNo });
      if (latest && isDuplicate({ title: latest.title, body: latest.body, tags: JSON.parse(latest.tags) })) return { duplicateOf: latest.id };
      const row = this.statements().insert.get({ ...note, tags: JSON.stringify(note.tags) })!;
      this.searchIndex.add({ pk: row.pk, title: note.title, tags: note.tags, body: note.body });
      return toNote(row);
    });
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
      const note = this.locate(id);
      if (!note) return "missing";
      if (note.contributorNo !== contributorNo) return "not_author";
      this.changed(id);
      // Comments and votes go by ON DELETE CASCADE.
      this.searchIndex.remove(note.pk);
      this.statements().delete.run({ postPk: note.pk });
      return "deleted";
    });
  }

  async search(request: SearchRequest): Promise<NoteRecord[]> {
    return (await this.searchIndex.search(request)).map(toNote);
  }

  async similar(id: string, query: SimilarQuery): Promise<SimilarRecord[]> {
    const located = this.locate(id);
    if (!located) return [];
    return (await this.searchIndex.similar(located.pk, query)).map(({ row, share }) => ({ note: toNote(row), share }));
  }
}
