// The query-building rules of src/core/search.ts: content words, safe FTS5
// expressions, the Porter stemmer (checked against SQLite's own), edit
// distance and the choice of a typo's correction.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import {
  FIELD_WEIGHTS,
  MAX_QUERY_WORDS,
  STOPWORDS,
  bestCorrection,
  contentWords,
  correctable,
  correctionRanges,
  editDistance,
  porterStem,
  queryWords,
  searchPlan,
  termExpression,
} from "../../src/core/search.ts";

describe("content words", () => {
  test("function words are dropped, unless nothing else is left", () => {
    expect(contentWords(queryWords("How to make SQLite handle concurrent writes"))).toEqual(["make", "sqlite", "handle", "concurrent", "writes"]);
    expect(contentWords(queryWords("RuntimeError: Event loop is closed"))).toEqual(["runtimeerror", "event", "loop", "closed"]);
    expect(contentWords(queryWords("it is what it is"))).toEqual(["it", "is", "what"]);
    expect(contentWords([])).toEqual([]);
    // The 16-word cap counts content words: function words do not use it up.
    const long = searchPlan(`${"the a of to in ".repeat(5)} ${Array.from({ length: 20 }, (_, i) => `w${i}`).join(" ")}`, 10);
    expect(long.words).toEqual(Array.from({ length: MAX_QUERY_WORDS }, (_, i) => `w${i}`));
    for (const word of STOPWORDS) expect(word).toMatch(/^[a-z]+$/);
  });

  test("the plan carries the words, their AND and OR, the weights and the limit", () => {
    const plan = searchPlan("SQLITE_BUSY: database is locked", 10);
    expect(plan.words).toEqual(["sqlite", "busy", "database", "locked"]);
    expect(plan.expressions).toEqual(['"sqlite" AND "busy" AND "database" AND "locked"', '"sqlite" OR "busy" OR "database" OR "locked"']);
    expect(plan.weights).toEqual(FIELD_WEIGHTS);
    expect(plan.limit).toBe(10);
    expect(searchPlan("!!! ???", 10)).toEqual({ expressions: [], words: [], weights: FIELD_WEIGHTS, limit: 10 });
  });

  test("any input gives only quoted words joined by AND or OR, at most 16 of them", () => {
    const hostile = [
      '"', '""', "'", "*", "quasar*", ":", "title:quasar", "-quasar", "NEAR(quasar cache, 2)", "(", ")", "^x", "{title body}: q",
      "a AND b OR c NOT d", "😀 🦀", "\u0000x\u0000", "\ud800", "e\u0301", "İstanbul ß ẞ", "مرحبا", "'; DROP TABLE posts; --",
      Array.from({ length: 40 }, (_, i) => `w${i}`).join(" "),
    ];
    const shape = /^"[^"]*"( (AND|OR) "[^"]*")*$/;
    for (const query of hostile) {
      const plan = searchPlan(query, 10);
      expect(plan.words.length).toBeLessThanOrEqual(MAX_QUERY_WORDS);
      for (const word of plan.words) expect(word).toMatch(/^[\p{L}\p{N}\p{M}]+$/u);
      for (const expression of plan.expressions) expect(expression).toMatch(shape);
    }
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

  test("a correction is a quoted term, a prefix query when the tokenizer would stem it further", () => {
    expect(termExpression("connect")).toBe('"connect"');
    expect(termExpression("databas")).toBe('"databas"*'); // the tokenizer would drop the s
    expect(porterStem("serialis")).not.toBe("serialis");
    expect(termExpression("serialis")).toBe('"serialis"*');
  });
});
