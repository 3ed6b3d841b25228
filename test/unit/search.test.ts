// The pure search rules of src/core/search/: query words, analysis (with
// CJK pairs), term vectors, safe FTS5 expressions, the Porter stemmer
// (checked against SQLite's own), edit distance and typo correction.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { analyze, termVector } from "../../src/core/search/analyzer.ts";
import { porterStem } from "../../src/core/search/porter.ts";
import { MAX_QUERY_WORDS, STOPWORDS, queryTerms, queryWords, searchRequest } from "../../src/core/search/query.ts";
import { bestCorrection, correctable, correctionRanges, editDistance } from "../../src/core/search/typos.ts";
import { encodeVector, readLengths, termCounts, vectorTerms } from "../../src/core/search/vector.ts";
import { matchExpression } from "../../src/store/sqlite/search.ts";

describe("query words", () => {
  test("every distinct word of the query is kept for queryTerms to pick from", () => {
    expect(searchRequest("How to make SQLite handle concurrent writes", 10).words).toEqual(["how", "to", "make", "sqlite", "handle", "concurrent", "writes"]);
    expect(searchRequest("it is what it is", 10).words).toEqual(["it", "is", "what"]);
    const long = searchRequest(`${"the a of to in ".repeat(5)} ${Array.from({ length: 20 }, (_, i) => `w${i}`).join(" ")}`, 10);
    expect(long.words).toEqual(["the", "a", "of", "to", "in", ...Array.from({ length: 20 }, (_, i) => `w${i}`)]);
    for (const word of STOPWORDS) expect(word).toMatch(/^[a-z]+$/);
    expect(searchRequest("!!! ???", 10)).toEqual({ words: [], tags: [], limit: 10 });
  });

  test("past 16 words found, the rarest are searched (ties: the earlier); words in no note take no place", async () => {
    // w0 is in 100 notes, w1 in 99, … w19 in 81; "the" in 1,000; the nohit words in none.
    const notes = new Map<string, number>([["the", 1000], ...Array.from({ length: 20 }, (_, i): [string, number] => [`w${i}`, 100 - i])]);
    const source = {
      tierCounts: (terms: string[]) => terms.map((term) => [notes.get(term) ?? 0]),
      vocabulary: () => [],
    };
    const words = ["the", ...Array.from({ length: 20 }, (_, i) => `w${i}`)];
    expect(await queryTerms(source, words)).toEqual(Array.from({ length: 16 }, (_, i) => `w${i + 4}`));
    const nohits = Array.from({ length: 16 }, (_, i) => `nohit${i}x`);
    expect(await queryTerms(source, [...nohits, "w3"])).toEqual(["w3"]);
    // Ties keep the earlier word.
    const tied = Array.from({ length: 18 }, (_, i) => `t${i}`);
    for (const word of tied) notes.set(word, 5);
    expect(await queryTerms(source, tied)).toEqual(tied.slice(0, 16));
    expect(MAX_QUERY_WORDS).toBe(16);
  });

  test("tag words: `tag:NAME` with a valid tag in any case restricts; every other use of `:` is plain words", () => {
    expect(searchRequest("tag:SQLite wal", 10)).toEqual({ words: ["wal"], tags: ["sqlite"], limit: 10 });
    expect(searchRequest("TAG:c++ Tag:node.js tag:c++ x", 10)).toEqual({ words: ["x"], tags: ["c++", "node.js"], limit: 10 });
    expect(searchRequest("tag:rust", 10)).toEqual({ words: [], tags: ["rust"], limit: 10 });
    // Not a valid tag: plain words.
    for (const [query, words] of [
      ["tag:", ["tag"]],
      ["tag:-x", ["tag", "x"]],
      ["tag:a/b", ["tag", "a", "b"]],
      ["tag:é", ["tag", "é"]],
      [`tag:${"a".repeat(33)}`, ["tag", "a".repeat(33)]],
      ["title:quasar", ["title", "quasar"]],
      ["xtag:rust", ["xtag", "rust"]],
      ["(tag:rust)", ["tag", "rust"]],
      ["tag::rust", ["tag", "rust"]],
    ] as [string, string[]][]) {
      expect(searchRequest(query, 10)).toEqual({ words, tags: [], limit: 10 });
    }
    expect(searchRequest(`tag:${"a".repeat(32)}`, 10).tags).toEqual(["a".repeat(32)]);
  });

  test("any input gives words of letters, digits and marks only, and FTS5 expressions of quoted terms", () => {
    const hostile = [
      '"', '""', "'", "*", "quasar*", ":", "title:quasar", "-quasar", "NEAR(quasar cache, 2)", "(", ")", "^x", "{title body}: q",
      "a AND b OR c NOT d", "😀 🦀", "\u0000x\u0000", "\ud800", "e\u0301", "İstanbul ß ẞ", "مرحبا", "'; DROP TABLE posts; --",
      Array.from({ length: 40 }, (_, i) => `w${i}`).join(" "),
    ];
    const shape = /^[("t]/;
    for (const query of hostile) {
      const request = searchRequest(query, 10);
      for (const word of request.words) {
        expect(word).toMatch(/^[\p{L}\p{N}\p{M}]+$/u);
        for (const term of analyze(word)) {
          expect(term).toMatch(/^[\p{L}\p{N}\p{M}]+$/u);
          expect(matchExpression({ term, tiers: [3] }, [{ term: "x", tiers: [2, 3] }], [{ term: "y", tiers: null }])).toMatch(shape);
        }
      }
    }
    const all = (term: string) => ({ term, tiers: null });
    expect(matchExpression(all("a"), [], null)).toBe('"a"');
    expect(matchExpression({ term: "a", tiers: [1] }, [{ term: "b", tiers: [3, 2] }, all("c")], [all("d")])).toBe('(t1 : "a" NOT ({t3 t2} : "b" OR "c")) AND ("d")');
  });
});

describe("analysis", () => {
  test("words are lower-cased, Latin accents dropped, English words stemmed", () => {
    expect(analyze("SQLite deadlocks in WAL mode")).toEqual(["sqlite", "deadlock", "in", "wal", "mode"]);
    expect(analyze("Café naïve RÉSUMÉ")).toEqual(["cafe", "naiv", "resum"]);
    expect(analyze("SQLITE_BUSY: x509 tokio::spawn")).toEqual(["sqlite", "busi", "x509", "tokio", "spawn"]);
    expect(analyze("мир Straße")).toEqual(["мир", "straße"]);
  });

  test("CJK runs become overlapping pairs, so a word inside a sentence is found", () => {
    expect(analyze("日本語のテキスト")).toEqual(["日本", "本語", "語の", "のテ", "テキ", "キス", "スト"]);
    expect(analyze("日本語")).toEqual(["日本", "本語"]);
    expect(analyze("日")).toEqual(["日"]);
    expect(analyze("Rust和Go")).toEqual(["rust", "和", "go"]);
    for (const term of analyze("日本語")) expect(analyze("日本語のテキスト")).toContain(term);
  });

  test("a term vector round-trips through its stored form", () => {
    const vector = termVector("Deadlocks in WAL", ["sqlite", "wal"], "A deadlock. Another deadlock!");
    const stored = encodeVector(vector);
    expect(readLengths(stored)).toEqual([3, 2, 4]);
    expect(termCounts(stored, "deadlock")).toEqual([1, 0, 2]);
    expect(termCounts(stored, "wal")).toEqual([1, 1, 0]);
    expect(termCounts(stored, "anoth")).toEqual([0, 0, 1]); // body only: stored as its body count
    expect(stored).toContain(" anoth:1");
    expect(termCounts(stored, "dead")).toBeNull();
    expect(vectorTerms(stored).sort()).toEqual(["a", "anoth", "deadlock", "in", "sqlite", "wal"]);
  });
});

describe("porter stemming", () => {
  test("known stems", () => {
    const cases: Record<string, string> = {
      caresses: "caress", ponies: "poni", cats: "cat", agreed: "agre", hopping: "hop", hoping: "hope", falling: "fall",
      relational: "relat", conditional: "condit", digitizer: "digit", operator: "oper", triplicate: "triplic", formalize: "formal",
      replacement: "replac", adoption: "adopt", database: "databas", kubernetes: "kubernet", postgres: "postgr",
      serialization: "serial", serialisation: "serialis", certificate: "certif", connection: "connect", deadlocks: "deadlock",
      at: "at", go: "go", sky: "sky", happy: "happi",
    };
    for (const [word, stem] of Object.entries(cases)) expect(porterStem(word)).toBe(stem);
  });

  test("agrees with SQLite's FTS5 porter tokenizer", () => {
    const base = (
      "connection connections connected connecting replication replicas replica lagging database databases locked locking " +
      "certificate certificates expired expiring renewal renewing kubernetes pods pending scheduling evicted evictions " +
      "deadlock deadlocks serializable serialization isolation transactions autovacuum vacuuming bloated bloat " +
      "goroutines leaking leaked websockets upgrading upgraded proxies buffering buffered streaming responses " +
      "generalization generalizations oscillators electricity electrical hopefulness callousness sensitivity " +
      "agreement argument adjustable defensible irritant dependent communism activate angularity homologous " +
      "effective bowdlerize probate rate cease controlling rolling syzygy flying dying tied ties cries happiness"
    ).split(" ");
    const words = [...new Set(base.flatMap((w) => [w, w + "s", w + "ed", w + "ing", w + "ly", w + "ness", w + "ation"]))];
    const db = new Database(":memory:");
    db.exec("CREATE VIRTUAL TABLE t USING fts5(w, tokenize='porter unicode61 remove_diacritics 2')");
    db.exec("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)");
    const insert = db.prepare("INSERT INTO t(rowid, w) VALUES (?, ?)");
    db.transaction(() => words.forEach((word, i) => insert.run(i + 1, word)))();
    const rows = db.query<{ term: string; doc: number }, []>("SELECT term, doc FROM v").all();
    expect(rows.length).toBe(words.length);
    const wrong = rows.filter((row) => porterStem(words[row.doc - 1]) !== row.term).map((row) => `${words[row.doc - 1]}: ${row.term}`);
    expect(wrong).toEqual([]);
    db.close();
  });
});

describe("typo correction", () => {
  test("edit distance counts insertions, deletions, substitutions and adjacent swaps", () => {
    expect(editDistance("databas", "databas", 2)).toBe(0);
    expect(editDistance("datbas", "databas", 2)).toBe(1);
    expect(editDistance("ngnix", "nginx", 2)).toBe(1);
    expect(editDistance("conect", "connect", 2)).toBe(1);
    expect(editDistance("kitten", "sitting", 3)).toBe(3);
    expect(editDistance("abc", "xyz", 1)).toBe(2); // max + 1 once it must exceed max
    expect(editDistance("a", "abcdef", 2)).toBe(3);
  });

  test("only plain words of four letters or more are corrected", () => {
    expect(correctable("datbase")).toBe(true);
    expect(correctable("abc")).toBe(false);
    expect(correctable("x509")).toBe(false);
    expect(correctable("façade")).toBe(false);
  });

  test("the vocabulary is searched in a few short ranges of the stem", () => {
    // datbas: its first three letters, then with a swap or an extra letter undone.
    expect(correctionRanges("datbase")).toEqual([["dat", "dau"], ["dta", "dtb"], ["dab", "dac"], ["dtb", "dtc"]]);
    expect(correctionRanges("ngnix").map(([from]) => from)).toContain("ngi");
    expect(correctionRanges("dcoker").map(([from]) => from)).toContain("doc");
    expect(correctionRanges("dxatabase").map(([from]) => from)).toContain("dat");
  });

  test("the closest term wins, then the one in more notes; far terms never", () => {
    const vocabulary = [
      { term: "databas", doc: 40 },
      { term: "datadog", doc: 3 },
      { term: "date", doc: 90 },
      { term: "connect", doc: 120 },
      { term: "conduct", doc: 5 },
    ];
    expect(bestCorrection("datbase", vocabulary)).toBe("databas");
    expect(bestCorrection("conection", vocabulary)).toBe("connect");
    expect(bestCorrection("zebra", vocabulary)).toBeNull();
    // A misspelt ending: "replicaton" is one edit from "replic" + "ation".
    expect(bestCorrection("replicaton", [{ term: "replic", doc: 4 }, { term: "replac", doc: 9 }])).toBe("replic");
    expect(bestCorrection("serialisation", [{ term: "serial", doc: 2 }, { term: "serializ", doc: 1 }])).toBe("serializ");
    // Up to 8 letters one edit only: "wombat" is not "womb" + "s".
    expect(bestCorrection("wombat", [{ term: "womb", doc: 3 }])).toBeNull();
    expect(bestCorrection("dxxe", [{ term: "date", doc: 1 }])).toBeNull();
    // Ties go to the more common term.
    expect(bestCorrection("dote", [{ term: "date", doc: 1 }, { term: "dots", doc: 9 }])).toBe("dots");
    expect(bestCorrection("cat", [{ term: "bat", doc: 1 }, { term: "car", doc: 7 }])).toBe("car");
  });
});

test("analyze: ASCII text read character by character gives the terms the word pattern gives, on any text", () => {
  // The reference: every run of letters, digits and marks of the lower-cased text, through the general word path.
  const WORD = /[\p{L}\p{N}\p{M}]+/gu;
  const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
  const reference = (text: string) =>
    (text.toLowerCase().match(WORD) ?? []).flatMap((word) => {
      if (/^[a-z]+$/.test(word)) {
        const stem = porterStem(word);
        return [stem.slice(0, 64)];
      }
      if (!CJK.test(word)) {
        const plain = word.normalize("NFD").replace(/[\u0300-\u036f]/g, "").normalize("NFC");
        return [(/^[a-z]+$/.test(plain) ? porterStem(plain) : plain).slice(0, 64)];
      }
      return analyze(word); // CJK runs: the general path itself (not what this test is about)
    });
  const pieces = fc.constantFrom("Running", "the", "DB's", "x86_64", "v2", "2024-11-25", "a".repeat(70), "b9".repeat(40), "e-mail", "Café", "straße", "\u212a", "İ", "naïve", "日本", "\u0301", "\t", "\n", ".", "  ");
  const text = fc.array(fc.oneof(pieces, fc.string({ maxLength: 8 }), fc.string({ unit: "grapheme", maxLength: 3 })), { maxLength: 30 }).map((parts) => parts.join(parts.length % 2 === 0 ? " " : ""));
  fc.assert(fc.property(text, (t) => expect(analyze(t)).toEqual(reference(t))), { numRuns: 3000 });
});

test("a term cut at its length limit keeps surrogate pairs whole, so the stored vector holds the terms the analysis gave", () => {
  // 63 letters, then letters outside the BMP (two code units each): the limit falls between the halves of the first.
  for (const word of ["a".repeat(63) + "\u{1D538}\u{1D538}", "a".repeat(62) + "\u{1D538}\u{1D538}", "\u{20000}".repeat(40)]) {
    const vector = termVector(word, [], word);
    const terms = [...vector.counts.keys()];
    for (const term of terms) {
      expect(term.length).toBeLessThanOrEqual(64);
      expect(/[\uD800-\uDBFF]$/.test(term)).toBe(false);
    }
    expect(vectorTerms(encodeVector(vector))).toEqual(terms);
    expect([...new Set(analyze(word))]).toEqual(terms);
  }
});

test("analyze: the stems remembered by a word's characters stay right past the memo's size (it empties) and for words sharing a start", () => {
  // 150,000 distinct letter words (more than the memo holds), each analysed twice, in texts of several words.
  const letters = "abcdefghijklmnopqrstuvwxyz";
  const wordOf = (n: number) => {
    let word = "";
    for (let v = n + 1; v > 0; v = Math.floor(v / 26)) word += letters[v % 26];
    return `${word}ing`;
  };
  for (let round = 0; round < 2; round++) {
    for (let n = 0; n < 150_000; n += 5) {
      const words = [0, 1, 2, 3, 4].map((k) => wordOf(n + k));
      const got = analyze(`${words.join(" ")} ${words[0]}s ${words[0].slice(0, -3)}`);
      const expected = [...words.map((w) => porterStem(w)), porterStem(`${words[0]}s`), porterStem(words[0].slice(0, -3))];
      if (got.join(" ") !== expected.join(" ")) expect(got).toEqual(expected);
    }
  }
  // A run of letters longer than the memo keeps, then a word after it.
  const blob = "qwertyuiop".repeat(40);
  for (let i = 0; i < 2; i++) expect(analyze(`${blob} running`)).toEqual([porterStem(blob).slice(0, 64), "run"]);
});
