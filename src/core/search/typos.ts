// Typo tolerance: a query word found in no note is replaced by the closest
// index term (docs/design.md, "Search").
import { porterStem } from "./porter.ts";

/** Three rows of the distance table, reused between calls (grown for longer words). */
let rows = new Int32Array(3 * 72);

/**
 * Optimal-string-alignment distance (edits and adjacent swaps), or max + 1
 * once it must exceed max. Only the band of cells within max of the diagonal
 * is computed: a distance of at most max never passes outside it.
 */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const width = b.length + 1;
  if (rows.length < 3 * width) rows = new Int32Array(6 * width);
  const table = rows;
  const far = max + 1;
  // Offsets of the row two back, the previous row and the current one (rotated after each row).
  let before = 0;
  let previous = width;
  let current = 2 * width;
  for (let j = 0; j < width; j++) table[previous + j] = j <= max ? j : far;
  for (let i = 1; i <= a.length; i++) {
    const ai = a.charCodeAt(i - 1);
    const aBefore = i > 1 ? a.charCodeAt(i - 2) : -1;
    const low = Math.max(1, i - max);
    const high = Math.min(b.length, i + max);
    table[current + low - 1] = low === 1 ? i : far;
    let best = low === 1 ? i : far;
    for (let j = low; j <= high; j++) {
      const bj = b.charCodeAt(j - 1);
      let d = table[previous + j - 1] + (ai === bj ? 0 : 1);
      if (table[previous + j] + 1 < d) d = table[previous + j] + 1;
      if (table[current + j - 1] + 1 < d) d = table[current + j - 1] + 1;
      if (j > 1 && ai === b.charCodeAt(j - 2) && aBefore === bj && table[before + j - 2] + 1 < d) d = table[before + j - 2] + 1;
      table[current + j] = d;
      if (d < best) best = d;
    }
    if (high < b.length) table[current + high + 1] = far;
    if (best > max) return far;
    const oldest = before;
    before = previous;
    previous = current;
    current = oldest;
  }
  return Math.min(table[previous + b.length], far);
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
      // Past max - 1 on length alone (what editDistance would answer first), without building the string.
      if (Math.abs(word.length - term.length - ending.length) > max - 1) continue;
      distance = Math.min(distance, editDistance(word, term + ending, max - 1) + 1);
    }
    if (distance > max) continue;
    if (!best || distance < best.distance || (distance === best.distance && doc > best.doc)) best = { term, distance, doc };
  }
  return best?.term ?? null;
}
