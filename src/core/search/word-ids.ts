// The term ids of the analyser's memo words (analyzer.ts), for MemoryIndex:
// a vector analysed in this process (TermVector.memoWords) or sent with its
// word indexes (WordedVector) names each term by the index of the memo word
// it came from, so a term met before is found by one array read instead of a
// probe of the term table. Valid for one generation of the memo at a time,
// and only while the index's term ids stand (compact() renumbers them).

export class WordIds {
  /** Per memo word (by its index there), the id + 1 of the term it gives; 0: not known yet. */
  private idOfWord = new Int32Array(0);
  private generation = -1;

  /** The ids from here on are of the memo's generation `generation` (all forgotten when they were of another). */
  enter(generation: number): void {
    if (generation === this.generation) return;
    this.idOfWord.fill(0);
    this.generation = generation;
  }

  /** The id of the term memo word `word` gives (-1: none known, or no word). */
  idOf(word: number): number {
    return word >= 0 && word < this.idOfWord.length ? this.idOfWord[word] - 1 : -1;
  }

  remember(word: number, id: number): void {
    if (word >= this.idOfWord.length) {
      const grown = new Int32Array(Math.max(1024, 2 * this.idOfWord.length, word + 1));
      grown.set(this.idOfWord);
      this.idOfWord = grown;
    }
    this.idOfWord[word] = id + 1;
  }

  /** Every id forgotten (the term ids changed). */
  clear(): void {
    this.idOfWord.fill(0);
  }

  get bytes(): number {
    return this.idOfWord.length * 4;
  }
}
