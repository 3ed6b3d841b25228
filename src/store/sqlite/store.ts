// The SQLite engine: one file in DATA_DIR (connection.ts) and the search file
// beside it (search-file.ts: what follows the search log), request writes
// group-committed (group-commit.ts), one class per resource; this class
// composes them behind the Store interface. bun:sqlite is synchronous, so a
// transaction runs to completion before any other request's code runs.
import type { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { ComposedStore } from "../composed-store.ts";
import type { Counts, Readiness, Store } from "../types.ts";
import { SqliteComments } from "./comments.ts";
import { isUnavailableError, openDatabase, type Durability } from "./connection.ts";
import { SqliteContributors } from "./contributors.ts";
import { WalCheckpointer } from "./checkpointer.ts";
import { GroupCommit, LookupsOnTheirWay } from "./group-commit.ts";
import { migrateDatabase, migrationsCurrent } from "./migrate.ts";
import { moveSearchTables, rebuildSearchFileIfStale } from "./search-file-setup.ts";
import { DEFAULT_NOTE_CACHE_BYTES, SqliteNotes } from "./notes.ts";
import { SqliteOutbox } from "./outbox.ts";
import * as schema from "./schema.ts";
import { SqliteSearch } from "./search.ts";
import { SqliteVotes } from "./votes.ts";
import { SqliteIdempotency } from "./idempotency.ts";
import { SqliteWebEvents } from "./web-events.ts";
import { WriteTurn } from "./write-turn.ts";

export { databasePath } from "./connection.ts";

/** Takes cairn.db's write lock and no other (group-commit.ts): it writes nothing. */
const LOCK_DATABASE_FILE = "DELETE FROM main.search_totals WHERE 0";

export interface SqliteOptions {
  dataDir: string;
  durability?: Durability;
  /** Byte budget of the note cache (estimated; see notes.ts). */
  noteCacheBytes?: number;
  /**
   * Budget of the in-memory search postings (SEARCH_MEMORY_MB; see
   * memory-search.ts). Unset or 0: none, so tools that open a store to write
   * or copy (seeder, copy) do not build them; openStore passes the setting.
   */
  searchMemoryBytes?: number;
  /** Search log rows kept (SEARCH_LOG_KEEP in search.ts; smaller only in tests). */
  searchLogKeep?: number;
  /** Postings up to which the in-memory postings are built before migrate() returns (memory-search.ts; set only in tests). */
  searchLoadNowPostings?: number;
  /** Log rows between folds into the term counts (FOLD_EVERY in term-folds.ts; other values only in tests and benches). */
  searchFoldEvery?: number;
  /**
   * The in-memory postings on a thread of their own (search-thread.ts;
   * SEARCH_THREAD, on by default: openStore passes the setting). Off, they
   * are built on the thread that opens the store (benches read them there).
   */
  searchThread?: boolean;
}

export class SqliteStore extends ComposedStore implements Store {
  readonly engine = "sqlite" as const;
  readonly sqlite: Database;
  private readonly db: BunSQLiteDatabase<typeof schema>;
  private readonly commit: GroupCommit;
  /** WAL checkpoints in a worker thread, off the request path (checkpointer.ts). */
  readonly checkpointer: WalCheckpointer;
  protected readonly outbox: SqliteOutbox;
  /** The search index, written in the same transactions as the notes (see search.ts). */
  readonly searchIndex: SqliteSearch;
  protected readonly notes: SqliteNotes;
  protected readonly contributors: SqliteContributors;
  protected readonly comments: SqliteComments;
  protected readonly votes: SqliteVotes;
  protected readonly webEvents: SqliteWebEvents;
  protected readonly idempotency: SqliteIdempotency;

  constructor(options: SqliteOptions) {
    super();
    this.sqlite = openDatabase(options.dataDir, options.durability);
    this.db = drizzle(this.sqlite, { schema });
    this.checkpointer = new WalCheckpointer(this.sqlite, options.durability === "full" ? "FULL" : "NORMAL");
    // Between the fold thread and this thread's own writes of the search file (search.ts, write-turn.ts).
    const turn = new WriteTurn();
    // Note creations whose similar-notes lookup the search thread is answering: a batch waits for them (group-commit.ts); none asked when the postings are on this thread.
    const lookups = new LookupsOnTheirWay();
    // The notes (to announce note changes) and the search index (to follow them in memory) hear of each batch's COMMIT; both are made just below.
    this.commit = new GroupCommit(this.sqlite, {
      committed: () => {
        // First, so the worker copies pages back while the rest runs.
        this.checkpointer.committed();
        this.notes.committed();
        this.searchIndex.committed();
      },
      failed: () => {
        this.notes.failed();
        this.searchIndex.failed();
      },
      writeStarted: () => this.searchIndex.writeStarted(),
      writeEnded: (ok) => this.searchIndex.writeEnded(ok),
      beforeCommit: () => this.searchIndex.beforeCommit(),
    }, LOCK_DATABASE_FILE, lookups);
    this.outbox = new SqliteOutbox(this.sqlite, this.db);
    this.idempotency = new SqliteIdempotency(this.sqlite, this.commit);
    this.searchIndex = new SqliteSearch(this.sqlite, options.searchMemoryBytes ?? 0, options.searchLogKeep, options.searchLoadNowPostings, options.searchFoldEvery, turn, options.searchThread ?? false, lookups);
    this.notes = new SqliteNotes(this.sqlite, this.db, this.commit, this.searchIndex, options.dataDir, options.noteCacheBytes ?? DEFAULT_NOTE_CACHE_BYTES, this.idempotency);
    this.contributors = new SqliteContributors(this.sqlite, this.db, this.commit, this.outbox, options.dataDir);
    this.comments = new SqliteComments(this.db, this.commit, this.notes, this.idempotency);
    this.votes = new SqliteVotes(this.db, this.commit, this.notes, this.idempotency);
    this.webEvents = new SqliteWebEvents(this.db, this.commit);
  }

  /** True when a running server may not map the key signal file yet (see SqliteContributors.keySignalUnsettled). */
  get keySignalUnsettled(): boolean {
    return this.contributors.keySignalUnsettled;
  }

  /** Null when key-standing changes are announced across processes; otherwise why not (keys are then never remembered). */
  get keySignalOffReason(): string | null {
    return this.contributors.keySignalOffReason;
  }

  /** Null when note changes are announced across processes; otherwise why not (notes are then never cached). */
  get searchMemoryOffReason(): string | null {
    return this.searchIndex.postings.offReason;
  }

  searchMemoryBuilt(): Promise<void> {
    return this.searchIndex.postings.loaded();
  }

  get noteSignalOffReason(): string | null {
    return this.notes.signalOffReason;
  }

  /**
   * Re-maps signal files that were removed or replaced since they were
   * mapped, and says which; the server calls it every second. A re-mapped
   * key signal moves the key generation (remembered keys are forgotten) and
   * a re-mapped note signal empties the note cache.
   */
  remapReplacedSignals(): string[] {
    return [this.contributors.remapReplacedSignal(), this.notes.remapReplacedSignal()].filter((path): path is string => path !== null);
  }

  async migrate(): Promise<void> {
    migrateDatabase(this.sqlite, () => {
      // Rows finished before addresses were dropped on sending (issue 12) lose theirs now.
      this.outbox.forgetFinishedAddresses();
    });
    moveSearchTables(this.sqlite.filename);
    this.sqlite
      .transaction(() => {
        rebuildSearchFileIfStale(this.sqlite);
        this.searchIndex.catchUp();
      })
      .immediate();
    await this.searchIndex.startMemory();
  }

  async readiness(): Promise<Readiness> {
    try {
      return migrationsCurrent(this.sqlite) ? { ready: true } : { ready: false, reason: "database migrations are not current" };
    } catch {
      return { ready: false, reason: "storage is not answering" };
    }
  }

  async close(): Promise<void> {
    await this.searchIndex.postings.close();
    await this.searchIndex.termCounts.close();
    this.searchIndex.close();
    await this.checkpointer.close();
    try {
      this.sqlite.exec("PRAGMA optimize");
    } catch {
      // closing matters more than the optimiser hint
    }
    this.sqlite.close();
  }

  isUnavailable(error: unknown): boolean {
    return isUnavailableError(error);
  }

  /** An online, consistent copy of the database into `file` (must not exist); the search file is not in it: a store opened on the copy makes it again (search-file.ts). */
  async backup(file: string): Promise<void> {
    this.sqlite.query("VACUUM INTO ?").run(file);
  }

  async counts(): Promise<Counts> {
    const one = (query: string) => (this.sqlite.query<{ n: number }, []>(query).get()?.n ?? 0) as number;
    return {
      contributors: one("SELECT count(*) AS n FROM contributors"),
      activeContributors: one("SELECT count(*) AS n FROM contributors WHERE active = 1"),
      notes: one("SELECT count(*) AS n FROM posts"),
      comments: one("SELECT count(*) AS n FROM comments"),
      votes: one("SELECT count(*) AS n FROM votes"),
    };
  }

  // ---- contributors and keys ----
  keyGeneration(): number {
    return this.contributors.keyGeneration();
  }

  // Contributors, notes, comments, votes, web events and the outbox: ComposedStore hands them to the resources.
}
