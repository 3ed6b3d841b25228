// Turning a user's query into safe FTS5 syntax. Every word becomes a quoted
// FTS5 string, so operators (AND, NEAR, *, :, -, parentheses) are only words.
import type { SearchPlan } from "../store/types.ts";

/** Title above tags above body. */
export const FIELD_WEIGHTS: [number, number, number] = [10, 4, 1];
export const MAX_QUERY_WORDS = 16;

// Letters, digits and combining marks: the characters unicode61 keeps in tokens.
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

export function queryWords(query: string): string[] {
  const words: string[] = [];
  const seen = new Set<string>();
  for (const match of query.toLowerCase().matchAll(WORD)) {
    const word = match[0];
    if (seen.has(word)) continue;
    seen.add(word);
    words.push(word);
    if (words.length === MAX_QUERY_WORDS) break;
  }
  return words;
}

const quote = (word: string) => `"${word.replaceAll('"', '""')}"`;

/**
 * All words first (precise); then any word, so a long query with one rare
 * miss still answers. An empty plan means the query held no searchable word.
 */
export function searchPlan(query: string, limit: number): SearchPlan {
  const words = queryWords(query).map(quote);
  const expressions: string[] = [];
  if (words.length > 0) expressions.push(words.join(" AND "));
  if (words.length > 1) expressions.push(words.join(" OR "));
  return { expressions, weights: FIELD_WEIGHTS, limit };
}
