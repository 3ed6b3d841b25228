// Full-text search SQL over the FTS5 index (posts_fts, see drizzle/0001_search_index.sql).
// The ranking is described in docs/design.md ("Search") and measured by
// bench/quality (docs/search-quality.md).
import type { Database } from "bun:sqlite";
import { bestCorrection, correctable, correctionRanges, quote, termExpression } from "../../core/search.ts";
import type { SearchPlan } from "../types.ts";
import type { NoteRow } from "./store.ts";

/** How many bm25 candidates per result slot are joined for tie-breaking. */
const CANDIDATES_FACTOR = 3;

/**
 * The most notes one query scores with bm25() in one pass. Scoring costs about
 * a microsecond per matching note, so a query whose words are in tens of
 * thousands of notes would cost tens of milliseconds; past this many matches
 * scoring is bounded to a few pools (see `rankedCandidates`).
 */
export const WINDOW = 1000;

/**
 * The notes holding every word, when there are this many or more, are scored
 * on their newest ALL_WORDS_WINDOW only. Scoring a note on several words costs
 * 1-4 us (each word's positions and the note's length are read). Measured on
 * the judged set (docs/search-quality.md): 1,000 -> 500 -> 250 left nDCG@10 at
 * 0.835 on 3k notes and moved it 0.961 -> 0.960 on the 30k stress run, and
 * 250 took 15% off the 100k query set; 200 and 150 cost 0.002 and 0.003.
 */
export const ALL_WORDS_WINDOW = 250;

/**
 * How long a word known to be in more than WINDOW notes is trusted to still
 * be, and how many such words are remembered. Counting one walks up to WINDOW
 * + 1 postings; common words recur in most queries. Only broad words are
 * remembered: a rare word's count decides typo correction and must see a
 * note written a moment ago, and a broad word only grows (deletes aside).
 */
const BROAD_WORD_TTL_MS = 60_000;
const BROAD_WORDS = 10_000;

/** How long a vocabulary range read for typo correction is reused, and how many are kept. */
const VOCABULARY_TTL_MS = 10 * 60_000;
const VOCABULARY_RANGES = 512;

/**
 * How many notes tell whether a word is in most notes: SAMPLE_RUNS runs of
 * SAMPLE_RUN note ids. Each run's count costs ~0.12 ms however long the run,
 * so a few long runs; on the bench sets the sample agreed with the exact
 * count for 154 of 155 query words (the other: 49.4% of 1M notes, 50.2% sampled).
 */
const SAMPLE_RUNS = 4;
const SAMPLE_RUN = 1024;

interface Candidate {
  pk: number;
  rank: number;
}

/** Values kept for `ttlMs`, at most `limit` of them: past it the oldest written goes first. */
class ExpiringMemo<V> {
  private readonly entries = new Map<string, { at: number; value: V }>();
  constructor(
    private readonly ttlMs: number,
    private readonly limit: number,
  ) {}

  get(key: string, now: number): V | undefined {
    const entry = this.entries.get(key);
    return entry !== undefined && now - entry.at < this.ttlMs ? entry.value : undefined;
  }

  set(key: string, value: V, now: number): void {
    this.entries.delete(key);
    this.entries.set(key, { at: now, value });
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

interface NoteSample {
  at: number;
  runs: [number, number][];
  /** Notes in the runs (ids of deleted notes are gaps). */
  notes: number;
}

/** Statements of one connection, prepared on first use. */
class SearchStatements {
  readonly count;
  readonly ranked;
  readonly windowed;
  readonly windowedCounted;
  readonly rows;
  private readonly pkRange;
  private readonly notesIn;
  private readonly matchesIn;
  private sample: NoteSample = { at: -Infinity, runs: [], notes: 0 };
  private readonly common = new ExpiringMemo<boolean>(BROAD_WORD_TTL_MS, BROAD_WORDS);
  private vocabulary?: ReturnType<Database["query"]> | null;
  private readonly ranges = new ExpiringMemo<{ term: string; doc: number }[]>(VOCABULARY_TTL_MS, VOCABULARY_RANGES);
  private readonly broad = new ExpiringMemo<true>(BROAD_WORD_TTL_MS, BROAD_WORDS);

  constructor(private readonly sqlite: Database, weights: [number, number, number]) {
    const [title, tags, body] = weights.map((w) => Number(w));
    const bm25 = `bm25(posts_fts, ${title}, ${tags}, ${body})`;
    // Counting stops at the limit: it walks the index without scoring.
    this.count = sqlite.query<{ n: number }, [string, number]>(
      "SELECT count(*) AS n FROM (SELECT rowid FROM posts_fts WHERE posts_fts MATCH ?1 LIMIT ?2)",
    );
    this.ranked = sqlite.query<Candidate, [string, number]>(
      `SELECT rowid AS pk, ${bm25} AS rank FROM posts_fts WHERE posts_fts MATCH ?1 ORDER BY rank LIMIT ?2`,
    );
    // The newest ?3 matches (FTS5 walks rowids backwards and stops), then bm25 among them.
    this.windowed = sqlite.query<Candidate, [string, number, number]>(
      `SELECT pk, rank FROM (SELECT rowid AS pk, ${bm25} AS rank FROM posts_fts WHERE posts_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?3)
        ORDER BY rank LIMIT ?2`,
    );
    // The same, with the number of matches in the window (`n`, at most ?3): one
    // pass answers both "how many notes hold every word" and "the best of them".
    this.windowedCounted = sqlite.query<Candidate & { n: number }, [string, number, number]>(
      `WITH w AS MATERIALIZED (SELECT rowid AS pk, ${bm25} AS rank FROM posts_fts WHERE posts_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?3)
       SELECT pk, rank, (SELECT count(*) FROM w) AS n FROM w ORDER BY rank LIMIT ?2`,
    );
    this.pkRange = sqlite.query<{ lo: number | null; hi: number | null }, []>("SELECT min(pk) AS lo, max(pk) AS hi FROM posts");
    this.notesIn = sqlite.query<{ n: number }, [number, number]>("SELECT count(*) AS n FROM posts WHERE pk BETWEEN ?1 AND ?2");
    this.matchesIn = sqlite.query<{ n: number }, [string, number, number]>(
      "SELECT count(*) AS n FROM posts_fts WHERE posts_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3",
    );
    this.rows = sqlite.query<NoteRow, [string]>(
      `SELECT p.pk, p.id, p.contributor_no AS contributorNo, p.title, p.body, p.tags, p.score,
              p.comment_count AS commentCount, p.created_at AS createdAt
         FROM posts p WHERE p.pk IN (SELECT value FROM json_each(?1))`,
    );
  }

  /** Notes matching `expression`, counted up to WINDOW + 1 (see BROAD_WORD_TTL_MS). */
  matches(expression: string): number {
    const now = Date.now();
    if (this.broad.get(expression, now)) return WINDOW + 1;
    const n = this.count.get(expression, WINDOW + 1)!.n;
    if (n > WINDOW) this.broad.set(expression, true, now);
    else this.broad.delete(expression);
    return n;
  }

  /**
   * Whether a broad word is in more than half of all notes: then FTS5's bm25()
   * gives it no weight (its IDF is clamped to 1e-6), so it only filters, and
   * its IDF walk is the dearest part of the query. Told from a sample (see
   * `noteSample`), since an exact count walks up to half the index (20 ms at
   * 1M notes) where the sample costs ~0.5 ms; near one half a word's IDF is
   * about 0 either way, so the sample's error (under 1% at 4,096 notes)
   * cannot matter. Reused for BROAD_WORD_TTL_MS.
   */
  inMostNotes(expression: string): boolean {
    const now = Date.now();
    const known = this.common.get(expression, now);
    if (known !== undefined) return known;
    const { runs, notes } = this.noteSample(now);
    let holding = 0;
    for (const [from, to] of runs) holding += this.matchesIn.get(expression, from, to)!.n;
    const common = notes > 0 && holding * 2 > notes;
    this.common.set(expression, common, now);
    return common;
  }

  /**
   * SAMPLE_RUNS runs of at most SAMPLE_RUN consecutive note ids, spread evenly
   * from the oldest note to the newest (all notes, when there are few), so
   * a burst of recent notes on one topic does not make its words look common.
   */
  private noteSample(now: number): NoteSample {
    if (now - this.sample.at < BROAD_WORD_TTL_MS) return this.sample;
    const { lo, hi } = this.pkRange.get()!;
    const runs: [number, number][] = [];
    let notes = 0;
    if (lo !== null && hi !== null) {
      const span = hi - lo + 1;
      const length = Math.max(1, Math.min(SAMPLE_RUN, Math.floor(span / SAMPLE_RUNS)));
      for (let i = 0; i < SAMPLE_RUNS; i++) {
        const from = lo + Math.floor((i * span) / SAMPLE_RUNS);
        runs.push([from, from + length - 1]);
        notes += this.notesIn.get(from, from + length - 1)!.n;
      }
    }
    this.sample = { at: now, runs, notes };
    return this.sample;
  }

  /**
   * Index terms (stems) in a range of the vocabulary, with the number of notes
   * holding each. The fts5vocab table is connection-local (temp schema), so it
   * needs no migration. Reading a range walks the postings of every term in
   * it, so ranges are kept for VOCABULARY_TTL_MS: a new term becomes a
   * correction candidate within that time.
   */
  terms(from: string, to: string): { term: string; doc: number }[] {
    if (this.vocabulary === undefined) {
      try {
        this.sqlite.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.posts_fts_vocab USING fts5vocab(main, posts_fts, row)");
        this.vocabulary = this.sqlite.query("SELECT term, doc FROM temp.posts_fts_vocab WHERE term >= ?1 AND term < ?2 AND doc > 0");
      } catch {
        this.vocabulary = null;
      }
    }
    if (!this.vocabulary) return [];
    const now = Date.now();
    const cached = this.ranges.get(from, now);
    if (cached !== undefined) return cached;
    const terms = this.vocabulary.all(from, to) as { term: string; doc: number }[];
    this.ranges.set(from, terms, now);
    return terms;
  }
}

const prepared = new WeakMap<Database, Map<string, SearchStatements>>();
function statements(sqlite: Database, weights: [number, number, number]): SearchStatements {
  let byWeights = prepared.get(sqlite);
  if (!byWeights) prepared.set(sqlite, (byWeights = new Map()));
  const key = weights.join(",");
  let found = byWeights.get(key);
  if (!found) byWeights.set(key, (found = new SearchStatements(sqlite, weights)));
  return found;
}

interface Word {
  expression: string;
  /** Replaced by the closest index term (a typo). */
  corrected: boolean;
  /** Notes holding it, counted up to WINDOW + 1. */
  count: number;
}

/**
 * One FTS5 string per word, with the number of notes holding it (the count
 * stops at WINDOW + 1). A word that is in no note at all is replaced by the
 * closest index term (typo tolerance); a word still in no note is left out.
 */
function indexWords(s: SearchStatements, words: string[]): Word[] {
  const found: Word[] = [];
  for (const word of words) {
    let expression = quote(word);
    let count = s.matches(expression);
    let corrected = false;
    if (count === 0 && correctable(word)) {
      const vocabulary = correctionRanges(word).flatMap(([from, to]) => s.terms(from, to));
      const correction = bestCorrection(word, vocabulary);
      if (correction) {
        expression = termExpression(correction);
        count = s.matches(expression);
        corrected = true;
      }
    }
    if (count > 0) found.push({ expression, count, corrected });
  }
  return found;
}

/**
 * The words without those in more than half of all notes, unless nothing else
 * is left. bm25() gives such a word no weight, so leaving it out changes no
 * score; the notes that lack it join the pools, and it no longer costs an IDF
 * walk over half the index in every bm25 statement (measured: 10-20% of the
 * 100k bench queries' time, docs/search-quality.md). The check only runs for
 * broad words (in more than WINDOW notes), so small instances never drop a word.
 */
function withoutCommonWords(s: SearchStatements, words: Word[]): Word[] {
  const kept = words.filter((word) => word.count <= WINDOW || !s.inMostNotes(word.expression));
  return kept.length > 0 ? kept : words;
}

/**
 * The best `want` notes by bm25 among those holding any query word (a third
 * of them are shown; the rest settle ties).
 * When the words are in at most WINDOW notes (the usual case), all of them are
 * scored: the exact ranking. Otherwise scoring is bounded to a few pools:
 * - the notes holding every word, if there are fewer than ALL_WORDS_WINDOW of
 *   them (when there are more, the newest ALL_WORDS_WINDOW of those and nothing else);
 * - when some words are narrow (in at most WINDOW notes each) and some broad,
 *   the notes holding a narrow word, scored on the narrow words only: a rare,
 *   telling word is never crowded out by a common one;
 * - when those pools give fewer than `want` notes, or a word is a corrected
 *   typo, the newest WINDOW notes holding any word. (Always scoring this pool too cost ~1 ms a broad query,
 *   for nDCG@10 0.835 instead of 0.830 on the judged set: docs/search-quality.md.)
 * bm25 values of one query are comparable across pools: a note's score
 * depends only on the words it holds (the narrow pool leaves out the broad
 * words' small share; a note also in a later pool takes its full score).
 */
function rankedCandidates(s: SearchStatements, words: Word[], want: number): Candidate[] {
  const within = (expression: string) => s.matches(expression) <= WINDOW;
  const join = (list: Word[], operator: string) => list.map((w) => w.expression).join(` ${operator} `);
  const sum = (list: Word[]) => list.reduce((total, w) => total + w.count, 0);
  const any = join(words, "OR");
  const narrow = words.filter((w) => w.count <= WINDOW);
  if (sum(words) <= WINDOW || (narrow.length === words.length && within(any))) return s.ranked.all(any, want);
  if (words.length === 1) return s.windowed.all(any, want, WINDOW);
  // Below a full window, the window holds every note with all the words: the exact ranking of that pool.
  const inAllPool = s.windowedCounted.all(join(words, "AND"), want, ALL_WORDS_WINDOW);
  const inAll = inAllPool[0]?.n ?? 0;
  if (inAll >= ALL_WORDS_WINDOW) return inAllPool;
  // The narrow pool first: a note also in a later pool takes its full score.
  const found = new Map<number, Candidate>();
  const add = (pool: Candidate[]) => pool.forEach((candidate) => found.set(candidate.pk, { pk: candidate.pk, rank: candidate.rank }));
  const someNarrow = narrow.length > 0 && narrow.length < words.length;
  if (someNarrow) {
    const narrowAny = join(narrow, "OR");
    add(sum(narrow) <= WINDOW || within(narrowAny) ? s.ranked.all(narrowAny, want) : s.windowed.all(narrowAny, want, WINDOW));
  }
  add(inAllPool);
  // The any-word pool only when the others fall short of `want`, or a word is a
  // corrected typo (the guess may be wrong, so notes without it must compete):
  // its bm25() walks every posting of every broad word once more, most of a
  // broad query's time.
  if (found.size < want || words.some((w) => w.corrected)) add(s.windowed.all(any, want, WINDOW));
  return [...found.values()].sort((a, b) => a.rank - b.rank).slice(0, want);
}

/**
 * Ranking happens inside FTS5 (no join per match); only the best candidates
 * are read from posts, and bm25 ties among them go to net score, then recency.
 */
export function searchNotes(sqlite: Database, plan: SearchPlan): NoteRow[] {
  if (plan.words.length === 0 || plan.limit <= 0) return [];
  const s = statements(sqlite, plan.weights);
  const words = withoutCommonWords(s, indexWords(s, plan.words));
  if (words.length === 0) return [];
  const candidates = rankedCandidates(s, words, plan.limit * CANDIDATES_FACTOR);
  if (candidates.length === 0) return [];
  const rank = new Map(candidates.map((c) => [c.pk, c.rank]));
  return s.rows
    .all(JSON.stringify(candidates.map((c) => c.pk)))
    .sort((a, b) => rank.get(a.pk)! - rank.get(b.pk)! || b.score - a.score || b.createdAt - a.createdAt)
    .slice(0, plan.limit);
}
