// Turning a user's query into safe FTS5 syntax, plus the pure text rules the
// ranking uses (docs/design.md, "Search"). Every word becomes a quoted FTS5
// string, so operators (AND, NEAR, *, :, -, parentheses) are only words.
import type { SearchPlan } from "../store/types.ts";

/**
 * bm25() column weights: title, tags, body. Measured on the judged set
 * (bench/quality, docs/search-quality.md): a title hit is worth about three
 * body hits; a heavier title weight lets one common word in a short title
 * outrank notes that hold every query word.
 */
export const FIELD_WEIGHTS: [number, number, number] = [3, 1, 1];
export const MAX_QUERY_WORDS = 16;

// Letters, digits and combining marks: the characters unicode61 keeps in tokens.
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

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
 * English function words. They match most notes, so they add cost and noise
 * ("how to …", "… is locked") and almost no evidence; they are dropped unless
 * the query holds nothing else.
 */
export const STOPWORDS = new Set(
  (
    "a an and are as at be but by can could did do does for from had has have how i if in into is it its " +
    "my no not of on or our should so that the their then there these this to was we were what when where " +
    "which while who why will with would you your"
  ).split(" "),
);

/** The words that are searched for: the query's words without function words (all of them if nothing else is left). */
export function contentWords(words: string[]): string[] {
  const kept = words.filter((word) => !STOPWORDS.has(word));
  return kept.length > 0 ? kept : words;
}

/** A word as an FTS5 string. Words hold only letters, digits and marks, so the escape never fires; it stays as a guard. */
export const quote = (word: string) => `"${word.replaceAll('"', '""')}"`;

/**
 * The plan: the content words (at most MAX_QUERY_WORDS), all of them (AND)
 * and any of them (OR). An empty plan means the query held no searchable word.
 */
export function searchPlan(query: string, limit: number): SearchPlan {
  const words = contentWords(queryWords(query, Infinity)).slice(0, MAX_QUERY_WORDS);
  const quoted = words.map(quote);
  const expressions: string[] = [];
  if (quoted.length > 0) expressions.push(quoted.join(" AND "));
  if (quoted.length > 1) expressions.push(quoted.join(" OR "));
  return { expressions, words, weights: FIELD_WEIGHTS, limit };
}

// --- typo tolerance ------------------------------------------------------------

const isVowel = (c: string, yIsVowel: boolean) =>
  c === "a" || c === "e" || c === "i" || c === "o" || c === "u" || (yIsVowel && c === "y");

/** Index just past the first vowel-consonant run of `s` (0 when there is none). */
function gobbleVC(s: string, previousConsonant: boolean): number {
  let consonant = previousConsonant;
  let i = 0;
  for (; i < s.length; i++) {
    consonant = !isVowel(s[i], consonant);
    if (!consonant) break;
  }
  for (i++; i < s.length; i++) {
    consonant = !isVowel(s[i], consonant);
    if (consonant) return i + 1;
  }
  return 0;
}
const mGt0 = (s: string) => gobbleVC(s, false) > 0;
function mGt1(s: string): boolean {
  const n = gobbleVC(s, false);
  return n > 0 && gobbleVC(s.slice(n), true) > 0;
}
function mEq1(s: string): boolean {
  const n = gobbleVC(s, false);
  return n > 0 && gobbleVC(s.slice(n), true) === 0;
}
/** Ends consonant-vowel-consonant, the last not w, x or y. */
function cvc(s: string): boolean {
  const last = s[s.length - 1];
  if (last === "w" || last === "x" || last === "y") return false;
  let mask = 0;
  let consonant = false;
  for (const c of s) {
    consonant = !isVowel(c, consonant);
    mask = ((mask << 1) | (consonant ? 1 : 0)) & 7;
  }
  return mask === 5;
}
function hasVowel(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (isVowel(s[i], i > 0)) return true;
  return false;
}

type Rule = [suffix: string, replacement: string, condition: (stem: string) => boolean];
const r = (condition: (stem: string) => boolean, pairs: string): Rule[] =>
  pairs.split(" ").map((pair) => {
    const [suffix, replacement = ""] = pair.split(">");
    return [suffix, replacement, condition];
  });
const sOrT = (s: string) => (s.endsWith("s") || s.endsWith("t")) && mGt1(s);
const STEP2 = r(mGt0, "ational>ate tional>tion enci>ence anci>ance izer>ize logi>log bli>ble alli>al entli>ent eli>e ousli>ous ization>ize ation>ate ator>ate alism>al iveness>ive fulness>ful ousness>ous aliti>al iviti>ive biliti>ble");
const STEP3 = r(mGt0, "ical>ic ness> icate>ic iciti>ic ful> ative> alize>al");
const STEP4 = [
  ...r(mGt1, "al ance ence er ic able ible ant ement ment ent"),
  ["ion", "", sOrT] as Rule,
  ...r(mGt1, "ou ism ate iti ous ive ize"),
];

/**
 * The first rule whose suffix ends `word` decides (its condition may still say
 * no). The rules are grouped and ordered as in SQLite's FTS5 porter tokenizer,
 * where only rules sharing the word's second-to-last letter are tried.
 */
function applyFirst(word: string, rules: Rule[]): string {
  const key = word[word.length - 2];
  for (const [suffix, replacement, condition] of rules) {
    if (suffix[suffix.length - 2] !== key || word.length <= suffix.length || !word.endsWith(suffix)) continue;
    const stem = word.slice(0, word.length - suffix.length);
    return condition(stem) ? stem + replacement : word;
  }
  return word;
}

/**
 * The Porter stem of a lower-case word, as SQLite's FTS5 `porter` tokenizer
 * computes it (the index holds these stems). Used only to compare a query word
 * with the index vocabulary when looking for a typo's correction.
 */
export function porterStem(word: string): string {
  if (word.length < 3 || word.length > 64) return word;
  let w = word;
  // Step 1a
  if (w.endsWith("s")) {
    if (w[w.length - 2] === "e") {
      w = (w.length > 4 && w.endsWith("sses")) || (w.length > 3 && w[w.length - 3] === "i") ? w.slice(0, -2) : w.slice(0, -1);
    } else if (w[w.length - 2] !== "s") {
      w = w.slice(0, -1);
    }
  }
  // Step 1b
  let removed = false;
  if (w.length > 3 && w.endsWith("eed")) {
    if (mGt0(w.slice(0, -3))) w = w.slice(0, -1);
  } else if (w.length > 2 && w.endsWith("ed") && hasVowel(w.slice(0, -2))) {
    w = w.slice(0, -2);
    removed = true;
  } else if (w.length > 3 && w.endsWith("ing") && hasVowel(w.slice(0, -3))) {
    w = w.slice(0, -3);
    removed = true;
  }
  if (removed && w.length >= 2) {
    if (w.length > 2 && (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz"))) {
      w += "e";
    } else {
      const c = w[w.length - 1];
      if (!isVowel(c, false) && c !== "l" && c !== "s" && c !== "z" && c === w[w.length - 2]) w = w.slice(0, -1);
      else if (mEq1(w) && cvc(w)) w += "e";
    }
  }
  // Step 1c
  if (w.endsWith("y") && hasVowel(w.slice(0, -1))) w = w.slice(0, -1) + "i";
  if (w.length >= 2) {
    w = applyFirst(w, STEP2);
    w = applyFirst(w, STEP3);
    w = applyFirst(w, STEP4);
  }
  // Step 5a
  if (w.endsWith("e")) {
    const stem = w.slice(0, -1);
    if (mGt1(stem) || (mEq1(stem) && !cvc(stem))) w = stem;
  }
  // Step 5b
  if (w.length > 1 && w.endsWith("ll") && mGt1(w.slice(0, -1))) w = w.slice(0, -1);
  return w;
}

/** Optimal-string-alignment distance (edits and adjacent swaps), or max + 1 once it must exceed max. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = new Array<number>(b.length + 1);
    current[0] = i;
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2] + 1);
      current[j] = d;
      if (d < best) best = d;
    }
    if (best > max) return max + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length];
}

/** Words this short, or holding anything but a-z, are never corrected. */
export const MIN_CORRECTED_LENGTH = 4;
export const correctable = (word: string) => word.length >= MIN_CORRECTED_LENGTH && /^[a-z]+$/.test(word);

/**
 * Where a misspelt word's correction is looked for in the sorted index
 * vocabulary: stems starting with the stem's first three letters, or with
 * them after undoing a swap or an extra letter in second or third place.
 * A substitution or a missing letter in the first three places is not
 * corrected; that keeps the lookup to a few short ranges.
 */
export function correctionRanges(word: string): [string, string][] {
  const s = porterStem(word);
  const next = (prefix: string) => prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  const prefixes = [s.slice(0, 3), s[0] + s[2] + s[1], s[0] + s[1] + (s[3] ?? ""), s[0] + s[2] + (s[3] ?? "")];
  return [...new Set(prefixes.filter((prefix) => prefix.length === 3))].map((prefix) => [prefix, next(prefix)]);
}

/**
 * Endings the stemmer strips. A misspelt ending ("replicaton") hides the stem
 * from the stemmer, so a term is also compared with the word as term + ending;
 * the ending is a guess, so that comparison costs one edit more.
 */
const ENDINGS = ["", "e", "s", "es", "ed", "ing", "er", "ers", "ion", "ions", "ation", "ations", "ment", "ments", "ness", "y", "ies", "ied", "ly", "al", "ity", "ive", "ize", "ized", "ous", "able", "ance", "ence", "ism"];

/** Edits allowed when correcting a word: one up to 8 letters, two from 9. */
export const maxEdits = (word: string) => (word.length <= 8 ? 1 : 2);

/**
 * The index term closest to a word missing from the index, comparing stems
 * and whole words (term + an ending, one edit dearer); ties go to the term in
 * more notes.
 * Null when nothing is within `maxEdits` of the word.
 */
export function bestCorrection(word: string, vocabulary: { term: string; doc: number }[]): string | null {
  const stem = porterStem(word);
  const max = maxEdits(word);
  let best: { term: string; distance: number; doc: number } | null = null;
  for (const { term, doc } of vocabulary) {
    if (term === stem) continue;
    let distance = editDistance(stem, term, max);
    for (const ending of ENDINGS) {
      if (distance <= 1) break;
      distance = Math.min(distance, editDistance(word, term + ending, max - 1) + 1);
    }
    if (distance > max) continue;
    if (!best || distance < best.distance || (distance === best.distance && doc > best.doc)) best = { term, distance, doc };
  }
  return best?.term ?? null;
}

/**
 * The FTS5 string for an index term found as a correction. A term is already
 * a stem; if the tokenizer would stem it further, a prefix query still finds it.
 */
export const termExpression = (term: string) => (porterStem(term) === term ? quote(term) : `${quote(term)}*`);
