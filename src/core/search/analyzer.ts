// The text analysis every engine shares: a note's fields and a query become
// index terms the same way, so an engine only stores and looks up terms
// (docs/design.md, "Search").
import { porterStem } from "./porter.ts";

/** Index terms longer than this are cut (a pasted hash or base64 blob is still findable by its start). */
export const MAX_TERM_LENGTH = 64;

// Letters, digits and combining marks: one run is one word.
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
// Scripts written without spaces between words: runs are split into overlapping pairs.
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const CJK_RUNS = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+)|([^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+)/gu;
// Accents on Latin letters (after NFD) are dropped: "café" is found as "cafe".
const LATIN_ACCENTS = /[\u0300-\u036f]/g;
const ASCII_WORD = /^[a-z]+$/;

function normalise(word: string): string {
  return word.normalize("NFD").replace(LATIN_ACCENTS, "").normalize("NFC");
}

/**
 * Stems already computed, by word: a community's notes repeat the same words,
 * and stemming was most of the time a write spent analysing a note
 * (docs/benchmarks.md, "Where the time goes"). A pure function's memo, shared
 * by every store; emptied when it reaches STEM_MEMO_WORDS.
 */
const STEM_MEMO_WORDS = 100_000;
const stems = new Map<string, string>();

function stemOf(word: string): string {
  let stem = stems.get(word);
  if (stem === undefined) {
    if (stems.size >= STEM_MEMO_WORDS) stems.clear();
    stem = porterStem(word);
    stems.set(word, stem);
  }
  return stem;
}

function termOf(word: string): string {
  const term = ASCII_WORD.test(word) ? stemOf(word) : word;
  return term.length > MAX_TERM_LENGTH ? term.slice(0, MAX_TERM_LENGTH) : term;
}

/** Appends the terms of one word (a run of letters, digits and marks, already lower-case). */
function pushWordTerms(word: string, out: string[]): void {
  if (ASCII_WORD.test(word)) {
    out.push(termOf(word));
    return;
  }
  if (!CJK.test(word)) {
    out.push(termOf(normalise(word)));
    return;
  }
  for (const [, cjk, other] of word.matchAll(CJK_RUNS)) {
    if (other !== undefined) {
      const rest = normalise(other);
      if (rest.length > 0) out.push(termOf(rest));
      continue;
    }
    const chars = [...cjk];
    if (chars.length === 1) out.push(chars[0]);
    for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
  }
}

/**
 * The index terms of a text, in order, repeats kept: lower-cased words, Latin
 * accents removed, English words of a-z reduced to their Porter stem, CJK runs
 * as overlapping character pairs (a lone CJK character as itself).
 */
export function analyze(text: string): string[] {
  const out: string[] = [];
  for (const match of text.toLowerCase().matchAll(WORD)) pushWordTerms(match[0], out);
  return out;
}

/** analyze() of a text's words that `skip` does not hold (lower-case words): one pass, no joined copy. */
export function analyzeWithout(text: string, skip: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const match of text.toLowerCase().matchAll(WORD)) if (!skip.has(match[0])) pushWordTerms(match[0], out);
  return out;
}

/** The three searched fields of a note, in field order: title, tags, body. */
export type Fields<T> = [title: T, tags: T, body: T];
export const FIELD_NAMES: Fields<string> = ["title", "tags", "body"];

/** How often each term occurs in each field, and each field's length in terms. */
export interface TermVector {
  lengths: Fields<number>;
  counts: Map<string, Fields<number>>;
}

export function termVector(title: string, tags: string[], body: string): TermVector {
  const counts = new Map<string, Fields<number>>();
  const lengths: Fields<number> = [0, 0, 0];
  const texts = [title, tags.join(" "), body];
  for (let field = 0; field < 3; field++) {
    const terms = analyze(texts[field]);
    lengths[field] = terms.length;
    for (const term of terms) {
      let entry = counts.get(term);
      if (!entry) counts.set(term, (entry = [0, 0, 0]));
      entry[field]++;
    }
  }
  return { lengths, counts };
}
