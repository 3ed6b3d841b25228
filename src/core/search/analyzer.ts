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
  return term.length > MAX_TERM_LENGTH ? cutTerm(term) : term;
}

/**
 * A term cut to MAX_TERM_LENGTH code units, never between the two halves of
 * a surrogate pair: a lone half does not survive the stored vector's
 * decoding (it becomes U+FFFD), so the term would differ between the vector
 * a write analysed and the one stored (vector.ts).
 */
function cutTerm(term: string): string {
  return term.slice(0, (term.charCodeAt(MAX_TERM_LENGTH - 1) & 0xfc00) === 0xd800 ? MAX_TERM_LENGTH - 1 : MAX_TERM_LENGTH);
}

/**
 * Where an analysis puts its terms: every occurrence in order (`analyze`), or
 * counted per distinct term (`termVector`). `memoIndex`: the word memo's
 * index of the word the term came from, or -1.
 */
interface TermSink {
  add(term: string, memoIndex: number): void;
  /** The term `text.slice(start, end)` (a CJK pair): a counting sink makes that string only for a term new to it. */
  addRange(text: string, start: number, end: number): void;
}

/** Every occurrence, in order, into an array. */
class TermList implements TermSink {
  constructor(readonly out: string[]) {}
  add(term: string): void {
    this.out.push(term);
  }
  addRange(text: string, start: number, end: number): void {
    this.out.push(text.slice(start, end));
  }
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** Appends the terms of one word (a run of letters, digits and marks, already lower-case). */
function pushWordTerms(word: string, out: TermSink): void {
  if (ASCII_WORD.test(word)) {
    out.add(termOf(word), -1);
    return;
  }
  if (!CJK.test(word)) {
    out.add(termOf(normalise(word)), -1);
    return;
  }
  for (const [, cjk, other] of word.matchAll(CJK_RUNS)) {
    if (other !== undefined) {
      const rest = normalise(other);
      if (rest.length > 0) out.add(termOf(rest), -1);
      continue;
    }
    if (!SURROGATE.test(cjk)) {
      // One code unit a character: each pair read in place (no array of characters, no string per repeat).
      if (cjk.length === 1) out.add(cjk, -1);
      for (let i = 0; i + 1 < cjk.length; i++) out.addRange(cjk, i, i + 2);
      continue;
    }
    const chars = [...cjk];
    if (chars.length === 1) out.add(chars[0], -1);
    for (let i = 0; i + 1 < chars.length; i++) out.add(chars[i] + chars[i + 1], -1);
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
    collector?.forgetWords();
  }
}
/** Letters of the longest word the word memo keeps. */
const MAX_MEMO_WORD = 256;
/** Slots of the word memo: a power of two, twice STEM_MEMO_WORDS at least (short probe runs). */
const WORD_SLOTS = 1 << 18;
let wordMemo: WordMemo | null = null;

/**
 * pushWordTerms for every word of a lower-cased text of ASCII characters only,
 * into `list` or counted by `counter` (with the memo's index of each letter
 * word), read character by character: there a word is a run of a-z and 0-9, a word
 * of letters is stemmed and one with digits kept as it is. The same terms as
 * the pattern's way, several times faster (a note's analysis was a fifth of a
 * long note's write: docs/benchmarks.md, "Writes of ~2 KB notes").
 */
function pushAsciiTerms(lower: string, list: string[] | null, counter: TermCollector | null, skip: ReadonlySet<string> | null): void {
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
      if (term.length > MAX_TERM_LENGTH) term = cutTerm(term);
      // Two call sites, each of one kind (the hot loop of every note's analysis stays monomorphic).
      if (counter !== null) counter.add(term, letters ? memo.index : -1);
      else list!.push(term);
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
  const out: string[] = [];
  const lower = text.toLowerCase();
  if (!NON_ASCII.test(lower)) pushAsciiTerms(lower, out, null, skip);
  else {
    const list = new TermList(out);
    for (const match of lower.matchAll(WORD)) if (!skip?.has(match[0])) pushWordTerms(match[0], list);
  }
  return out;
}

/** Counts the terms of one field of a note. */
function countTerms(text: string, counter: TermCollector): void {
  const lower = text.toLowerCase();
  if (!NON_ASCII.test(lower)) pushAsciiTerms(lower, null, counter, null);
  else for (const match of lower.matchAll(WORD)) pushWordTerms(match[0], counter);
}

/** The three searched fields of a note, in field order: title, tags, body. */
export type Fields<T> = [title: T, tags: T, body: T];
export const FIELD_NAMES: Fields<string> = ["title", "tags", "body"];

/**
 * How often each distinct term of a note occurs in each field: the terms in
 * the order first met, and their counts three per term (title, tags, body) in
 * one typed array. A Map of [title, tags, body] arrays took ~200 bytes a
 * distinct term, which a note of many distinct terms (20,000 CJK characters:
 * ~14,000 pairs) held through its write, long enough for the collector to
 * move it to the old generation (docs/reliability.md, "Memory of the search
 * postings"). Iterates as [term, counts] pairs (a fresh array each).
 */
export class TermCounts implements Iterable<[string, Fields<number>]> {
  constructor(
    readonly terms: string[],
    /** Per term, at 3·i: its count in the title, the tags, the body. */
    readonly fields: Int32Array,
  ) {}

  get size(): number {
    return this.terms.length;
  }

  keys(): IterableIterator<string> {
    return this.terms.values();
  }

  /** A term's counts per field, or undefined (a scan: for tests and tools). */
  get(term: string): Fields<number> | undefined {
    const i = this.terms.indexOf(term);
    return i < 0 ? undefined : this.at(i);
  }

  /** The counts of the i-th term. */
  at(i: number): Fields<number> {
    const f = this.fields;
    return [f[3 * i], f[3 * i + 1], f[3 * i + 2]];
  }

  *[Symbol.iterator](): Generator<[string, Fields<number>]> {
    for (let i = 0; i < this.terms.length; i++) yield [this.terms[i], this.at(i)];
  }
}

/** How often each term occurs in each field, and each field's length in terms. */
export interface TermVector {
  lengths: Fields<number>;
  counts: TermCounts;
  /**
   * Per term of `counts`, in its order, the word memo's index of a word it
   * came from (-1: none), valid while the memo's generation is
   * `memoGeneration`; null when the analysis could not tell. The in-memory
   * postings find an analysed term's id by it without hashing the term
   * (memory-index.ts; docs/search-index.md, "Adding a note").
   */
  memoWords: Int32Array | null;
  memoGeneration: number;
}

/**
 * Counts a note's terms as the analysis meets them, without a Map: an
 * open-addressing table of the distinct terms (each slot its hash and the
 * term's place + 1) and, for words of the memo, the place by the memo's index
 * (no hashing). Its arrays are kept between notes (one analysis at a time:
 * analysis is synchronous); only the terms and the counts are handed out.
 */
class TermCollector implements TermSink {
  private slots = new Int32Array(2 * 1024);
  private mask = 1023;
  /** Slots filled by the current note (emptied at the next begin()). */
  private filled = new Int32Array(512);
  private terms: string[] = [];
  private counts = new Int32Array(3 * 512);
  private words = new Int32Array(512);
  /** Per memo word, the note (`note`) that last met it and the term's place in that note. */
  private wordNote = new Int32Array(0);
  private wordPlace = new Int32Array(0);
  private note = 0;
  field = 0;
  /** Terms met in the current field, repeats included. */
  length = 0;

  /** Slots of the last note (emptied by begin()). */
  private used = 0;

  begin(): void {
    const slots = this.slots;
    // (terms.length too: an analysis that threw left its terms unfinished.)
    for (let i = Math.max(this.used, this.terms.length) - 1; i >= 0; i--) slots[2 * this.filled[i]] = 0;
    this.used = 0;
    this.terms = [];
    this.forgetWords();
  }

  /** The memo words met so far name no place any more (a new note, or the memo was emptied: its indexes name other words). */
  forgetWords(): void {
    // A stamp per note: wrapping takes 2^31 notes, and a stale stamp would need a word last met that long ago.
    this.note = (this.note + 1) | 0 || 1;
  }

  add(term: string, memoIndex: number): void {
    this.length++;
    if (memoIndex >= 0 && memoIndex < this.wordNote.length && this.wordNote[memoIndex] === this.note) {
      this.counts[3 * this.wordPlace[memoIndex] + this.field]++;
      return;
    }
    let h = FNV_START;
    for (let i = 0; i < term.length; i++) h = fnvStep(h, term.charCodeAt(i));
    const place = this.place(finishHash(h), term, 0, term.length, term);
    this.counts[3 * place + this.field]++;
    if (memoIndex >= 0) this.rememberWord(memoIndex, place);
  }

  addRange(text: string, start: number, end: number): void {
    this.length++;
    let h = FNV_START;
    for (let i = start; i < end; i++) h = fnvStep(h, text.charCodeAt(i));
    // The place first: a new term may grow (replace) the counts array.
    const place = this.place(finishHash(h), text, start, end, null);
    this.counts[3 * place + this.field]++;
  }

  /** The place of the term `text[start, end)` (`term` when the caller has its string), added with zero counts when new. */
  private place(hash: number, text: string, start: number, end: number, term: string | null): number {
    const slots = this.slots;
    const terms = this.terms;
    const length = end - start;
    let slot = hash & this.mask;
    for (; ; slot = (slot + 1) & this.mask) {
      const held = slots[2 * slot];
      if (held === 0) break;
      if (held !== hash) continue;
      const place = slots[2 * slot + 1];
      const other = terms[place];
      if (other === term) return place;
      if (other.length !== length) continue;
      let i = 0;
      while (i < length && other.charCodeAt(i) === text.charCodeAt(start + i)) i++;
      if (i === length) return place;
    }
    const place = terms.length;
    terms.push(term ?? text.slice(start, end));
    if (place === this.words.length) this.growTerms();
    this.counts[3 * place] = 0;
    this.counts[3 * place + 1] = 0;
    this.counts[3 * place + 2] = 0;
    this.words[place] = -1;
    slots[2 * slot] = hash;
    slots[2 * slot + 1] = place;
    this.filled[place] = slot;
    if (2 * terms.length > this.mask + 1) this.rehash();
    return place;
  }

  private rememberWord(memoIndex: number, place: number): void {
    if (memoIndex >= this.wordNote.length) {
      const size = Math.max(1024, 2 * this.wordNote.length, memoIndex + 1);
      const notes = new Int32Array(size);
      notes.set(this.wordNote);
      const places = new Int32Array(size);
      places.set(this.wordPlace);
      this.wordNote = notes;
      this.wordPlace = places;
    }
    this.wordNote[memoIndex] = this.note;
    this.wordPlace[memoIndex] = place;
    if (this.words[place] < 0) this.words[place] = memoIndex;
  }

  private growTerms(): void {
    const size = 2 * this.words.length;
    const counts = new Int32Array(3 * size);
    counts.set(this.counts);
    this.counts = counts;
    const words = new Int32Array(size);
    words.set(this.words);
    this.words = words;
    const filled = new Int32Array(size);
    filled.set(this.filled);
    this.filled = filled;
  }

  private rehash(): void {
    const old = this.slots;
    const count = 2 * (this.mask + 1);
    this.slots = new Int32Array(2 * count);
    this.mask = count - 1;
    for (let at = 0; at < old.length; at += 2) {
      if (old[at] === 0) continue;
      let slot = old[at] & this.mask;
      while (this.slots[2 * slot] !== 0) slot = (slot + 1) & this.mask;
      this.slots[2 * slot] = old[at];
      this.slots[2 * slot + 1] = old[at + 1];
      this.filled[old[at + 1]] = slot;
    }
  }

  /** The note's distinct terms and their counts (copies: the collector's arrays are reused). */
  finish(): { counts: TermCounts; words: Int32Array } {
    const terms = this.terms;
    this.used = terms.length;
    this.terms = [];
    return { counts: new TermCounts(terms, this.counts.slice(0, 3 * terms.length)), words: this.words.slice(0, terms.length) };
  }
}
let collector: TermCollector | null = null;

export function termVector(title: string, tags: string[], body: string): TermVector {
  const lengths: Fields<number> = [0, 0, 0];
  const texts = [title, tags.join(" "), body];
  const memo = (wordMemo ??= new WordMemo());
  const memoGeneration = memo.generation;
  const terms = (collector ??= new TermCollector());
  terms.begin();
  for (let field = 0; field < 3; field++) {
    terms.field = field;
    terms.length = 0;
    countTerms(texts[field], terms);
    lengths[field] = terms.length;
  }
  const { counts, words } = terms.finish();
  // Emptied while analysing: the indexes taken before name other words now.
  return { lengths, counts, memoWords: memo.generation !== memoGeneration ? null : words, memoGeneration };
}
