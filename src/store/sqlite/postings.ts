// The in-memory postings as SqliteSearch (search.ts) asks them: on the search
// thread by default (search-thread.ts), or on the thread that serves requests
// (this file's InProcessPostings: tools, tests and benches that read the
// postings directly, and a server whose search thread could not start).
// Either way a query answers null when the postings cannot serve it (being
// built, over SEARCH_MEMORY_MB, off), and search then takes the FTS5 index.
import type { SimilarQuery, SimilarRanking } from "../../core/search/own-score.ts";
import type { Ranked } from "../../core/search/ranking.ts";
import type { IndexedVector } from "../../core/search/vector.ts";
import type { OwnRows, SearchFollower } from "../search-follower.ts";
import type { SqliteNoteTags } from "./note-tags.ts";
import { searchPostings, searchTaggedPostings, type VectorReader } from "../../core/search/memory-queries.ts";
import { rankSimilarInMemory } from "../../core/search/similar-memory.ts";

export interface Postings {
  /** Null while the postings serve queries; otherwise why not (being built, over budget, off, closed). */
  readonly offReason: string | null;
  /**
   * Which vector of a note written by this process the postings take after
   * its commit: the stored one (the search thread parses it) or the one this
   * thread analysed (added without parsing).
   */
  readonly takes: "stored" | "analysed";
  /** Builds the postings (after migrations): before it resolves for a small corpus, else in the background. */
  start(): Promise<void>;
  /** Settles once a background build has finished (or failed). */
  loaded(): Promise<void>;
  /**
   * After a write batch's COMMIT: the vectors of the notes it indexed, by key
   * (see `takes`); `rows`: its log rows when they are exactly those notes'
   * adds; `upTo`: its last log row (SearchFollower.committed).
   */
  committed(written: ReadonlyMap<number, IndexedVector>, rows?: OwnRows, upTo?: number): void;
  search(words: string[], limit: number): Promise<Ranked[] | null>;
  /** `tags`: the query's tag words (the postings' side reads which notes carry them). */
  searchTagged(words: string[], tags: string[], limit: number): Promise<Ranked[] | null>;
  similar(query: SimilarQuery): Promise<SimilarRanking | null>;
  close(): Promise<void>;
}

/** The postings on this thread, kept level with the log by a SearchFollower (memory-search.ts). */
export class InProcessPostings implements Postings {
  readonly takes = "analysed" as const;

  constructor(
    /** Read directly by benches and tests (its current() is the MemoryIndex). */
    readonly follower: SearchFollower<number>,
    private readonly tags: SqliteNoteTags,
    private readonly stored: VectorReader,
  ) {}

  get offReason(): string | null {
    return this.follower.offReason;
  }

  start(): Promise<void> {
    return this.follower.start();
  }

  loaded(): Promise<void> {
    return this.follower.loaded();
  }

  committed(written: ReadonlyMap<number, IndexedVector>, _rows?: OwnRows, upTo?: number): void {
    // Analysed vectors, not the stored ones the log would name: the catch-up reads the rows (SearchFollower.committed takes `rows` with stored vectors only).
    this.follower.committed(written, undefined, upTo);
  }

  async search(words: string[], limit: number): Promise<Ranked[] | null> {
    const memory = await this.follower.current();
    return memory ? searchPostings(memory, words, limit) : null;
  }

  async searchTagged(words: string[], tags: string[], limit: number): Promise<Ranked[] | null> {
    const memory = await this.follower.current();
    return memory ? searchTaggedPostings(memory, words, this.tags.tagged(tags), limit, this.stored) : null;
  }

  async similar(query: SimilarQuery): Promise<SimilarRanking | null> {
    const memory = await this.follower.current();
    return memory ? rankSimilarInMemory(memory, query) : null;
  }

  async close(): Promise<void> {
    this.follower.close();
  }
}
