// The SQLite side of search (docs/design.md, "Search"): the FTS5 index holds
// each note's distinct index terms (made by src/core/search/analyzer.ts, so
// FTS5 only splits on spaces: tokenize='ascii'), each in the column of its
// impact tier (src/core/search/ranking.ts), search_vectors each note's term vector,
// search_totals the corpus sizes and search_log every change. The vectors,
// totals and log change in the write transaction that changes the note; how
// many notes hold each term is folded from the log in batches and read
// exactly (term-counts.ts), and the FTS5 index follows the log in one pass
// every FTS_FOLLOW_ROWS rows, in the write batch that reaches them (once the
// fold thread runs, in its own transactions with each fold instead), and is
// brought level before it is read (fts-follow.ts).
// Ranking itself is src/core/search/ranking.ts.
import type { Database } from "bun:sqlite";
import { cutTies, resultOrder, searchNotes, type SearchRequest, type SearchSource } from "../../core/search/query.ts";
import { rankSimilar, type SimilarQuery } from "../../core/search/own-score.ts";
import { rankTopK, TIERS, tierOf, type CorpusStats, type Ranked, type TermAt } from "../../core/search/ranking.ts";
import { rankTagged } from "../../core/search/tagged.ts";
import { noteVector, readLengths, termCount, wordedVector, type IndexedVector, type NoteVector } from "../../core/search/vector.ts";
import type { OwnRows, SearchFollower } from "../search-follower.ts";
import { orderColumns, sqliteMemorySearch, storedVectors, unsupersededByKeys } from "./memory-search.ts";
import { InProcessPostings, type Postings } from "./postings.ts";
import { SearchThread } from "./search-thread.ts";
import type { LookupsOnTheirWay } from "./group-commit.ts";
import { SqliteNoteTags } from "./note-tags.ts";
import { LISTED_SELECT, NOTE_SELECT, type NoteRow } from "./note-row.ts";
import type { ListedNote, SimilarRecord } from "../types.ts";
import { SqliteTermCounts } from "./term-counts.ts";
import { FtsFollower, type RememberedRows } from "./fts-follow.ts";
import { inSearchWrite, tierColumn } from "./search-file.ts";
import { WRITER, WriteTurn } from "./write-turn.ts";

/** The budget benches and tests give stores they open themselves; a server's comes from SEARCH_MEMORY_MB (src/config.ts). */
export const DEFAULT_SEARCH_MEMORY_BYTES = 1024 * 1024 * 1024;
/** Log rows kept: a server that has not caught up over this many index changes builds its postings again. */
export const SEARCH_LOG_KEEP = 100_000;
/** The writer trims the log once per this many rows. */
const LOG_TRIM_EVERY = 1024;

/** Terms hold only letters, digits and marks, so the quotes never need escaping; the escape stays as a guard. */
export const quote = (term: string) => `"${term.replaceAll('"', '""')}"`;
const any = (terms: TermAt[]) => `(${terms.map(termAt).join(" OR ")})`;

/**
 * The FTS5 index follows the log once this process has logged this many rows
 * since it last did, in the write batch that reaches it, just before its
 * COMMIT: one FTS5 segment per this many notes instead of one per batch.
 * Searches on the database path bring it level before they read
 * (ftsCurrent), so they miss nothing meanwhile (fts-follow.ts;
 * docs/benchmarks.md, "Writes of ~2 KB notes, fourth round").
 */
export const FTS_FOLLOW_ROWS = 128;
/** ... or the changes it logged hold this many terms (notes of thousands of terms follow sooner: a pass stays short). */
export const FTS_FOLLOW_TERMS = 128 * 200;

/** A term at some tiers as FTS5 syntax: a column filter on the quoted term. */
function termAt({ term, tiers }: TermAt): string {
  if (tiers === null) return quote(term);
  return tiers.length === 1 ? `${tierColumn(tiers[0])} : ${quote(term)}` : `{${tiers.map(tierColumn).join(" ")}} : ${quote(term)}`;
}

/** An FTS5 expression: `term`, minus notes holding any of `without`, restricted to notes holding one of `anyOf`. */
export function matchExpression(term: TermAt, without: TermAt[], anyOf: TermAt[] | null): string {
  let expression = termAt(term);
  if (without.length > 0) expression = `(${expression} NOT ${any(without)})`;
  if (anyOf && anyOf.length > 0) expression = `${expression} AND ${any(anyOf)}`;
  return expression;
}

interface IndexedNote {
  pk: number;
  title: string;
  tags: string[];
  body: string;
  /** Its term vector, when analysed already. */
  vector?: NoteVector;
}

/** Statements of one connection, prepared on first use (after migrations). */
function prepare(sqlite: Database) {
  return {
    insertVector: sqlite.query<unknown, [number, string]>("INSERT INTO search_vectors(pk, vector) VALUES (?, ?)"),
    vectorOf: sqlite.query<{ vector: string }, [number]>("SELECT vector FROM search_vectors WHERE pk = ?"),
    deleteVector: sqlite.query<unknown, [number]>("DELETE FROM search_vectors WHERE pk = ?"),
    addTotals: sqlite.query<unknown, [number, number, number, number]>(
      "UPDATE search_totals SET notes = notes + ?1, title_terms = title_terms + ?2, tag_terms = tag_terms + ?3, body_terms = body_terms + ?4",
    ),
    totals: sqlite.query<{ notes: number; title: number; tags: number; body: number }, []>(
      "SELECT notes, title_terms AS title, tag_terms AS tags, body_terms AS body FROM search_totals",
    ),
    matching: sqlite.query<{ pk: number }, [string, number]>("SELECT rowid AS pk FROM search_fts WHERE search_fts MATCH ?1 LIMIT ?2"),
    newestMatching: sqlite.query<{ pk: number }, [string, number]>(
      "SELECT rowid AS pk FROM search_fts WHERE search_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?2",
    ),
    vectors: storedVectors(sqlite),
    rows: sqlite.query<NoteRow, [string]>(unsupersededByKeys(NOTE_SELECT)),
    listed: sqlite.query<ListedNote & { pk: number }, [string]>(unsupersededByKeys(LISTED_SELECT)),
    order: orderColumns(sqlite),
    // Superseded notes are kept out of the index (docs/design.md, "Superseding").
    postCount: sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM posts WHERE superseded_by IS NULL"),
    unindexed: sqlite.query<{ pk: number; title: string; tags: string; body: string; score: number; createdAt: number }, []>(
      "SELECT pk, title, tags, body, score, created_at AS createdAt FROM posts WHERE superseded_by IS NULL AND pk NOT IN (SELECT pk FROM search_vectors) ORDER BY pk",
    ),
    orphans: sqlite.query<{ pk: number }, []>("SELECT pk FROM search_vectors WHERE pk NOT IN (SELECT pk FROM posts WHERE superseded_by IS NULL)"),
    log: sqlite.query<unknown, [number, string | null]>("INSERT INTO search_log(pk, removed) VALUES (?, ?)"),
    // Never a row not folded into the term counts yet (term-counts.ts), nor one the FTS5 index has not followed (fts-follow.ts).
    trimLog: sqlite.query<unknown, [number]>("DELETE FROM search_log WHERE seq <= (SELECT min(?1, terms_seq, fts_seq) FROM search_state)"),
  };
}

/** One connection's search index: kept current by the store's writes, read by its searches. */
export class SqliteSearch implements SearchSource {
  private prepared?: ReturnType<typeof prepare>;

  /** The postings in this process's memory, on the search thread or this one (postings.ts); searches use them once built. */
  readonly postings: Postings;
  /** The postings' follower when they are on this thread (benches and tests read the MemoryIndex through it). */
  get memory(): SearchFollower<number> {
    if (this.postings instanceof InProcessPostings) return this.postings.follower;
    throw new Error("the in-memory postings are on the search thread");
  }
  /** The searchable notes' tags, for tag words (note-tags.ts). */
  readonly tags: SqliteNoteTags;
  /** How many notes hold each term, per tier (term-counts.ts). */
  readonly termCounts: SqliteTermCounts;

  constructor(
    private readonly sqlite: Database,
    memoryBytes: number,
    private readonly logKeep = SEARCH_LOG_KEEP,
    loadNowPostings?: number,
    foldEvery?: number,
    /** Shared with the store's group commit (write-turn.ts). */
    private readonly turn = new WriteTurn(),
    /** The postings on a thread of their own (search-thread.ts), when they can be. */
    searchThread = false,
    /** Told of the search thread's similar-notes lookups, for the group commit's hold (group-commit.ts). */
    lookups?: LookupsOnTheirWay,
  ) {
    this.tags = new SqliteNoteTags(sqlite);
    this.postings = (searchThread && memoryBytes > 0 && startThread(sqlite.filename, memoryBytes, loadNowPostings, lookups)) || new InProcessPostings(sqliteMemorySearch(sqlite, memoryBytes, loadNowPostings), this.tags, this);
    this.termCounts = new SqliteTermCounts(sqlite, foldEvery, turn);
    this.fts = new FtsFollower(sqlite);
  }

  /** The FTS5 index's rows, made from the log (fts-follow.ts). */
  private readonly fts: FtsFollower;
  /** Index changes this process logged in committed batches since the FTS5 index last followed the log, and their terms. */
  private unfollowed = 0;
  private unfollowedTerms = 0;
  /** Index changes the current write batch logged, and their terms. */
  private loggedInBatch = 0;
  private termsInBatch = 0;
  /** The current write batch made the FTS5 index follow the log. */
  private followedInBatch = false;
  /**
   * The FTS5 columns of the notes this process indexed since the index last
   * followed the log, by key with the log row that added them, so that a pass
   * need not read and parse their vectors again (trusted only for that row;
   * all dropped when a write rolls back, as its row's number may be taken again).
   */
  private readonly ftsRows: RememberedRows = new Map();

  /** Vectors indexed by the current write batch, by key: the in-memory postings take them after COMMIT. */
  private readonly written = new Map<number, IndexedVector>();
  /** The current write batch's log rows in order (those of rolled-back writes dropped), and how many there were when its current write began. */
  private batchRows: { seq: number; pk: number; removal: boolean }[] = [];
  private rowsAtWriteStart = 0;

  /** After a write batch's COMMIT. */
  committed(): void {
    this.termCounts.committed();
    if (this.written.size > 0) {
      // The batch's last log row too: vectors that reach the postings after a read of the log took them are dropped.
      this.postings.committed(this.written, this.ownRows(), this.batchRows.at(-1)?.seq);
      this.written.clear();
    }
    this.batchRows = [];
    if (this.followedInBatch) {
      this.unfollowed = 0;
      this.unfollowedTerms = 0;
    } else {
      this.unfollowed += this.loggedInBatch;
      this.unfollowedTerms += this.termsInBatch;
    }
    this.followedInBatch = false;
    this.loggedInBatch = 0;
    this.termsInBatch = 0;
  }

  /**
   * Brings the FTS5 index level with the log, in the transaction running or
   * in one of its own, in the write turn (write-turn.ts: the fold thread
   * writes too).
   */
  private follow(): void {
    if (this.sqlite.inTransaction) {
      this.fts.apply(this.ftsRows);
      return;
    }
    this.turn.take(WRITER);
    try {
      inSearchWrite(this.sqlite, () => this.fts.apply(this.ftsRows));
      this.ftsRows.clear();
    } finally {
      this.turn.give(WRITER);
    }
  }

  /** Before a read of the FTS5 index: every change committed so far is in it. */
  private ftsCurrent(): void {
    if (this.fts.lag() > 0) this.follow();
  }

  /** Brings the FTS5 index level with the log (before the store's connection closes), so that tools leave it whole. */
  close(): void {
    try {
      if (this.fts.lag() > 0) this.follow();
    } catch {
      // Left to the next start: the log keeps every row the index has not followed.
    }
  }

  /** Log rows this process committed that the FTS5 index has not followed yet (for tests and benches). */
  get unfollowedRows(): number {
    return this.unfollowed;
  }

  /**
   * The change of search_totals ([notes, title, tags, body]) by the current
   * write, then by the batch's writes that succeeded: written once, before
   * the batch's COMMIT, instead of one UPDATE a note. Outside a batch
   * (catch-up, tools) it is written at once. Nothing reads the totals inside
   * a batch.
   */
  private totalsOfWrite: number[] | null = null;
  private totalsOfBatch = [0, 0, 0, 0];

  private addTotals(notes: number, lengths: number[]): void {
    const change = this.totalsOfWrite;
    if (change === null) return void this.s.addTotals.run(notes, lengths[0], lengths[1], lengths[2]);
    change[0] += notes;
    for (let field = 0; field < 3; field++) change[field + 1] += lengths[field];
  }

  /** Before each write of a batch. */
  writeStarted(): void {
    this.totalsOfWrite = [0, 0, 0, 0];
    this.rowsAtWriteStart = this.batchRows.length;
  }

  /**
   * The batch's log rows when they are exactly the adds of the notes in
   * `written`, with seqs one after another (the search thread then takes the
   * notes without reading the log: SearchFollower.committed); else undefined.
   */
  private ownRows(): OwnRows | undefined {
    const rows = this.batchRows;
    if (rows.length === 0 || rows.length !== this.written.size) return undefined;
    for (let i = 0; i < rows.length; i++) {
      if (rows[i].removal || rows[i].seq !== rows[0].seq + i || !this.written.has(rows[i].pk)) return undefined;
    }
    return { first: rows[0].seq, last: rows[rows.length - 1].seq };
  }

  /** After a batch's writes, before its COMMIT: the totals, and the FTS5 index when FTS_FOLLOW_ROWS rows were logged (a throw fails the batch). */
  beforeCommit(): void {
    const due = this.unfollowed + this.loggedInBatch >= FTS_FOLLOW_ROWS || this.unfollowedTerms + this.termsInBatch >= FTS_FOLLOW_TERMS;
    // While the fold thread runs, it makes the FTS5 rows with each fold, on its own connection (term-folds.ts, foldWriter).
    if (this.loggedInBatch > 0 && due && !this.termCounts.threadFollowsFts) {
      this.fts.apply(this.ftsRows);
      this.ftsRows.clear();
      this.followedInBatch = true;
    }
    const [notes, title, tags, body] = this.totalsOfBatch;
    this.totalsOfBatch = [0, 0, 0, 0];
    if (notes !== 0 || title !== 0 || tags !== 0 || body !== 0) this.s.addTotals.run(notes, title, tags, body);
  }

  /** After a write batch failed (nothing of it is stored). */
  failed(): void {
    this.totalsOfWrite = null;
    this.totalsOfBatch = [0, 0, 0, 0];
    this.followedInBatch = false;
    this.loggedInBatch = 0;
    this.termsInBatch = 0;
    this.written.clear();
    this.batchRows = [];
    this.termCounts.forget();
    this.ftsRows.clear();
  }

  /** After each write of a batch; when it was rolled back, what it indexed is not stored (its key may be taken again). */
  writeEnded(ok: boolean): void {
    if (ok) for (let i = 0; i < 4; i++) this.totalsOfBatch[i] += this.totalsOfWrite![i];
    this.totalsOfWrite = null;
    if (ok) return;
    this.batchRows.length = this.rowsAtWriteStart;
    this.termCounts.forget();
    this.ftsRows.clear();
  }

  /** Builds the in-memory postings (after migrations). */
  startMemory(): Promise<void> {
    return this.postings.start();
  }

  /** Records a change of the index for every process's postings; trims old rows now and then. */
  private logChange(pk: number, removed: string | null, terms: number): number {
    const seq = Number(this.s.log.run(pk, removed).lastInsertRowid);
    this.batchRows.push({ seq, pk, removal: removed !== null });
    this.loggedInBatch++;
    this.termsInBatch += terms;
    this.termCounts.logged(seq, terms);
    if (seq % Math.min(LOG_TRIM_EVERY, this.logKeep) === 0) this.s.trimLog.run(seq - this.logKeep);
    return seq;
  }

  private get s() {
    return (this.prepared ??= prepare(this.sqlite));
  }

  /** Indexes a note; call inside the transaction that inserts it. */
  add(note: IndexedNote): void {
    const analysed = note.vector ?? noteVector(note.title, note.tags, note.body);
    const { terms: vector, encoded } = analysed;
    const s = this.s;
    s.insertVector.run(note.pk, encoded);
    this.written.set(note.pk, this.postings.takes === "stored" ? wordedVector(analysed) : vector);
    this.addTotals(1, vector.lengths);
    const seq = this.logChange(note.pk, null, vector.counts.size);
    // Neither needs the terms by tier while the fold thread runs: it parses the stored vector, off this thread.
    if (this.termCounts.threadFollowsFts) {
      this.termCounts.writtenForThread(note.pk, seq, encoded);
      return;
    }
    const tiers = Array.from({ length: TIERS }, () => [] as string[]);
    for (const [term, counts] of vector.counts) tiers[tierOf(counts, vector.lengths)].push(term);
    if (this.termCounts.remembersTerms) this.termCounts.added(note.pk, seq, tiers);
    if (this.ftsRows.size < 4 * FTS_FOLLOW_ROWS) this.ftsRows.set(note.pk, { seq, columns: tiers.map((terms) => terms.join(" ")) });
  }

  /** Removes a note from the index; call inside the transaction that deletes it. */
  remove(pk: number): void {
    const s = this.s;
    const row = s.vectorOf.get(pk);
    if (!row) return;
    const lengths = readLengths(row.vector);
    s.deleteVector.run(pk);
    this.addTotals(-1, [-lengths[0], -lengths[1], -lengths[2]]);
    this.logChange(pk, row.vector, termCount(row.vector));
  }

  /**
   * Brings the index level with the notes: indexes notes it lacks (the first
   * start after the upgrade that introduced it, or notes bulk-loaded by SQL)
   * and drops entries of notes that are gone, and folds the log into the
   * term counts. Cheap when nothing is missing (two counts and the log rows
   * not folded). Call inside a write transaction.
   */
  catchUp(): number {
    const s = this.s;
    // The term counts current too: the postings' build is planned by them (memory-search.ts).
    this.termCounts.fold();
    this.fts.apply();
    if (s.postCount.get()!.n === s.totals.get()!.notes) return 0;
    for (const { pk } of s.orphans.all()) {
      this.remove(pk);
      this.tags.remove(pk);
    }
    let added = 0;
    for (const row of s.unindexed.all()) {
      const tags = JSON.parse(row.tags) as string[];
      this.add({ pk: row.pk, title: row.title, tags, body: row.body });
      this.tags.add(row.pk, tags, row.score, row.createdAt);
      added++;
    }
    // Not a write batch: nothing hands these vectors on (the postings read them
    // back from the table), and a bulk catch-up must not keep them all in memory.
    this.written.clear();
    this.batchRows = [];
    this.termCounts.fold();
    this.fts.apply();
    this.loggedInBatch = 0;
    this.termsInBatch = 0;
    return added;
  }

  // --- SearchSource --------------------------------------------------------

  corpus(): CorpusStats {
    const t = this.s.totals.get()!;
    return { notes: t.notes, lengthSums: [t.title, t.tags, t.body] };
  }

  tierCounts(terms: string[]): number[][] {
    return this.termCounts.tierCounts(terms);
  }

  notesWith(term: TermAt, without: TermAt[], anyOf: TermAt[] | null, limit = -1): number[] {
    this.ftsCurrent();
    return this.s.matching.values(matchExpression(term, without, anyOf), limit).map((row) => row[0] as number);
  }

  /** The newest `limit` notes holding `term` (the similar-notes lookup's reach). */
  newestWith(term: string, limit: number): number[] {
    this.ftsCurrent();
    return this.s.newestMatching.values(quote(term), Number.isFinite(limit) ? limit : -1).map((row) => row[0] as number);
  }

  vectors(keys: number[]): { key: number; vector: string }[] {
    return this.s.vectors(keys);
  }

  vocabulary(from: string, to: string): { term: string; doc: number }[] {
    return this.termCounts.vocabulary(from, to);
  }

  /** The words' best notes among those carrying every tag of the request (tagged.ts), on the database index. */
  private searchTaggedOnIndex(request: SearchRequest): Promise<Ranked[]> {
    const ranking = { terms: this, vectors: this, rankFiltered: (terms: string[], k: number, accept: (key: number) => boolean) => rankTopK(this, terms, k, accept), directCost: 1 };
    return rankTagged(ranking, request.words, this.tags.tagged(request.tags), request.limit);
  }

  /** The notes for a request, best first (core/search/query.ts gives the order). */
  async search(request: SearchRequest): Promise<NoteRow[]> {
    if (request.tags.length > 0 && request.words.length === 0) return this.bestTagged(request);
    const { words, tags, limit } = request;
    let ranked: Ranked[];
    if (tags.length > 0) ranked = (await this.postings.searchTagged(words, tags, limit)) ?? (await this.searchTaggedOnIndex(request));
    else ranked = (await this.postings.search(words, limit)) ?? (await searchNotes(this, request));
    if (ranked.length === 0) return [];
    return resultOrder(ranked, this.s.rows.all(JSON.stringify(ranked.map((r) => r.key))), request.limit);
  }

  /**
   * Rows whose score for the query's terms reaches `minShare` of the new
   * note's own (the note not stored yet, counted in as if it were), among
   * the notes sharing the most of its rarest terms (own-score.ts: the rule),
   * best first, at most `limit` (more on ties): the similar-notes lookup, on
   * the path search takes.
   */
  async similar(query: SimilarQuery): Promise<SimilarRecord[]> {
    if (query.terms.length === 0 || query.limit <= 0) return [];
    const { own, ranked: tied } = (await this.postings.similar(query)) ?? (await rankSimilar(this, query));
    // The search thread has cut the ties already; the other paths cut them here.
    const ranked = cutTies(tied, query.limit, this.s.order);
    if (ranked.length === 0) return [];
    const shares = new Map(ranked.map((r) => [r.key, r.score / own]));
    const listed = this.s.listed.all(JSON.stringify(ranked.map((r) => r.key)));
    return resultOrder(ranked, listed, query.limit).map(({ pk, ...note }) => ({ note, share: shares.get(pk)! }));
  }

  /** A query of tag words only: the best-scored notes carrying every tag (net score, then newest). */
  private bestTagged(request: SearchRequest): NoteRow[] {
    const keys = this.tags.best(request.tags, request.limit);
    const rows = new Map(this.s.rows.all(JSON.stringify(keys)).map((row) => [row.pk, row]));
    return keys.flatMap((key) => rows.get(key) ?? []);
  }
}

/** The search thread, or null when no worker can be made (the postings stay on this thread). */
function startThread(file: string, budgetBytes: number, loadNowPostings?: number, lookups?: LookupsOnTheirWay): SearchThread | null {
  try {
    return new SearchThread(file, budgetBytes, loadNowPostings, lookups);
  } catch {
    return null;
  }
}
