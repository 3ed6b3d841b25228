// The in-memory postings and their MaxScore ranking against scoring every
// live note, through adds, removes, re-added keys and compactions (the store
// suites cover the same through a real database: test/store/).
import { expect, test } from "bun:test";
import fc from "fast-check";
import { termVector } from "../../src/core/search/analyzer.ts";
import { rankInMemory } from "../../src/core/search/maxscore.ts";
import { MemoryIndex, PostingCursor, TermPostings } from "../../src/core/search/memory-index.ts";
import { idf, scoreVector } from "../../src/core/search/ranking.ts";
import { encodeVector, noteVector, wordedVector } from "../../src/core/search/vector.ts";

const WORDS = Array.from({ length: 30 }, (_, i) => `v${i}q`);
const word = (u: number) => WORDS[Math.floor(WORDS.length * u ** 2.5)];

const textArb = (max: number) => fc.array(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), { minLength: 1, maxLength: max }).map((us) => us.map(word).join(" "));
// Sometimes a word many times over: title counts past what the packed counts hold (127), kept exactly aside.
const noteArb = fc.record({
  title: fc.tuple(textArb(5), fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 120, max: 140 }))).map(([text, repeats]) => `${text} ${"v2q ".repeat(repeats)}`),
  tags: fc.array(fc.constantFrom(...WORDS.slice(0, 6)), { maxLength: 3 }),
    body: fc.tuple(textArb(30), fc.integer({ min: 0, max: 40 })).map(([text, repeats]) => `${text} ${"v3q ".repeat(repeats)}`),
});
const opArb = fc.oneof(
  { weight: 6, arbitrary: noteArb.map((note) => ({ kind: "add" as const, note })) },
  { weight: 2, arbitrary: fc.nat().map((n) => ({ kind: "remove" as const, n })) },
  { weight: 1, arbitrary: fc.constant({ kind: "compact" as const }) },
);

function exhaustive(live: Map<number, string>, terms: string[], k: number, accept: (key: number) => boolean = () => true): { key: number; score: number }[] {
  const notes = live.size;
  const sums = [0, 0, 0];
  for (const vector of live.values()) vector.split(" ")[0].split(",").forEach((n, f) => (sums[f] += Number(n)));
  const averages = sums.map((sum) => Math.max(sum / notes, 1e-9)) as [number, number, number];
  const query = terms.flatMap((term) => {
    const holding = [...live.values()].filter((vector) => vector.includes(` ${term}:`)).length;
    return holding > 0 ? [{ term, idf: idf(notes, holding) }] : [];
  });
  const scored = [...live].filter(([key, vector]) => accept(key) && query.some((q) => vector.includes(` ${q.term}:`))).map(([key, vector]) => ({ key, score: scoreVector(vector, query, averages) }));
  scored.sort((a, b) => b.score - a.score || a.key - b.key);
  if (scored.length <= k) return scored;
  return scored.filter((s) => s.score >= scored[k - 1].score);
}

const cases = [
  { name: "small corpora", minOps: 1, maxOps: 80, runs: 300 },
  // Lists of several blocks (128 postings each), so block skips are exercised.
  { name: "corpora of several blocks per term", minOps: 600, maxOps: 1500, runs: 25 },
];

for (const { name, minOps, maxOps, runs } of cases) test(`MaxScore over the postings equals scoring every live note (adds, removes, reused keys, compaction): ${name}`, () => {
  fc.assert(
    fc.property(fc.array(opArb, { minLength: minOps, maxLength: maxOps }), fc.array(fc.tuple(fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 5 }), fc.integer({ min: 1, max: 8 })), { minLength: 1, maxLength: 6 }), (ops, queries) => {
      const index = new MemoryIndex();
      const live = new Map<number, string>();
      let nextKey = 1;
      for (const op of ops) {
        if (op.kind === "add") {
          // Keys are reused as SQLite reuses the newest deleted rowid.
          const key = live.size > 0 ? Math.max(...live.keys()) + 1 : nextKey;
          nextKey = key + 1;
          const vector = encodeVector(termVector(op.note.title, op.note.tags, op.note.body));
          expect(index.add(key, vector)).toBe(true);
          live.set(key, vector);
        } else if (op.kind === "remove" && live.size > 0) {
          const key = [...live.keys()][op.n % live.size];
          expect(index.remove(key, live.get(key)!)).toBe(true);
          live.delete(key);
        } else if (op.kind === "compact") {
          index.compact();
        }
      }
      expect(index.notes).toBe(live.size);
      for (const [terms, k] of queries) {
        const distinct = [...new Set(terms)];
        const served = rankInMemory(index, distinct, k).sort((a, b) => b.score - a.score || a.key - b.key);
        expect(served).toEqual(exhaustive(live, distinct, k));
        // A candidate filter (tag words): only accepted notes return; the statistics stay the corpus's.
        const even = (key: number) => key % 2 === 0;
        const filtered = rankInMemory(index, distinct, k, (ordinal) => even(index.keyOf(ordinal))).sort((a, b) => b.score - a.score || a.key - b.key);
        expect(filtered).toEqual(exhaustive(live, distinct, k, even));
        // Windows of a few ordinals: many windows per query, blocks straddling them, the seed windows out of order.
        for (const shift of [2, 5]) {
          expect(rankInMemory(index, distinct, k, undefined, shift).sort((a, b) => b.score - a.score || a.key - b.key)).toEqual(served);
          expect(rankInMemory(index, distinct, k, (ordinal) => even(index.keyOf(ordinal)), shift).sort((a, b) => b.score - a.score || a.key - b.key)).toEqual(filtered);
        }
      }
    }),
    { numRuns: runs },
  );
});

test("searches between writes see every note added before them: a read appends its terms' staged postings, the rest stay staged (adds, removes of staged notes, compaction)", () => {
  const queryArb = fc.tuple(fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 6 })).map(([terms, k]) => ({ kind: "query" as const, terms, k }));
  const stepArb = fc.oneof({ weight: 4, arbitrary: opArb }, { weight: 2, arbitrary: queryArb });
  fc.assert(
    fc.property(fc.array(stepArb, { minLength: 1, maxLength: 150 }), fc.constantFrom(3, 1024), (steps, stageNotes) => {
      const index = new MemoryIndex(stageNotes);
      const live = new Map<number, string>();
      let nextKey = 1;
      for (const step of steps) {
        if (step.kind === "add") {
          const vector = termVector(step.note.title, step.note.tags, step.note.body);
          expect(index.add(nextKey, vector)).toBe(true);
          live.set(nextKey++, encodeVector(vector));
        } else if (step.kind === "remove" && live.size > 0) {
          const key = [...live.keys()][step.n % live.size];
          expect(index.remove(key, live.get(key)!)).toBe(true);
          live.delete(key);
        } else if (step.kind === "compact") {
          index.compact();
        } else if (step.kind === "query") {
          const distinct = [...new Set(step.terms)];
          const expected = exhaustive(live, distinct, step.k);
          // Windows of a few ordinals too: there the (block) bounds prune, so a bound not raised by a later posting shows.
          for (const shift of [12, 2]) expect(rankInMemory(index, distinct, step.k, undefined, shift).sort((a, b) => b.score - a.score || a.key - b.key)).toEqual(expected);
          for (const term of distinct) expect(index.notesWith(term)).toBe([...live.values()].filter((vector) => vector.includes(` ${term}:`)).length);
        }
      }
      expect(index.notes).toBe(live.size);
      for (const term of WORDS) expect(index.notesWith(term)).toBe([...live.values()].filter((vector) => vector.includes(` ${term}:`)).length);
    }),
    { numRuns: 200 },
  );
});

test("a posting appended after its term's bounds were computed raises them: a later, better note in a block of weaker ones is found", () => {
  const index = new MemoryIndex();
  const filler = (n: number) => Array.from({ length: n }, (_, i) => `fq${i}`).join(" ");
  // Every body 20 terms long (the averages stay put); the first note holds the term twice, the rest once.
  index.add(0, termVector("t", [], `${filler(18)} xq xq`));
  for (let key = 1; key < 300; key++) index.add(key, termVector("t", [], `${filler(19)} xq`));
  expect(rankInMemory(index, ["xq"], 1, undefined, 2).map((r) => r.key)).toEqual([0]);
  // Staged when the next search comes: appended then, under the bounds computed above.
  index.add(300, termVector("t", [], `${filler(10)} ${"xq ".repeat(10)}`));
  expect(rankInMemory(index, ["xq"], 1, undefined, 2).map((r) => r.key)).toEqual([300]);
  expect(rankInMemory(index, ["xq"], 1).map((r) => r.key)).toEqual([300]);
});

test("vocabulary: the terms of live notes in a range, with their note counts, through many new terms, removes and a compaction", () => {
  const index = new MemoryIndex();
  const vectors = new Map<number, string>();
  const holding = new Map<string, Set<number>>();
  const add = (key: number, text: string) => {
    const vector = encodeVector(termVector(text, [], ""));
    vectors.set(key, vector);
    index.add(key, vector);
    for (const term of termVector(text, [], "").counts.keys()) (holding.get(term) ?? holding.set(term, new Set()).get(term)!).add(key);
  };
  const remove = (key: number) => {
    index.remove(key, vectors.get(key)!);
    for (const keys of holding.values()) keys.delete(key);
  };
  const expected = (from: string, to: string) =>
    [...holding].filter(([term, keys]) => term >= from && term < to && keys.size > 0).map(([term, keys]) => ({ term, doc: keys.size })).sort((a, b) => (a.term < b.term ? -1 : 1));
  const sorted = (found: { term: string; doc: number }[]) => [...found].sort((a, b) => (a.term < b.term ? -1 : 1));
  // More new terms than a lookup scans unsorted (they are merged in), then more after the merge.
  for (let key = 1; key <= 1500; key++) add(key, `zq${key.toString(36)} zqcommon`);
  expect(sorted(index.vocabulary("zq1", "zq2"))).toEqual(expected("zq1", "zq2"));
  for (let key = 1501; key <= 1600; key++) add(key, `zq${key.toString(36)} zqcommon`);
  for (let key = 1; key <= 1200; key += 2) remove(key);
  expect(sorted(index.vocabulary("zq1", "zq2"))).toEqual(expected("zq1", "zq2"));
  expect(sorted(index.vocabulary("zqc", "zqd"))).toEqual(expected("zqc", "zqd"));
  expect(index.vocabulary("zqcommon", "zqcommon0")).toEqual([{ term: "zqcommon", doc: 1000 }]);
  index.compact();
  expect(sorted(index.vocabulary("zq", "zr"))).toEqual(expected("zq", "zr"));
});

test("PostingCursor: leap and seek land on what a posting-by-posting read finds, over many blocks and every posting shape", () => {
  // Postings of every encoded shape: body only (1-3 and more), and with title and tags counts, some past one varint byte.
  const postingArb = fc.record({
    gap: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 100, max: 20_000 })),
    title: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 300 })),
    tags: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 })),
    body: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 4, max: 500 })),
  });
  fc.assert(
    fc.property(fc.array(postingArb, { minLength: 1, maxLength: 700 }), fc.array(fc.nat(), { maxLength: 40 }), fc.boolean(), (raw, picks, bySeek) => {
      const list = new TermPostings(8);
      const held: { ordinal: number; title: number; tags: number; body: number }[] = [];
      let ordinal = -1;
      for (const { gap, title, tags, body } of raw) {
        ordinal += gap;
        const counts = { title, tags, body: title === 0 && tags === 0 && body === 0 ? 1 : body };
        list.push(ordinal, counts.title, counts.tags, counts.body);
        held.push({ ordinal, ...counts });
      }
      const last = held[held.length - 1].ordinal;
      const targets = [...new Set(picks.map((p) => p % (last + 3)))].sort((a, b) => a - b);
      const cursor = new PostingCursor(list);
      for (const target of targets) {
        const found = bySeek ? cursor.seek(target) : cursor.leap(target);
        const expected = held.find((p) => p.ordinal >= target);
        expect(found).toBe(expected?.ordinal === target);
        if (!expected) {
          expect(cursor.ordinal).toBe(Infinity);
          break;
        }
        expect({ ordinal: cursor.ordinal, title: cursor.title, tags: cursor.tags, body: cursor.body }).toEqual(expected);
      }
      // And reading on from there gives the next postings in order.
      if (cursor.ordinal !== Infinity) {
        const at = held.findIndex((p) => p.ordinal === cursor.ordinal);
        for (const next of held.slice(at + 1, at + 4)) {
          expect(cursor.next()).toBe(true);
          expect({ ordinal: cursor.ordinal, title: cursor.title, tags: cursor.tags, body: cursor.body }).toEqual(next);
        }
      }
    }),
    { numRuns: 400 },
  );
});

// Query words in the body only, mostly 1-3 times (the postings' one-byte form), titles and tags of other words.
const tieNoteArb = fc.record({
  title: fc.array(fc.constantFrom(...WORDS.slice(20)), { minLength: 1, maxLength: 4 }).map((words) => words.join(" ")),
  tags: fc.constant([] as string[]),
  body: fc.array(fc.constantFrom(...WORDS.slice(0, 8), ...WORDS.slice(20)), { minLength: 1, maxLength: 12 }).map((words) => words.join(" ")),
});

test("MaxScore keeps every note tied with the k-th: corpora of a few notes repeated (scores tie exactly at the bounds' margins)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(tieNoteArb, fc.integer({ min: 1, max: 400 })), { minLength: 1, maxLength: 4 }),
      fc.array(fc.tuple(fc.array(fc.constantFrom(...WORDS.slice(0, 8)), { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 12 })), { minLength: 1, maxLength: 4 }),
      (templates, queries) => {
        const index = new MemoryIndex();
        const live = new Map<number, string>();
        let key = 1;
        // Interleaved, so that each template's copies spread over many blocks and windows.
        const left = templates.map(([, copies]) => copies);
        while (left.some((n) => n > 0)) {
          templates.forEach(([note], t) => {
            if (left[t]-- <= 0) return;
            const vector = encodeVector(termVector(note.title, note.tags, note.body));
            index.add(key, vector);
            live.set(key++, vector);
          });
        }
        for (const [terms, k] of queries) {
          const distinct = [...new Set(terms)];
          const expected = exhaustive(live, distinct, k);
          for (const shift of [2, 5, 12]) expect(rankInMemory(index, distinct, k, undefined, shift).sort((a, b) => b.score - a.score || a.key - b.key)).toEqual(expected);
        }
      },
    ),
    { numRuns: 60 },
  );
});

test("a stored vector is added with the same postings as the analysed vector it encodes (terms found by their characters in the string)", () => {
  const word = fc.constantFrom("sqlite", "wal", "mode", "node", "x86", "café", "日本語", "a1", "b", "timeout", "retry", "deadlock");
  const note = fc.record({ title: fc.array(word, { maxLength: 6 }), tags: fc.array(word, { maxLength: 3 }), body: fc.array(word, { maxLength: 40 }) });
  fc.assert(
    fc.property(fc.array(note, { minLength: 1, maxLength: 40 }), (notes) => {
      const fromStrings = new MemoryIndex(7);
      const fromCounts = new MemoryIndex(7);
      for (const [key, n] of notes.entries()) {
        const vector = termVector(n.title.join(" "), n.tags, n.body.join(" "));
        fromStrings.add(key, encodeVector(vector));
        fromCounts.add(key, vector);
      }
      const read = (index: MemoryIndex, term: string) => {
        const list = index.postings(term);
        if (!list) return null;
        const out: number[][] = [];
        for (const cursor = new PostingCursor(list); cursor.next(); ) out.push([cursor.ordinal, cursor.title, cursor.tags, cursor.body]);
        return out;
      };
      const terms = [...new Set(notes.flatMap((n) => [...termVector(n.title.join(" "), n.tags, n.body.join(" ")).counts.keys()]))];
      for (const term of terms) expect(read(fromStrings, term)).toEqual(read(fromCounts, term));
      expect(fromStrings.lengthSums).toEqual(fromCounts.lengthSums);
    }),
    { numRuns: 300 },
  );
});

test("an analysed vector's terms, and a stored vector's sent with its word indexes, are found by the word memo's indexes: the same postings as the stored vector's, across the memo emptying (between notes and within one), notes added out of analysis order, and compactions", () => {
  const words = ["sqlite", "wal", "mode", "node", "timeouts", "retrying", "deadlock", "connection", "connected", "x86", "café"];
  // A word of a-z per number: far more of them than the memo keeps (it empties at 100,000 words).
  const letters = (n: number) => {
    let out = "";
    for (let i = 0; i < 5; i++, n = Math.floor(n / 26)) out += String.fromCharCode(97 + (n % 26));
    return `zq${out}`;
  };
  const flood = (from: number, count: number) => Array.from({ length: count }, (_, i) => letters(from + i)).join(" ");
  const fromStrings = new MemoryIndex(5);
  const fromCounts = new MemoryIndex(5);
  // The stored vectors with the word indexes, as the serving thread sends them to the search thread.
  const fromWorded = new MemoryIndex(5);
  let key = 0;
  const stored = new Map<number, string>();
  // Notes analysed but added later, after others analysed since (the search thread adds in commit order, not analysis order).
  let held: (() => void)[] = [];
  const add = (title: string, body: string, hold = false) => {
    const k = key++;
    // Half analysed as a write is (noteVector: worded), half as a bare TermVector and its string (wordedVector gives the string: the stored path).
    const analysed = k % 2 === 0 ? noteVector(title, ["node"], body) : ((terms) => ({ terms, encoded: encodeVector(terms) }))(termVector(title, ["node"], body));
    const vector = analysed.terms;
    stored.set(k, analysed.encoded);
    const worded = wordedVector(analysed);
    const apply = () => {
      fromStrings.add(k, stored.get(k)!);
      fromCounts.add(k, vector);
      fromWorded.add(k, worded);
    };
    if (hold) held.push(apply);
    else apply();
  };
  const release = () => {
    for (const apply of held) apply();
    held = [];
  };
  const read = (index: MemoryIndex, term: string) => {
    const list = index.postings(term);
    if (!list) return null;
    const out: number[][] = [];
    for (const cursor = new PostingCursor(list); cursor.next(); ) out.push([cursor.ordinal, cursor.title, cursor.tags, cursor.body]);
    return out;
  };
  const check = () => {
    const terms = new Set<string>();
    for (const w of [...words, letters(3), letters(60_000), letters(150_000)]) for (const term of termVector("", [], w).counts.keys()) terms.add(term);
    for (const term of terms) {
      expect(read(fromCounts, term)).toEqual(read(fromStrings, term));
      expect(read(fromWorded, term)).toEqual(read(fromStrings, term));
    }
    expect(fromCounts.lengthSums).toEqual(fromStrings.lengthSums);
    expect(fromWorded.lengthSums).toEqual(fromStrings.lengthSums);
  };
  // The first terms, only in the first note: gone at the compaction, so every later term's id changes.
  add("firstly", "onlyfirst");
  // Words in one order, then (after the memo empties) in another, so that their new indexes name other words' terms before.
  for (let i = 0; i < 20; i++) add(words[i % words.length], words.slice(i % 5).join(" "));
  for (let i = 0; i < 6; i++) add(words[(2 * i + 1) % words.length], [...words].reverse().slice(i).join(" "), true);
  add("flood", flood(0, 60_000));
  add("flood", flood(60_000, 60_000)); // the memo empties while this note is analysed
  for (let i = 0; i < 20; i++) add(words[(7 * i + 3) % words.length], [...words].reverse().slice(i % 4).join(" "));
  release(); // analysed in the memo's generation before: their indexes name other words now
  check();
  add("flood", flood(120_000, 90_000)); // and again
  for (let i = 0; i < 20; i++) add(words[(3 * i) % words.length], words.slice(i % 3).join(" "));
  check();
  // Compaction renumbers the terms: the floods' terms go (no note holds them), and so do the first notes.
  for (const [k, vector] of stored) {
    if (k >= 21 && !vector.includes(" zq")) continue;
    for (const index of [fromStrings, fromCounts, fromWorded]) expect(index.remove(k, vector)).toBe(true);
  }
  for (const index of [fromStrings, fromCounts, fromWorded]) index.compact();
  expect(fromCounts.termCount).toBe(fromStrings.termCount);
  expect(fromWorded.termCount).toBe(fromStrings.termCount);
  expect(fromCounts.termCount).toBeLessThan(1000);
  for (let i = 0; i < 20; i++) add(words[(5 * i) % words.length], [...words].reverse().slice(i % 6).join(" "));
  check();
}, 60_000);
