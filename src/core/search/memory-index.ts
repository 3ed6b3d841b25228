// In-memory postings of the search index, engine-neutral (docs/design.md,
// "Search"; the layout: docs/search-index.md, "In-memory postings"): for each
// index term, the notes holding it in insertion order with the term's count
// in each field, compressed (one term's list: term-postings.ts), plus each
// note's field lengths and the corpus sums. Built from the stored term
// vectors (vector.ts) and kept level with the database by the engine (which
// feeds it every add and remove in commit order); ranked by maxscore.ts. One
// instance per store: nothing here is shared between connections or processes.
import type { Fields, TermVector } from "./analyzer.ts";
import { weightedFrequencyOf } from "./ranking.ts";
import { PostingStage } from "./posting-stage.ts";
import { TermTable } from "./term-table.ts";
import { BLOCK, BLOCK_SHIFT, roundUp, TermPostings } from "./term-postings.ts";
import { StoredTerms, type IndexedVector, type WordedVector } from "./vector.ts";
import { WordIds } from "./word-ids.ts";

// One term's postings and their cursor live in term-postings.ts; re-exported for the readers.
export { BLOCK_SHIFT, PostingCursor, TermPostings } from "./term-postings.ts";

/**
 * A cached largest weighted frequency stays a bound while the field averages
 * grow by at most this factor (it is multiplied by the growth); past it, the
 * largest is computed again over the postings.
 */
const BOUND_DRIFT = 1.05;

/**
 * What a posting takes, for sizing an index before building it (see
 * MemoryIndex.estimateBytes): the measured average of the bench corpora
 * (docs/search-index.md), rounded up.
 */
export const POSTING_BYTES = 2.5;
/**
 * What a term costs besides its postings (map entry and key, object, typed
 * arrays), and a note (key, lengths, live flag, key map entry, ranking
 * scratch): measured in Bun (docs/search-index.md), rounded up.
 */
export const TERM_BYTES = 240;
const COLON = 58;
const NOTE_BYTES = 100;
const NOTE_ARRAYS_BYTES = 8 + 12 + 1 + 8 + 4;

/**
 * Notes whose postings are staged before they are appended (posting-stage.ts):
 * a write's terms are looked up at once, and the postings appended term by
 * term, each term's pending postings together, when a read needs that term
 * or once this many notes are waiting (docs/search-index.md, "Adding a note":
 * a larger stage touched fewer lists on a server's writes but made the build,
 * a tight loop of adds, slower: its staging arrays no longer stayed in cache).
 */
const STAGE_NOTES = 64;
/** Or once this many postings are (the staging arrays stay small; what appending them all at once takes stays short). */
const STAGE_POSTINGS = 1 << 15;

/** The postings of every term, each note's field lengths, and the corpus sizes. */
export class MemoryIndex {
  /** Each term's id (term-table.ts): its place in `byId` and `termOf`. */
  private termIds = new TermTable(16);
  private byId: TermPostings[] = [];
  private termOf: string[] = [];
  /** Per ordinal: the note's key, its three field lengths, whether it is live. */
  private keys = new Float64Array(64);
  private fieldLengths = new Uint32Array(3 * 64);
  private live = new Uint8Array(64);
  private readonly ordinalOfKey = new Map<number, number>();
  private nextOrdinal = 0;
  private removed = 0;
  private postingBytes = 0;
  /** What the warming reads sum to (warmLists, TermTable.warm): kept so that they are not dropped as unused. */
  private sink = 0;
  /** A stored vector's terms, read at once (vector.ts), reused vector after vector. */
  private readonly storedTerms = new StoredTerms();
  /** Postings added but not yet appended to their terms' lists. */
  private readonly stage = new PostingStage();
  /** The term ids of the analyser's memo words (word-ids.ts); forgotten when ids change (compact()). */
  private readonly wordIds = new WordIds();
  /** The similar-notes lookup's per-note scratch (similar-memory.ts): partial scores, all zero between queries, and the notes touched. */
  private accumulators = new Float64Array(0);
  private touchedList = new Int32Array(0);
  /** Ranking's scratch (maxscore-state.ts owns its shape), kept between queries; null until the first search. */
  rankingScratch: unknown = null;
  /** The similar-notes lookup's log of what it reached (similar-memory.ts owns its shape); null until the first lookup. */
  similarScratch: unknown = null;
  /** Live notes. */
  notes = 0;
  /** Terms in each field, summed over live notes. */
  readonly lengthSums: Fields<number> = [0, 0, 0];

  /** @param stageNotes notes staged at most before their postings are appended (see STAGE_NOTES; benches try others). */
  constructor(private readonly stageNotes = STAGE_NOTES) {}

  /** What an index of this size holds, roughly (see `bytes`): to decide before building it. */
  static estimateBytes(postings: number, terms: number, notes: number): number {
    return postings * POSTING_BYTES + terms * TERM_BYTES + notes * (NOTE_ARRAYS_BYTES + NOTE_BYTES);
  }

  /** Sizes a term's postings for `count` notes ahead of a bulk load (each posting takes a byte at least). */
  reserve(term: string, count: number): void {
    if (this.termIds.get(term) >= 0) return;
    this.newTerm(term, new TermPostings(count + 4));
  }

  /** Shrinks every term's arrays to what they hold (after a bulk load). */
  trim(): void {
    for (const step of this.trimming()) void step;
  }

  /** trim() in steps of a few thousand terms: a generator, so that a background build yields between steps. */
  *trimming(termsPerStep = 2_000): Generator<void, void, void> {
    this.flush();
    let done = 0;
    for (const postings of this.byId) {
      this.postingBytes -= postings.trim();
      if (++done % termsPerStep === 0) yield;
    }
  }

  has(key: number): boolean {
    return this.ordinalOfKey.has(key);
  }

  /**
   * Adds a note from its vector; false (and nothing changes) when the key is
   * already held. Its postings are staged (posting-stage.ts): every method
   * that reads a term's postings or count appends that term's first, and
   * those that read every term (compact, trim, postingsBytes, termEntries)
   * append them all (`flush`).
   */
  add(key: number, vector: IndexedVector): boolean {
    if (this.ordinalOfKey.has(key)) return false;
    const ordinal = this.newOrdinal(key);
    let lengths: ArrayLike<number>;
    if (typeof vector === "string") {
      // A stored vector is read once, lengths and terms (StoredTerms), before anything is staged.
      this.storedTerms.read(vector);
      lengths = this.storedTerms.lengths;
    } else lengths = "words" in vector ? vector.words : vector.lengths;
    for (let f = 0; f < 3; f++) {
      this.fieldLengths[3 * ordinal + f] = lengths[f];
      this.lengthSums[f] += lengths[f];
    }
    this.notes++;
    if (typeof vector === "string") this.stageStored(vector, ordinal);
    else if ("words" in vector) this.stageWorded(vector, ordinal);
    else this.stageAnalysed(vector, ordinal);
    if (++this.stage.notes >= this.stageNotes || this.stage.size >= STAGE_POSTINGS) this.flush();
    return true;
  }

  /**
   * Stages the postings of a vector this process analysed: each term's id
   * found by the word memo's index of a word it came from (analyzer.ts), in
   * `wordIds`, without hashing the term; the table only for a word not seen
   * since the memo or the ids changed. A new term gets its (empty) postings now.
   */
  private stageAnalysed(vector: TermVector, ordinal: number): void {
    const words = vector.memoWords;
    if (words !== null) this.wordIds.enter(vector.memoGeneration);
    const { terms, fields } = vector.counts;
    for (let i = 0; i < terms.length; i++) {
      const word = words === null ? -1 : words[i];
      let id = this.wordIds.idOf(word);
      if (id < 0) {
        const term = terms[i];
        id = this.termIds.get(term);
        if (id < 0) id = this.newTerm(term, new TermPostings(8));
        if (word >= 0) this.wordIds.remember(word, id);
      }
      this.stage.add(id, ordinal, fields[3 * i], fields[3 * i + 1], fields[3 * i + 2]);
    }
  }

  /**
   * Stages a vector that came with the analyser's word indexes, starts and
   * counts (WordedVector): each term's id found by its word, as stageAnalysed
   * does; a term whose word is not known is found in the table by its
   * characters, read from its start to its colon.
   */
  private stageWorded({ words, chars, memoGeneration }: WordedVector, ordinal: number): void {
    this.wordIds.enter(memoGeneration);
    for (let o = 3; o < words.length; o += 5) {
      const word = words[o];
      let id = this.wordIds.idOf(word);
      if (id < 0) {
        const start = words[o + 1];
        let end = start;
        while (end < chars.length && chars[end] !== COLON) end++;
        const term = String.fromCharCode.apply(null, chars.subarray(start, end) as unknown as number[]);
        id = this.termIds.get(term);
        if (id < 0) id = this.newTerm(term, new TermPostings(8));
        if (word >= 0) this.wordIds.remember(word, id);
      }
      this.stage.add(id, ordinal, words[o + 2], words[o + 3], words[o + 4]);
    }
  }

  /**
   * Stages the postings of every term of a stored vector (read by add() in one pass,
   * each term hashed as it is read: vector.ts's StoredTerms), each term found
   * in the table by its characters in the vector: a string of its own only
   * for a term new to the index. A build, and a follower for every note
   * another process writes, add stored vectors this way (docs/benchmarks.md,
   * "Stored vectors added without a string per term", "Adding notes in passes").
   */
  private stageStored(vector: string, ordinal: number): void {
    const parsed = this.storedTerms;
    const { count, start, end, hash, counts } = parsed;
    const table = this.termIds;
    // Every term's slot read first, its misses overlapping (TermTable.warm), then each found.
    this.sink = table.warm(hash, count);
    for (let i = 0; i < count; i++) {
      let id = table.getHashed(hash[i], vector, start[i], end[i]);
      if (id < 0) id = this.newTerm(vector.slice(start[i], end[i]), new TermPostings(8));
      this.stage.add(id, ordinal, counts[3 * i], counts[3 * i + 1], counts[3 * i + 2]);
    }
  }

  /**
   * Appends every staged posting, one term at a time (each term's postings in
   * the order added, so ordinals ascend): a term held by several of the
   * staged notes has its postings, arrays and bound touched once for all of
   * them, not once per note (the write side's cost is memory latency:
   * docs/benchmarks.md).
   */
  flush(): void {
    if (this.stage.size === 0) return;
    this.sink = this.warmLists(this.stage.touchedIds(), this.stage.touchedTerms);
    this.stage.drain((id) => this.appendStaged(id));
  }

  /**
   * Reads, for each term about to be appended, its postings object, its
   * array's header and the byte where its next posting goes, in two loops
   * whose loads do not wait on each other: their cache misses overlap, where
   * appending one term after another took them one at a time (the append's
   * cost is memory latency: docs/benchmarks.md, "Adding notes in passes").
   * Returns a value only so that the reads are not dropped.
   */
  private warmLists(ids: Int32Array, count: number): number {
    const byId = this.byId;
    let sink = 0;
    for (let i = 0; i < count; i++) {
      const postings = byId[ids[i]];
      sink += postings.length + postings.data.length;
    }
    for (let i = 0; i < count; i++) {
      const postings = byId[ids[i]];
      const data = postings.data;
      const at = postings.length;
      if (at < data.length) sink += data[at];
    }
    return sink;
  }

  /** Appends the staged postings of term `id` not appended yet. */
  private appendStaged(id: number): void {
    const stage = this.stage;
    const from = stage.take(id);
    if (from < 0) return;
    const { ordinal: ordinals, counts, next } = stage;
    const lengths = this.fieldLengths;
    const postings = this.byId[id];
    const averages = postings.boundAverages;
    if (!averages) {
      // No bound to raise (no query has read the term yet): the whole chain in one run.
      this.postingBytes += postings.pushChain(ordinals, counts, next, from);
      return;
    }
    let grown = 0;
    for (let at = from; at >= 0; at = next[at]) {
      const ordinal = ordinals[at];
      const title = counts[3 * at];
      const tags = counts[3 * at + 1];
      const body = counts[3 * at + 2];
      grown += postings.push(ordinal, title, tags, body);
      postings.notes++;
      const o = 3 * ordinal;
      postings.raiseBound(weightedFrequencyOf(title, tags, body, lengths[o], lengths[o + 1], lengths[o + 2], averages));
    }
    this.postingBytes += grown;
  }

  /**
   * Removes a note; `vector` must be the one it was added with (the terms
   * whose counts drop). Its postings stay, skipped as dead, until compact().
   */
  remove(key: number, vector: string): boolean {
    const ordinal = this.ordinalOfKey.get(key);
    if (ordinal === undefined) return false;
    this.ordinalOfKey.delete(key);
    this.live[ordinal] = 0;
    this.removed++;
    this.notes--;
    for (let f = 0; f < 3; f++) this.lengthSums[f] -= this.fieldLengths[3 * ordinal + f];
    const parsed = this.storedTerms;
    const count = parsed.read(vector);
    const { start, end, hash } = parsed;
    for (let i = 0; i < count; i++) {
      const id = this.termIds.getHashed(hash[i], vector, start[i], end[i]);
      if (id < 0) continue;
      // Its staged postings (this note's among them, maybe) first: the count is of appended postings.
      this.appendStaged(id);
      this.byId[id].notes--;
    }
    if (this.removed > 1024 && this.removed > this.nextOrdinal / 4) this.compact();
    return true;
  }

  postings(term: string): TermPostings | undefined {
    const postings = this.termPostings(term);
    return postings && postings.notes > 0 ? postings : undefined;
  }

  /** How many live notes hold `term`. */
  notesWith(term: string): number {
    return this.termPostings(term)?.notes ?? 0;
  }

  /** A term's postings with its staged postings appended (live notes or not). */
  private termPostings(term: string): TermPostings | undefined {
    const id = this.termIds.get(term);
    if (id < 0) return undefined;
    this.appendStaged(id);
    return this.byId[id];
  }

  /** Every term in code-unit order, but for `newTerms`: those added since, merged in when a lookup finds them many. */
  private sortedTerms: string[] = [];
  private newTerms: string[] = [];

  private newTerm(term: string, postings: TermPostings): number {
    const id = this.byId.length;
    this.termIds.add(term, id);
    this.byId.push(postings);
    this.termOf.push(term);
    this.newTerms.push(term);
    this.postingBytes += postings.bytes;
    this.stage.addTerm(id);
    return id;
  }

  /** Terms in [from, to) that live notes hold, with how many (typo correction). */
  vocabulary(from: string, to: string): { term: string; doc: number }[] {
    if (this.newTerms.length > 1024) {
      this.sortedTerms = mergeSorted(this.sortedTerms, this.newTerms.sort());
      this.newTerms = [];
    }
    const found: { term: string; doc: number }[] = [];
    const take = (term: string) => {
      const notes = this.notesWith(term);
      if (notes > 0) found.push({ term, doc: notes });
    };
    const sorted = this.sortedTerms;
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (sorted[middle] < from) low = middle + 1;
      else high = middle;
    }
    for (let at = low; at < sorted.length && sorted[at] < to; at++) take(sorted[at]);
    for (const term of this.newTerms) if (term >= from && term < to) take(term);
    return found;
  }

  keyOf(ordinal: number): number {
    return this.keys[ordinal];
  }

  isLive(ordinal: number): boolean {
    return this.live[ordinal] === 1;
  }

  /** Per ordinal: 1 while the note is live. */
  get liveFlags(): Uint8Array {
    return this.live;
  }

  /** Field lengths of every ordinal, three per ordinal (title, tags, body). */
  get lengths(): Uint32Array {
    return this.fieldLengths;
  }

  /** Bytes of the postings' arrays alone (encoded postings, skip entries). */
  get postingsBytes(): number {
    this.flush();
    return this.postingBytes;
  }

  /** Distinct terms held. */
  get termCount(): number {
    return this.byId.length;
  }

  /** Every term and its postings (benches and dumps). */
  termEntries(): [term: string, postings: TermPostings][] {
    this.flush();
    return this.byId.map((postings, id) => [this.termOf[id], postings]);
  }

  /** Ordinals handed out so far (live or not). */
  get ordinals(): number {
    return this.nextOrdinal;
  }

  /** The similar-notes lookup's scratch: one accumulator per ordinal (all zero between queries) and room to list the notes touched. */
  scratch(): { accumulators: Float64Array; touched: Int32Array } {
    if (this.accumulators.length < this.nextOrdinal) {
      this.accumulators = new Float64Array(this.keys.length);
      this.touchedList = new Int32Array(this.keys.length);
    }
    return { accumulators: this.accumulators, touched: this.touchedList };
  }

  /**
   * Approximate heap bytes held (postings arrays, per-term and per-note
   * overheads, ranking scratch); staged postings counted at the average a
   * posting takes (checked after every add: it does not append them).
   */
  get bytes(): number {
    const staging = this.stage.bytes + this.wordIds.bytes + this.stage.size * POSTING_BYTES;
    return this.postingBytes + staging + this.byId.length * TERM_BYTES + this.keys.length * NOTE_ARRAYS_BYTES + this.ordinalOfKey.size * NOTE_BYTES;
  }

  /**
   * Makes the term's bound (`maxWeighted`: the largest weighted frequency of
   * its notes) valid under these averages once multiplied by the factor
   * returned. It is kept with the averages it was computed under; the factor
   * is how much any field average has grown since (a field's normalised
   * frequency grows at most in proportion to its average); past BOUND_DRIFT it
   * is computed again. `postings` as postings() returned it: its staged
   * postings appended then, and any appended later raise the bounds as they
   * come (appendStaged).
   */
  bounds(postings: TermPostings, averages: Fields<number>): number {
    const cachedUnder = postings.boundAverages;
    if (cachedUnder) {
      let drift = 1;
      for (let f = 0; f < 3; f++) drift = Math.max(drift, averages[f] / cachedUnder[f]);
      if (drift <= BOUND_DRIFT) return drift;
    }
    const lengths = this.fieldLengths;
    const live = this.live;
    postings.maxWeighted = 0;
    postings.blockMax = new Float32Array(Math.ceil(postings.size / BLOCK));
    postings.boundAverages = [averages[0], averages[1], averages[2]];
    const blockMax = postings.blockMax;
    let at = 0;
    postings.forEach((ordinal, title, tags, body) => {
      const block = at++ >> BLOCK_SHIFT;
      if (live[ordinal] === 0) return;
      const o = 3 * ordinal;
      const weighted = weightedFrequencyOf(title, tags, body, lengths[o], lengths[o + 1], lengths[o + 2], averages);
      if (weighted > postings.maxWeighted) postings.maxWeighted = weighted;
      const bound = roundUp(weighted);
      if (bound > blockMax[block]) blockMax[block] = bound;
    });
    return 1;
  }

  private newOrdinal(key: number): number {
    const ordinal = this.nextOrdinal++;
    if (ordinal === this.keys.length) this.growNotes(Math.ceil(this.keys.length * 1.5));
    this.keys[ordinal] = key;
    this.live[ordinal] = 1;
    this.ordinalOfKey.set(key, ordinal);
    return ordinal;
  }

  private growNotes(capacity: number): void {
    const keys = new Float64Array(capacity);
    keys.set(this.keys.subarray(0, this.nextOrdinal));
    const lengths = new Uint32Array(3 * capacity);
    lengths.set(this.fieldLengths.subarray(0, 3 * this.nextOrdinal));
    const live = new Uint8Array(capacity);
    live.set(this.live.subarray(0, this.nextOrdinal));
    this.keys = keys;
    this.fieldLengths = lengths;
    this.live = live;
  }

  /** Drops dead postings and renumbers live notes densely (order kept); terms no note holds go. */
  compact(): void {
    this.flush();
    this.compactPostings();
    this.sortedTerms = [...this.termOf].sort();
    this.newTerms = [];
  }

  private compactPostings(): void {
    const renumbered = new Int32Array(this.nextOrdinal).fill(-1);
    let next = 0;
    for (let ordinal = 0; ordinal < this.nextOrdinal; ordinal++) {
      if (this.live[ordinal] === 0) continue;
      renumbered[ordinal] = next;
      this.keys[next] = this.keys[ordinal];
      this.fieldLengths.copyWithin(3 * next, 3 * ordinal, 3 * ordinal + 3);
      this.live[next] = 1;
      this.ordinalOfKey.set(this.keys[next], next);
      next++;
    }
    this.live.fill(0, next, this.nextOrdinal);
    this.wordIds.clear();
    this.nextOrdinal = next;
    this.removed = 0;
    this.postingBytes = 0;
    const byId = this.byId;
    const termOf = this.termOf;
    this.byId = [];
    this.termOf = [];
    this.termIds = new TermTable(byId.length);
    for (let id = 0; id < byId.length; id++) {
      const postings = byId[id];
      const term = termOf[id];
      if (postings.notes <= 0) continue;
      const fresh = new TermPostings(postings.length);
      postings.forEach((old, title, tags, body) => {
        const ordinal = renumbered[old];
        if (ordinal >= 0) fresh.push(ordinal, title, tags, body);
      });
      fresh.notes = postings.notes;
      fresh.trim();
      // The bound is computed again on the next query that needs it.
      this.termIds.add(term, this.byId.length);
      this.byId.push(fresh);
      this.termOf.push(term);
      this.postingBytes += fresh.bytes;
    }
  }
}

/** Two sorted lists as one. */
function mergeSorted(a: string[], b: string[]): string[] {
  const out = new Array<string>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = a[i] <= b[j] ? a[i++] : b[j++];
  while (i < a.length) out[k++] = a[i++];
  while (j < b.length) out[k++] = b[j++];
  return out;
}
