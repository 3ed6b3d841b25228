// Similar notes on write (docs/design.md, "Similar notes"): just before a
// note is stored, the notes sharing the most of its rarest words are scored
// by the ranking's own BM25F for its words (the corpus counted as if it were
// stored already), and those that reach a share of the new note's own score
// are listed. Looked up
// before the write, the list can be stored with it: the answer a keyed
// request's replay gets (src/core/idempotency.ts). The share (the threshold)
// was chosen on data: docs/search-quality.md, "Similar notes on write".
import type { ListedNote, SimilarRecord, Store } from "../store/types.ts";
import { analyzeWithout } from "./search/analyzer.ts";
import { STOPWORDS } from "./search/query.ts";
import { noteVector, type NoteVector } from "./search/vector.ts";

/** Notes listed at most. */
export const SIMILAR_LIMIT = 3;
/**
 * A note is listed when its score for the new note's terms reaches this share
 * of the new note's own score (chosen on the first 250 webmasters queries).
 */
export const SIMILAR_THRESHOLD = 0.3;
/**
 * Holders of the new note's rarest shared terms reached at most (the rule:
 * src/core/search/own-score.ts): what bounds the lookup's cost however many
 * notes share the new note's words (a replay loop writes thousands). Chosen on
 * data with the pool and the threshold: docs/search-quality.md.
 */
export const SIMILAR_REACH = 4096;
/** Reached notes scored exactly, those sharing the most of the rarest terms (then the newest). */
export const SIMILAR_POOL = 32;
/**
 * SIMILAR_REACH on the database index's path (FTS5 or PostgreSQL while the
 * postings are built or over budget), where every holder reached is a stored
 * vector read: fewer hints found there (docs/search-quality.md).
 */
export const SIMILAR_DATABASE_REACH = 512;
/** Index terms looked up at most: a long note is looked up by its title and its most frequent body words. */
export const SIMILAR_TERMS = 16;
/**
 * Body characters the terms are picked from: the body's start says what a
 * note is about, and a 20,000-character body would cost far more to count
 * than the lookup itself.
 */
export const SIMILAR_BODY_CHARS = 2_000;

/**
 * The index terms a note is looked up by: its title's terms, then its body's
 * (its first SIMILAR_BODY_CHARS characters) by frequency (first occurrence
 * breaks ties), function words left out, at most SIMILAR_TERMS.
 */
export function similarTerms(title: string, body: string): string[] {
  const terms: string[] = [];
  const seen = new Set<string>();
  const add = (term: string) => {
    if (seen.has(term) || terms.length >= SIMILAR_TERMS) return;
    seen.add(term);
    terms.push(term);
  };
  const contentTerms = (text: string) => analyzeWithout(text, STOPWORDS);
  for (const term of contentTerms(title)) add(term);
  const counts = new Map<string, number>();
  for (const term of contentTerms(body.slice(0, SIMILAR_BODY_CHARS))) counts.set(term, (counts.get(term) ?? 0) + 1);
  // Map order is first occurrence; a stable sort keeps it among equal counts.
  for (const [term] of [...counts].sort((a, b) => b[1] - a[1])) add(term);
  return terms;
}

/** A note about to be stored: what the lookup reads of it (its term vector when analysed already). */
export interface NoteText {
  title: string;
  body: string;
  tags: string[];
  vector?: NoteVector;
}

/** Other notes for the new note's terms reaching `minShare` of its own score, best first, each with its share. */
export function similarCandidates(
  store: Pick<Store, "similarNotes">,
  note: NoteText,
  minShare: number,
  limit = SIMILAR_LIMIT,
  reach = SIMILAR_REACH,
  pool = SIMILAR_POOL,
  databaseReach = Math.min(reach, SIMILAR_DATABASE_REACH),
): Promise<SimilarRecord[]> {
  const { encoded: vector } = note.vector ?? noteVector(note.title, note.tags, note.body);
  return store.similarNotes({ terms: similarTerms(note.title, note.body), vector, limit, minShare, reach, pool, databaseReach });
}

/**
 * The notes to list for a note about to be stored. Never the note it
 * supersedes (`supersedes`): that one leaves the search index with the write.
 */
export async function similarNotes(
  store: Pick<Store, "similarNotes">,
  note: NoteText & { supersedes?: string | null },
  threshold = SIMILAR_THRESHOLD,
): Promise<ListedNote[]> {
  const replaced = note.supersedes ?? null;
  const found = await similarCandidates(store, note, threshold, replaced === null ? SIMILAR_LIMIT : SIMILAR_LIMIT + 1);
  return found
    .map((c) => c.note)
    .filter((n) => n.id !== replaced)
    .slice(0, SIMILAR_LIMIT);
}
