// The PostgreSQL side of search (docs/design.md, "Search"): the same design as
// the SQLite engine. Each replica holds the index in memory
// (src/core/search/memory-index.ts), built from search_vectors and kept level
// through search_log by the shared follower (src/store/search-follower.ts,
// search-log.ts here); ranking is the shared MaxScore (maxscore.ts) and
// corpus statistics live in that memory. A note write adds its vector row and
// its log row, in its own transaction: nothing every writer updates.
// While a replica builds its postings (or when they would not fit
// SEARCH_MEMORY_MB) it answers from the table itself: every note holding a
// query term is read and scored by the shared scorer, exact and slower.
// Tag words (core/search/tagged.ts) take the tagged notes from note_tags
// (note-tags.ts) on both paths.
import type { SQL as BunSQL } from "bun";
import { termVector } from "../../core/search/analyzer.ts";
import { queryTerms, type SearchRequest } from "../../core/search/query.ts";
import { idf, scoreVector, TopK, type CorpusStats, type Ranked } from "../../core/search/ranking.ts";
import { rankTagged, type TaggedRanking } from "../../core/search/tagged.ts";
import { rankSimilar, type SimilarQuery, type SimilarRanking } from "../../core/search/own-score.ts";
import { rankSimilarInMemory } from "../../core/search/similar-memory.ts";
import { searchPostings, searchTaggedPostings } from "../../core/search/memory-queries.ts";
import { encodeVector } from "../../core/search/vector.ts";
import { SearchFollower } from "../search-follower.ts";
import { transaction } from "./connection.ts";
import { bestTagged, taggedNotes } from "./note-tags.ts";
import { PostgresSearchLog } from "./search-log.ts";

/** How often a replica reads the log without being asked: another replica's writes are searchable within this (plus a read). */
export const SEARCH_FOLLOW_MS = 100;

/** A note's stored term vector (src/core/search/vector.ts). */
export const noteVector = (title: string, tags: string[], body: string) => encodeVector(termVector(title, tags, body));

/** `' term:'` as a LIKE pattern: terms hold only letters, digits and marks, so nothing needs escaping. */
const holding = (term: string) => `% ${term}:%`;

export class PostgresSearch {
  /** This replica's postings (null budget: none, e.g. `cairn admin`). */
  readonly memory: SearchFollower<string>;
  /** The search log it follows (a write tells it which rows are its own: PostgresSearchLog.ownRow). */
  readonly log: PostgresSearchLog;

  constructor(
    private readonly client: BunSQL,
    budgetBytes: number,
  ) {
    this.log = new PostgresSearchLog(client);
    this.memory = new SearchFollower(this.log, budgetBytes, { followEverySearch: false, pollMs: SEARCH_FOLLOW_MS });
  }

  /** The best notes' keys for the request, with their relevance (ties with the last included); a request of tag words only: see bestTagged. */
  async rank(request: SearchRequest): Promise<Ranked[]> {
    if (request.words.length === 0 || request.limit <= 0) return [];
    const memory = await this.memory.current();
    if (request.tags.length > 0) {
      if (!memory) return this.rankFromTable(request);
      const tagged = await taggedNotes(this.client, request.tags);
      return searchTaggedPostings(memory, request.words, tagged, request.limit, { vectors: (keys) => vectorsOf(this.client, keys) });
    }
    return memory ? searchPostings(memory, request.words, request.limit) : this.rankFromTable(request);
  }

  /**
   * The similar-notes lookup (own-score.ts says what it answers) on the path
   * search takes: this replica's postings, or the table in one snapshot while
   * they are built.
   */
  async similar(query: SimilarQuery): Promise<SimilarRanking> {
    if (query.terms.length === 0 || query.limit <= 0) return { own: 0, ranked: [] };
    const memory = await this.memory.current();
    if (memory) return rankSimilarInMemory(memory, query);
    return transaction(
      this.client,
      async (tx) => {
        const source = tableSource(tx);
        const newestWith = async (term: string, limit: number) => {
          const rows = (await tx`
            SELECT pk FROM search_vectors WHERE vector LIKE ${holding(term)} ORDER BY pk DESC LIMIT ${Number.isFinite(limit) ? limit : null}`) as { pk: string }[];
          return rows.map((row) => Number(row.pk));
        };
        return rankSimilar({ ...source, newestWith }, query);
      },
      "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    );
  }

  /** A query of tag words only: the keys of the best-scored notes carrying every tag (net score, then newest). */
  bestTagged(request: SearchRequest): Promise<number[]> {
    if (request.limit <= 0) return Promise.resolve([]);
    return bestTagged(this.client, request.tags, request.limit);
  }

  /**
   * Exhaustive over the table, in one snapshot: the corpus sizes, how many
   * notes hold each term, then every note holding one (with tag words: every
   * note also carrying the tags), scored by the shared scorer (scoreVector
   * sums the same shares in the same order as MaxScore).
   */
  private rankFromTable(request: SearchRequest): Promise<Ranked[]> {
    return transaction(this.client, async (tx) => {
      const source = tableSource(tx);
      const corpus = await source.corpus();
      if (corpus.notes === 0) return [];
      const rankAll = async (terms: string[], k: number, accept?: (key: number) => boolean) => {
        const counts = await source.tierCounts(terms);
        const query = terms.flatMap((term, i) => (counts[i][0] > 0 ? [{ term, idf: idf(corpus.notes, counts[i][0]) }] : []));
        if (query.length === 0) return [];
        const averages = corpus.lengthSums.map((sum) => Math.max(sum / corpus.notes, 1e-9)) as [number, number, number];
        const rows = (await tx`
          SELECT pk, vector FROM search_vectors
           WHERE vector LIKE ANY (ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(query.map((q) => holding(q.term)))}::text::jsonb)))`) as { pk: string; vector: string }[];
        const top = new TopK(k);
        for (const row of rows) {
          const key = Number(row.pk);
          if (!accept || accept(key)) top.offer(key, scoreVector(row.vector, query, averages));
        }
        return top.items;
      };
      if (request.tags.length > 0) {
        const ranking: TaggedRanking = { terms: source, vectors: source, rankFiltered: rankAll, directCost: 1 };
        return rankTagged(ranking, request.words, await taggedNotes(tx, request.tags), request.limit);
      }
      return rankAll(await queryTerms(source, request.words), request.limit);
    }, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  }
}

/**
 * The table's answers to the query step and the scorer, in the snapshot of
 * `tx`: corpus sizes summed from the vectors' lengths, term counts and typo
 * vocabulary by matching the vectors' text (each count asked once). The
 * vocabulary range compares terms as code points (COLLATE "C"), as the
 * in-memory postings and SQLite do: in a database of a language's collation
 * (`createdb` on an en_US.UTF-8 or ICU cluster) "wełna" sorts between "wel"
 * and "wem", so this path corrected "welna" to it and the postings did not.
 */
function tableSource(tx: BunSQL) {
  const counted = new Map<string, number>();
  let corpus: CorpusStats | undefined;
  return {
    corpus: async (): Promise<CorpusStats> => {
      if (corpus) return corpus;
      const [row] = (await tx`
        SELECT count(*)::float8 AS notes,
               coalesce(sum(split_part(split_part(vector, ' ', 1), ',', 1)::int), 0)::float8 AS title,
               coalesce(sum(split_part(split_part(vector, ' ', 1), ',', 2)::int), 0)::float8 AS tags,
               coalesce(sum(split_part(split_part(vector, ' ', 1), ',', 3)::int), 0)::float8 AS body
          FROM search_vectors`) as { notes: number; title: number; tags: number; body: number }[];
      return (corpus = { notes: row.notes, lengthSums: [row.title, row.tags, row.body] });
    },
    tierCounts: async (terms: string[]) => {
      const missing = terms.filter((term) => !counted.has(term));
      if (missing.length > 0) {
        const rows = (await tx`
          SELECT t.term, (SELECT count(*) FROM search_vectors WHERE vector LIKE t.pattern)::int AS notes
            FROM jsonb_to_recordset(${JSON.stringify(missing.map((term) => ({ term, pattern: holding(term) })))}::text::jsonb) AS t(term text, pattern text)`) as { term: string; notes: number }[];
        for (const row of rows) counted.set(row.term, row.notes);
      }
      return terms.map((term) => [counted.get(term) ?? 0]);
    },
    vocabulary: async (from: string, to: string) =>
      (await tx`
        SELECT m[1] AS term, count(*)::int AS doc
          FROM search_vectors, regexp_matches(vector, ${` (${prefixPattern(from, to)}[^ :]*):`}, 'g') m
         WHERE m[1] COLLATE "C" >= ${from} AND m[1] COLLATE "C" < ${to} GROUP BY m[1]`) as { term: string; doc: number }[],
    vectors: (keys: number[]) => vectorsOf(tx, keys),
  };
}

/** The stored vectors of these notes (those still indexed). */
async function vectorsOf(sql: BunSQL, keys: number[]): Promise<{ key: number; vector: string }[]> {
  const rows = (await sql`SELECT pk, vector FROM search_vectors WHERE pk = ANY(${`{${keys.join(",")}}`}::bigint[])`) as { pk: string; vector: string }[];
  return rows.map((row) => ({ key: Number(row.pk), vector: row.vector }));
}

/** The literal prefix every term in [from, to) starts with, as a regular expression (terms are letters, digits and marks). */
function prefixPattern(from: string, to: string): string {
  let common = 0;
  while (common < from.length && common < to.length && from[common] === to[common]) common++;
  return from.slice(0, common).replace(/[^\p{L}\p{N}\p{M}]/gu, (c) => `\\${c}`);
}

