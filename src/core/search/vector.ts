// A note's term vector as one string an engine stores beside the note:
//   "<title terms>,<tag terms>,<body terms> term:t,g,b term:n …"
// (field lengths, then each distinct term with its count per field, or just
// its body count when it is in the body only, the common case). Terms hold
// only letters, digits and marks, so a space and a colon delimit them, and a
// query term is found with one indexOf instead of parsing the whole vector.
import { termVector, type Fields, type TermVector } from "./analyzer.ts";
import { finishHash, FNV_START, fnvStep } from "./term-table.ts";
import { grownInt32 } from "./typed-arrays.ts";

/**
 * A note's term vector analysed once per write (core/service.ts) and handed
 * to both the similar-notes lookup and the store: the counts and their
 * stored form.
 */
export interface NoteVector {
  terms: TermVector;
  encoded: string;
  /**
   * Kept when the analysis kept its word indexes (wordedVector packs them):
   * where each term starts in `encoded`, in the terms' order, and `encoded`'s
   * code units (both as encodeVector wrote them).
   */
  starts?: Int32Array;
  chars?: Uint16Array;
}

export function noteVector(title: string, tags: string[], body: string): NoteVector {
  const terms = termVector(title, tags, body);
  if (terms.memoWords === null) return { terms, encoded: encodeVector(terms) };
  const starts = new Int32Array(terms.counts.size);
  const encoded = encodeVector(terms, starts);
  // The buffer encodeVector wrote into holds the code units until the next encoding.
  return { terms, encoded, starts, chars: vectorBuffer.slice(0, encoded.length) };
}

/**
 * The stored form, written into one reused buffer and decoded once: built by
 * concatenation, a note of 14,000 distinct terms (20,000 CJK characters) made
 * ~28,000 intermediate strings first (docs/reliability.md, "Memory of the
 * search postings").
 */
export function encodeVector({ lengths, counts: { terms, fields } }: TermVector, starts?: Int32Array): string {
  const out = new VectorWriter();
  out.int(lengths[0]);
  out.char(44);
  out.int(lengths[1]);
  out.char(44);
  out.int(lengths[2]);
  for (let i = 0; i < terms.length; i++) {
    const term = terms[i];
    out.room(term.length + 36);
    out.char(32);
    if (starts) starts[i] = out.length;
    for (let k = 0; k < term.length; k++) out.char(term.charCodeAt(k));
    out.char(58);
    const t = fields[3 * i];
    const g = fields[3 * i + 1];
    if (t !== 0 || g !== 0) {
      out.int(t);
      out.char(44);
      out.int(g);
      out.char(44);
    }
    out.int(fields[3 * i + 2]);
  }
  return out.done();
}

let vectorBuffer = new Uint16Array(4096);
const utf16 = new TextDecoder("utf-16le");

/** UTF-16 code units into the shared buffer (one vector at a time: encoding is synchronous). */
class VectorWriter {
  private at = 0;
  private buffer = vectorBuffer;

  /** Makes room for `more` code units (callers ask before each term; a field length needs at most 10). */
  room(more: number): void {
    if (this.at + more <= this.buffer.length) return;
    const grown = new Uint16Array(Math.max(2 * this.buffer.length, this.at + more));
    grown.set(this.buffer.subarray(0, this.at));
    this.buffer = vectorBuffer = grown;
  }

  char(code: number): void {
    this.buffer[this.at++] = code;
  }

  /** Code units written. */
  get length(): number {
    return this.at;
  }

  /** A non-negative integer in decimal (at most 10 digits). */
  int(value: number): void {
    this.room(11);
    let digits = 1;
    for (let v = value; v >= 10; v = Math.floor(v / 10)) digits++;
    let at = this.at + digits;
    this.at = at;
    let v = value;
    do {
      this.buffer[--at] = 48 + (v % 10);
      v = Math.floor(v / 10);
    } while (v > 0);
  }

  done(): string {
    return utf16.decode(this.buffer.subarray(0, this.at));
  }
}

function readInt(text: string, from: number): [value: number, next: number] {
  let value = 0;
  let i = from;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) break;
    value = value * 10 + c;
  }
  return [value, i + 1];
}

function readTriple(text: string, from: number): Fields<number> {
  const [a, i] = readInt(text, from);
  if (text.charCodeAt(i - 1) !== 44 /* , */) return [0, 0, a];
  const [b, j] = readInt(text, i);
  const [c] = readInt(text, j);
  return [a, b, c];
}

export const readLengths = (vector: string): Fields<number> => readTriple(vector, 0);

/** A term's counts per field in a stored vector, or null when the note lacks it. */
export function termCounts(vector: string, term: string): Fields<number> | null {
  const at = vector.indexOf(` ${term}:`);
  return at < 0 ? null : readTriple(vector, at + term.length + 2);
}

/** How many distinct terms a stored vector holds (one space before each), without splitting it. */
export function termCount(vector: string): number {
  let terms = 0;
  for (let at = vector.indexOf(" "); at >= 0; at = vector.indexOf(" ", at + 1)) terms++;
  return terms;
}

/** The distinct terms of a stored vector. */
export function vectorTerms(vector: string): string[] {
  const terms: string[] = [];
  for (const entry of vector.split(" ").slice(1)) terms.push(entry.slice(0, entry.lastIndexOf(":")));
  return terms;
}

/**
 * A vector as the in-memory postings take it: stored (a string read from the
 * database), as this process analysed it for its own write (no parsing, and
 * its terms are the analyser's strings, hashed already), or stored with the
 * analyser's word indexes (WordedVector: what the serving thread sends the
 * search thread).
 */
export type IndexedVector = string | TermVector | WordedVector;

/**
 * A stored vector with what the analysis knew of it, in one buffer: `words`,
 * the three field lengths, then per term in its stored order the index of a
 * word it came from in the analysing thread's word memo (TermVector.memoWords,
 * -1: none), where the term starts in `chars`, and its counts in the title,
 * the tags and the body; then `chars`, the stored vector's code units
 * (encodeVector's form); plus that memo's generation. The search thread finds
 * a term it met before by that index (memory-index.ts), without reading the
 * term table, whose slots are a cache miss each, and takes the lengths and
 * counts from the array; it reads a term's characters only when it does not
 * know its word (docs/design.md, "The search thread"). One buffer a note, and
 * no string: the serving thread moves it to the search thread (SearchThread.
 * committed), where a string or a second array each cost a clone.
 */
export interface WordedVector {
  words: Int32Array;
  chars: Uint16Array;
  memoGeneration: number;
}

const wordedAt = (i: number): number => 3 + 5 * i;

/**
 * The form the search thread takes a written note in: worded when noteVector
 * kept the word indexes, the term starts and the code units; else the stored
 * string (which it parses).
 */
export function wordedVector({ encoded, terms, starts, chars }: NoteVector): string | WordedVector {
  const memoWords = terms.memoWords;
  if (memoWords === null || starts === undefined || chars === undefined) return encoded;
  const fields = terms.counts.fields;
  const count = memoWords.length;
  const ints = wordedAt(count);
  const buffer = new ArrayBuffer(4 * ints + 2 * chars.length);
  const words = new Int32Array(buffer, 0, ints);
  const units = new Uint16Array(buffer, 4 * ints, chars.length);
  units.set(chars);
  words[0] = terms.lengths[0];
  words[1] = terms.lengths[1];
  words[2] = terms.lengths[2];
  for (let i = 0, o = 3; i < count; i++, o += 5) {
    words[o] = memoWords[i];
    words[o + 1] = starts[i];
    words[o + 2] = fields[3 * i];
    words[o + 3] = fields[3 * i + 1];
    words[o + 4] = fields[3 * i + 2];
  }
  return { words, chars: units, memoGeneration: terms.memoGeneration };
}

/** Calls `each` with every term of a stored vector and its counts per field (title, tags, body), in stored order. */
export function forEachTerm(vector: string, each: (term: string, title: number, tags: number, body: number) => void): void {
  forEachTermAt(vector, (start, end, title, tags, body) => each(vector.slice(start, end), title, tags, body));
}

/**
 * forEachTerm with each term given by where it stands in `vector` (`start`,
 * `end`) instead of as a string of its own: for a reader that finds terms by
 * their characters (memory-index.ts adds stored vectors so).
 */
export function forEachTermAt(vector: string, each: (start: number, end: number, title: number, tags: number, body: number) => void): void {
  let at = vector.indexOf(" ");
  while (at >= 0) {
    const end = vector.indexOf(" ", at + 1);
    const stop = end < 0 ? vector.length : end;
    const colon = vector.lastIndexOf(":", stop);
    const [a, i] = readInt(vector, colon + 1);
    if (i - 1 < stop && vector.charCodeAt(i - 1) === 44 /* , */) {
      const [g, j] = readInt(vector, i);
      const [b] = readInt(vector, j);
      each(at + 1, colon, a, g, b);
    } else {
      each(at + 1, colon, 0, 0, a);
    }
    at = end;
  }
}

/**
 * A stored vector's terms read in one pass over its characters, for adding it
 * to the in-memory postings (memory-index.ts): where each term stands in the
 * vector, its hash as the term table computes it (term-table.ts), and its
 * counts per field. One instance is reused vector after vector: no string or
 * array is made per term (docs/benchmarks.md, "Adding notes in passes").
 */
export class StoredTerms {
  /** Terms read from the last vector. */
  count = 0;
  start = new Int32Array(256);
  end = new Int32Array(256);
  hash = new Int32Array(256);
  /** Per term: title, tags, body. */
  counts = new Int32Array(3 * 256);
  /** The vector's field lengths (title, tags, body), as readLengths reads them. */
  readonly lengths = new Int32Array(3);

  /** Reads the field lengths and every term of `vector` (the form written by encodeVector); returns how many terms. */
  read(vector: string): number {
    const length = vector.length;
    let i = 0;
    for (let f = 0; f < 3; f++) {
      let value = 0;
      let c = vector.charCodeAt(i);
      while (c >= 48 && c <= 57) {
        value = value * 10 + c - 48;
        c = vector.charCodeAt(++i);
      }
      this.lengths[f] = value;
      if (c !== 44) break;
      i++;
    }
    let n = 0;
    let at = vector.indexOf(" ", i);
    while (at >= 0) {
      if (n === this.start.length) this.grow();
      // The term: up to its colon (terms hold no colon or space), hashed on the way.
      let i = at + 1;
      let h = FNV_START;
      let c = vector.charCodeAt(i);
      while (c !== 58 && i < length) {
        h = fnvStep(h, c);
        c = vector.charCodeAt(++i);
      }
      this.start[n] = at + 1;
      this.end[n] = i;
      this.hash[n] = finishHash(h);
      // Its counts: "t,g,b" or just "b".
      let a = 0;
      c = vector.charCodeAt(++i);
      while (c >= 48 && c <= 57) {
        a = a * 10 + c - 48;
        c = vector.charCodeAt(++i);
      }
      const k = 3 * n;
      if (c === 44) {
        let g = 0;
        c = vector.charCodeAt(++i);
        while (c >= 48 && c <= 57) {
          g = g * 10 + c - 48;
          c = vector.charCodeAt(++i);
        }
        let b = 0;
        c = vector.charCodeAt(++i);
        while (c >= 48 && c <= 57) {
          b = b * 10 + c - 48;
          c = vector.charCodeAt(++i);
        }
        this.counts[k] = a;
        this.counts[k + 1] = g;
        this.counts[k + 2] = b;
      } else {
        this.counts[k] = 0;
        this.counts[k + 1] = 0;
        this.counts[k + 2] = a;
      }
      n++;
      at = c === 32 ? i : -1;
    }
    this.count = n;
    return n;
  }

  private grow(): void {
    const size = 2 * this.start.length;
    this.start = grownInt32(this.start, size);
    this.end = grownInt32(this.end, size);
    this.hash = grownInt32(this.hash, size);
    this.counts = grownInt32(this.counts, 3 * size);
  }
}
