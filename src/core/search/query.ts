// From a user's query to ranked notes, engine-neutral: the words searched for,
// typo correction, then exact BM25F top-k (ranking.ts). An engine supplies a
// SearchSource; nothing here knows SQL or FTS5 syntax.
import { LIMITS, TAG_PATTERN } from "../limits.ts";
import { analyze } from "./analyzer.ts";
import { rankTopK, type Ranked, type TermSource } from "./ranking.ts";
import { bestCorrection, correctable, correctionRanges } from "./typos.ts";

/**
 * Query words searched at most: past this many words found in the index, the
 * rarest are kept (docs/design.md, "Search").
 */
export const MAX_QUERY_WORDS = 16;

// Letters, digits and combining marks: what a word is made of (analyzer.ts).
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/** The query's distinct words, lower-cased, in order (at most `max`). */
export function queryWords(query: string, max = MAX_QUERY_WORDS): string[] {
  const words: string[] = [];
  const seen = new Set<string>();
  for (const match of query.toLowerCase().matchAll(WORD)) {
    const word = match[0];
    if (seen.has(word)) continue;
    seen.add(word);
    words.push(word);
    if (words.length === max) break;
  }
  return words;
}

/**
 * English function words. They are searched like any word (their weight is
 * small, and keeping them measured better: docs/search-quality.md). The
 * similar-notes lookup leaves them out (core/similar.ts).
 */
export const STOPWORDS = new Set(
  (
    "a an and are as at be but by can could did do does for from had has have how i if in into is it its " +
    "my no not of on or our should so that the their then there these this to was we were what when where " +
    "which while who why will with would you your"
  ).split(" "),
);

export interface SearchRequest {
  /** The query's distinct lower-case words of letters, digits and marks only (never search syntax); queryTerms picks what is searched. */
  words: string[];
  /** Tags every result must carry (the query's `tag:NAME` words), distinct, lower-case. */
  tags: string[];
  limit: number;
}

// A tag word: `tag:` (any case) and a valid tag (any case), alone between spaces.
const TAG_WORD = /^tag:(.+)$/i;

/**
 * The query split into its tag words (`tag:NAME` where NAME is a valid tag,
 * lower-cased) and the rest of its text; any other use of `:` stays text.
 */
export function tagWords(query: string): { tags: string[]; text: string } {
  const tags = new Set<string>();
  const rest: string[] = [];
  for (const token of query.split(/\s+/u)) {
    const name = TAG_WORD.exec(token)?.[1].toLowerCase();
    if (name !== undefined && [...name].length <= LIMITS.tagMax && TAG_PATTERN.test(name)) tags.add(name);
    else rest.push(token);
  }
  return { tags: [...tags], text: rest.join(" ") };
}

/** The query's distinct words (queryTerms picks the ones searched) and its tag words. */
export function searchRequest(query: string, limit: number): SearchRequest {
  const { tags, text } = tagWords(query);
  return { words: queryWords(text, Infinity), tags, limit };
}

export interface SearchSource extends TermSource {
  /** Index terms in [from, to) with the number of notes holding each (for typo correction). */
  vocabulary(from: string, to: string): { term: string; doc: number }[] | Promise<{ term: string; doc: number }[]>;
}

/**
 * The index terms a query's words search for. A word found in no note is
 * replaced by the closest index term (typo tolerance); a word still in no note
 * is left out. Past MAX_QUERY_WORDS words found, the rarest are kept (a word's
 * rarity: the fewest notes holding one of its terms; the earlier word on a
 * tie): they weigh the most in the ranking and cost the least to rank, so a
 * long question keeps its telling words wherever they stand, and function
 * words, in most notes, go first.
 */
export async function queryTerms(source: Pick<SearchSource, "tierCounts" | "vocabulary">, words: string[]): Promise<string[]> {
  const perWord = words.map((word) => analyze(word));
  const flat = [...new Set(perWord.flat())];
  const counts = new Map<string, number>();
  (await source.tierCounts(flat)).forEach((tiers, i) => counts.set(flat[i], tiers.reduce((sum, n) => sum + n, 0)));
  const found: { terms: string[]; notes: number; at: number }[] = [];
  let corrections = 0;
  for (let i = 0; i < words.length; i++) {
    const terms = perWord[i].filter((term) => (counts.get(term) ?? 0) > 0);
    // Corrections read the vocabulary: bounded however many unknown words a query holds.
    if (terms.length === 0 && correctable(words[i]) && corrections < MAX_QUERY_WORDS) {
      corrections++;
      const vocabulary: { term: string; doc: number }[] = [];
      for (const [from, to] of correctionRanges(words[i])) vocabulary.push(...(await source.vocabulary(from, to)));
      const correction = bestCorrection(words[i], vocabulary);
      if (correction) {
        terms.push(correction);
        counts.set(correction, vocabulary.find((entry) => entry.term === correction)?.doc ?? 0);
      }
    }
    if (terms.length > 0) found.push({ terms, notes: Math.min(...terms.map((term) => counts.get(term) ?? 0)), at: i });
  }
  const searched =
    found.length <= MAX_QUERY_WORDS ? found : [...found].sort((a, b) => a.notes - b.notes || a.at - b.at).slice(0, MAX_QUERY_WORDS).sort((a, b) => a.at - b.at);
  return [...new Set(searched.flatMap((word) => word.terms))];
}

/** The best `limit` notes for the words (ties with the last included; see rankTopK). */
export async function searchNotes(source: SearchSource, request: SearchRequest): Promise<Ranked[]> {
  if (request.words.length === 0 || request.limit <= 0) return [];
  return rankTopK(source, await queryTerms(source, request.words), request.limit);
}

/** What resultOrder reads of a note besides its relevance. */
export type OrderColumns = { pk: number; score: number; createdAt: number };

/**
 * The first `limit` of `ranked` in resultOrder's order, when more notes tie
 * than are listed (a replay loop's near-duplicates tie by the dozen): their
 * order columns are read (`readOrder`, which leaves out notes no longer
 * listable) instead of their whole rows, so only the listed notes' rows are
 * made. `ranked` as it is when it holds `limit` notes or fewer.
 */
export function cutTies(ranked: Ranked[], limit: number, readOrder: (keys: number[]) => OrderColumns[]): Ranked[] {
  if (ranked.length <= limit) return ranked;
  const scores = new Map(ranked.map((r) => [r.key, r.score]));
  return resultOrder(ranked, readOrder(ranked.map((r) => r.key)), limit).map(({ pk }) => ({ key: pk, score: scores.get(pk)! }));
}

/**
 * The documented order of results: BM25F score, then net score, then the
 * newer note (created_at, then pk), so equal texts are told apart stably.
 */
export function resultOrder<T extends { pk: number; score: number; createdAt: number }>(
  ranked: Ranked[],
  notes: T[],
  limit: number,
): T[] {
  const relevance = new Map(ranked.map((r) => [r.key, r.score]));
  return notes
    .filter((note) => relevance.has(note.pk))
    .sort(
      (a, b) =>
        relevance.get(b.pk)! - relevance.get(a.pk)! || b.score - a.score || b.createdAt - a.createdAt || b.pk - a.pk,
    )
    .slice(0, limit);
}
