// The text analysis every engine shares: a note's fields and a query become
// index terms the same way, so an engine only stores and looks up terms
// (docs/design.md, "Search").
import { porterStem } from "./porter.ts";
import { finishHash, FNV_START, fnvStep } from "./term-table.ts";

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

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * The stems of ASCII words by the word's characters in the text being read,
 * so that a word seen before costs no string of its own nor a Map lookup
 * (which hashes a new string): open addressing over one typed array, each slot
 * the word's hash, its stem's index + 1, and where its characters start in a
 * byte pool. The same memo as `stems` (STEM_MEMO_WORDS words, then emptied),
 * for the analysis of ASCII text, most of a long note's write
 * (docs/benchmarks.md, "A note's analysis: stems remembered by the word's characters").
 */
class WordMemo {
  private slots = new Int32Array(4 * WORD_SLOTS);
  private pool = new Uint8Array(1 << 20);
  private used = 0;
  private words: string[] = [];
  /** Times the memo was emptied: a word's index (`index`) names the same word only within one generation. */
  generation = 0;
  /** The memo's index of the word stem() last returned (words get 0, 1, 2, … as they are kept), or -1: not kept. */
  index = -1;

  /** The stem of `text`'s characters start..end (a-z only), whose hash is `hash`. */
  stem(text: string, start: number, end: number, hash: number): string {
    const length = end - start;
    const slots = this.slots;
    const pool = this.pool;
    let slot = hash & (WORD_SLOTS - 1);
    for (; ; slot = (slot + 1) & (WORD_SLOTS - 1)) {
      const at = 4 * slot;
      const held = slots[at];
      if (held === 0) break;
      if (held === hash && slots[at + 3] === length) {
        const from = slots[at + 2];
        let i = 0;
        while (i < length && pool[from + i] === text.charCodeAt(start + i)) i++;
        if (i === length) return this.words[(this.index = slots[at + 1] - 1)];
      }
    }
    const word = text.slice(start, end);
    const stem = porterStem(word);
    this.index = -1;
    // A run of letters far longer than any word (a pasted blob) is not kept: it would fill the pool.
    if (length > MAX_MEMO_WORD) return stem;
    if (this.words.length >= STEM_MEMO_WORDS || this.used + length > pool.length) {
      this.clear();
      return stem;
    }
    const at = 4 * slot;
    slots[at] = hash;
    slots[at + 1] = this.words.push(stem);
    this.index = this.words.length - 1;
    slots[at + 2] = this.used;
    slots[at + 3] = length;
    for (let i = 0; i < length; i++) pool[this.used + i] = text.charCodeAt(start + i);
    this.used += length;
    return stem;
  }

  private clear(): void {
    this.slots.fill(0);
    this.used = 0;
    this.words = [];
    this.generation++;
  }
}
/** Letters of the longest word the word memo keeps. */
const MAX_MEMO_WORD = 256;
/** Slots of the word memo: a power of two, twice STEM_MEMO_WORDS at least (short probe runs). */
const WORD_SLOTS = 1 << 18;
let wordMemo: WordMemo | null = null;

/**
 * pushWordTerms for every word of a lower-cased text of ASCII characters only,
 * read character by character: there a word is a run of a-z and 0-9, a word
 * of letters is stemmed and one with digits kept as it is. The same terms as
 * the pattern's way, several times faster (a note's analysis was a fifth of a
 * long note's write: docs/benchmarks.md, "Writes of ~2 KB notes").
 */
function pushAsciiTerms(lower: string, out: string[], skip: ReadonlySet<string> | null, words: number[] | null): void {
  const memo = (wordMemo ??= new WordMemo());
  let start = -1;
  let letters = true;
  let h = 0;
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 32;
    if (c >= 97 && c <= 122) {
      if (start < 0) {
        start = i;
        letters = true;
        h = FNV_START;
      }
      h = fnvStep(h, c);
    } else if (c >= 48 && c <= 57) {
      if (start < 0) start = i;
      letters = false;
    } else if (start >= 0) {
      const from = start;
      start = -1;
      let term: string;
      if (skip !== null) {
        const word = lower.slice(from, i);
        if (skip.has(word)) continue;
        term = letters ? memo.stem(lower, from, i, finishHash(h)) : word;
      } else term = letters ? memo.stem(lower, from, i, finishHash(h)) : lower.slice(from, i);
      out.push(term.length > MAX_TERM_LENGTH ? term.slice(0, MAX_TERM_LENGTH) : term);
      if (words !== null) words.push(letters ? memo.index : -1);
    }
  }
}

/**
 * The index terms of a text, in order, repeats kept: lower-cased words, Latin
 * accents removed, English words of a-z reduced to their Porter stem, CJK runs
 * as overlapping character pairs (a lone CJK character as itself).
 */
export function analyze(text: string): string[] {
  return analyzeWithout(text, null);
}

/** analyze() of a text's words that `skip` does not hold (lower-case words): one pass, no joined copy. */
export function analyzeWithout(text: string, skip: ReadonlySet<string> | null): string[] {
  return analyzeInto(text, skip, null);
}

/**
 * analyzeWithout(), and when the text is ASCII only, per term the word memo's
 * index of the word it came from (-1: none) appended to `words`; a text with
 * other characters appends none.
 */
function analyzeInto(text: string, skip: ReadonlySet<string> | null, words: number[] | null): string[] {
  const out: string[] = [];
  const lower = text.toLowerCase();
  if (!NON_ASCII.test(lower)) pushAsciiTerms(lower, out, skip, words);
  else for (const match of lower.matchAll(WORD)) if (!skip?.has(match[0])) pushWordTerms(match[0], out);
  return out;
}

/** The three searched fields of a note, in field order: title, tags, body. */
export type Fields<T> = [title: T, tags: T, body: T];
export const FIELD_NAMES: Fields<string> = ["title", "tags", "body"];

/** How often each term occurs in each field, and each field's length in terms. */
export interface TermVector {
  lengths: Fields<number>;
  counts: Map<string, Fields<number>>;
  /**
   * Per term of `counts`, in its order, the word memo's index of a word it
   * came from (-1: none), valid while the memo's generation is
   * `memoGeneration`; null when the analysis could not tell. The in-memory
   * postings find an analysed term's id by it without hashing the term
   * (memory-index.ts; docs/search-index.md, "Adding a note").
   */
  memoWords: number[] | null;
  memoGeneration: number;
}

export function termVector(title: string, tags: string[], body: string): TermVector {
  const counts = new Map<string, Fields<number>>();
  const lengths: Fields<number> = [0, 0, 0];
  const texts = [title, tags.join(" "), body];
  const memo = (wordMemo ??= new WordMemo());
  const memoGeneration = memo.generation;
  let memoWords: number[] | null = [];
  const fieldWords: number[] = [];
  for (let field = 0; field < 3; field++) {
    fieldWords.length = 0;
    const terms = analyzeInto(texts[field], null, fieldWords);
    const known = fieldWords.length === terms.length;
    lengths[field] = terms.length;
    for (let i = 0; i < terms.length; i++) {
      const term = terms[i];
      let entry = counts.get(term);
      if (!entry) {
        counts.set(term, (entry = [0, 0, 0]));
        memoWords.push(known ? fieldWords[i] : -1);
      }
      entry[field]++;
    }
  }
  // Emptied while analysing: the indexes taken before name other words now.
  if (memo.generation !== memoGeneration) memoWords = null;
  return { lengths, counts, memoWords, memoGeneration };
}
