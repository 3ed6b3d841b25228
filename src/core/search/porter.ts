// The Porter stemmer (Porter 1980), ordered as in SQLite's FTS5 `porter`
// tokenizer so that stems stay those of earlier releases.
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

