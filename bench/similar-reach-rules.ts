// Other ways to choose the similar-notes lookup's holders (step 1 of the rule in
// src/core/search/own-score.ts), quality only, on the probes of bench/similar.ts
// (docs/search-quality.md, "Reach rules that read less, measured"):
//   bun bench/similar-reach-rules.ts
// Loads the 17,405 webmasters notes, then for each webmasters query (and each
// cranfield query, off-topic) as a new note computes every shared term's
// holders and their BM25F shares exactly, and lists up to 3 notes reaching the
// threshold under each rule: the shipped one (newest holders of the rarest
// terms, R in all), the same with a cap on the holders one term may give
// ("cap"), and champion lists (each of the N rarest terms gives its C holders
// with the largest share, whatever their age: impact order). The pool (the P
// holders with the most summed share) is scored exactly, as the server does.
// Printed: the rates of bench/similar.ts's table and the holders reached a probe.
import { PostingCursor } from "../src/core/search/memory-index.ts";
import { ownScore, rarestShared, reachPerTerm, similarStats, type SimilarTerm } from "../src/core/search/own-score.ts";
import { saturate, weightedFrequencyOf } from "../src/core/search/ranking.ts";
import { noteVector } from "../src/core/search/vector.ts";
import { similarTerms, SIMILAR_THRESHOLD } from "../src/core/similar.ts";
import { loadCollection, readCollection } from "./quality/collection.ts";

const webmasters = readCollection("cqadupstack-webmasters");
const cranfield = readCollection("cranfield");
if (!webmasters || !cranfield) throw new Error("needs ../shared/eval (cqadupstack-webmasters and cranfield)");
const loaded = await loadCollection(webmasters);
await loaded.store.searchIndex.memory.loaded();
const index = (await loaded.store.searchIndex.memory.current())!;
const keyOfOrdinal = (ordinal: number) => loaded.keyByPk.get(index.keyOf(ordinal)) ?? "?";

type Shares = Map<string, Map<number, number>>;
/** Holders reached and the share each gained, by a rule. */
type Reach = (query: SimilarTerm[], shares: Shares, averages: [number, number, number]) => Map<number, number>;

/** Every live holder of `term` and its share, ascending by ordinal. */
function sharesOf(term: SimilarTerm, averages: [number, number, number]): Map<number, number> {
  const shares = new Map<number, number>();
  const list = index.postings(term.term);
  if (!list) return shares;
  const cursor = new PostingCursor(list);
  const lengths = index.lengths;
  while (cursor.next()) {
    if (!index.isLive(cursor.ordinal)) continue;
    const o = 3 * cursor.ordinal;
    shares.set(cursor.ordinal, term.idf * saturate(weightedFrequencyOf(cursor.title, cursor.tags, cursor.body, lengths[o], lengths[o + 1], lengths[o + 2], averages)));
  }
  return shares;
}

const best = (weights: Map<number, number>, n: number) => [...weights].sort((a, b) => b[1] - a[1] || b[0] - a[0]).slice(0, n);

/** The shipped rule (reach newest first, `reach` in all), each term giving `perTerm` holders at most. */
const newest =
  (reach: number, perTerm = Infinity): Reach =>
  (query, shares) => {
    const rarest = rarestShared(query);
    const takes = reachPerTerm(
      rarest.map((term) => ({ ...term, others: Math.min(term.others, perTerm) })),
      reach,
    );
    const reached = new Map<number, number>();
    rarest.forEach((term, i) => {
      const holders = [...shares.get(term.term)!].sort((a, b) => b[0] - a[0]).slice(0, takes[i]);
      for (const [ordinal, share] of holders) reached.set(ordinal, (reached.get(ordinal) ?? 0) + share);
    });
    return reached;
  };

/** Champion lists: each of the `terms` rarest shared terms gives its `champions` holders with the largest share. */
const champions =
  (champions: number, terms: number): Reach =>
  (query, shares) => {
    const reached = new Map<number, number>();
    for (const term of rarestShared(query).slice(0, terms)) {
      for (const [ordinal, share] of best(shares.get(term.term)!, champions)) reached.set(ordinal, (reached.get(ordinal) ?? 0) + share);
    }
    return reached;
  };

/**
 * Block-max order: each term's blocks of 128 postings by their bound (the
 * block's largest weighted frequency, memory-index.ts `bounds`), newest block
 * first among equals, whole blocks, `reach` holders in all, rarest term first.
 */
const byBlockMax =
  (reach: number): Reach =>
  (query, shares, averages) => {
    const reached = new Map<number, number>();
    let left = reach;
    for (const term of rarestShared(query)) {
      if (left <= 0) break;
      const list = index.postings(term.term)!;
      index.bounds(list, averages);
      const blockMax = list.blockMax!;
      const ordinals: number[][] = [];
      const cursor = new PostingCursor(list);
      let at = 0;
      while (cursor.next()) (ordinals[at++ >> 7] ??= []).push(cursor.ordinal);
      const order = [...ordinals.keys()].sort((a, b) => blockMax[b] - blockMax[a] || b - a);
      for (const block of order) {
        if (left <= 0) break;
        for (const ordinal of ordinals[block]) {
          const share = shares.get(term.term)!.get(ordinal);
          if (share === undefined || left <= 0) continue;
          reached.set(ordinal, (reached.get(ordinal) ?? 0) + share);
          left--;
        }
      }
    }
    return reached;
  };

const rules: [name: string, reach: Reach, pool: number][] = [
  ["shipped: newest, R 4,096, P 32", newest(4096), 32],
  ["newest, R 2,048, P 32", newest(2048), 32],
];
for (const reach of [1024, 2048, 4096]) rules.push([`block-max order, R ${reach}, P 32`, byBlockMax(reach), 32]);
for (const cap of [512, 1024, 2048]) rules.push([`newest, R 4,096, at most ${cap} a term, P 32`, newest(4096, cap), 32]);
for (const c of [128, 256, 384, 512, 768]) for (const n of [6, 16]) rules.push([`champions: ${c} a term, ${n} rarest terms, P 32`, champions(c, n), 32]);

interface Probe {
  id: string;
  listed: { key: string; share: number }[][];
  reached: number[];
}

function probe(id: string, text: string): Probe {
  const title = text.slice(0, 200);
  const vector = noteVector(title, [], text).encoded;
  const stats = similarStats({ notes: index.notes, lengthSums: index.lengthSums }, (term) => index.notesWith(term), similarTerms(title, text), vector);
  const own = ownScore(stats, vector);
  const shares: Shares = new Map(stats.query.filter((term) => term.others > 0).map((term) => [term.term, sharesOf(term, stats.averages)]));
  const listed: Probe["listed"] = [];
  const reached: number[] = [];
  for (const [, reach, pool] of rules) {
    const weights = reach(stats.query, shares, stats.averages);
    reached.push(weights.size);
    const scored = new Map(best(weights, pool).map(([ordinal]) => [ordinal, stats.query.reduce((sum, term) => sum + (shares.get(term.term)?.get(ordinal) ?? 0), 0)]));
    listed.push(best(scored, 3).map(([ordinal, score]) => ({ key: keyOfOrdinal(ordinal), share: score / own })));
  }
  return { id, listed, reached };
}

const duplicates = webmasters.queries.map((query) => probe(query.id, query.text));
const offTopic = cranfield.queries.map((query) => probe(query.id, query.text));
const half = Math.floor(duplicates.length / 2);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
console.log(`| rule (threshold ${SIMILAR_THRESHOLD}) | duplicate listed, first ${half} | last ${duplicates.length - half} (held out) | off-topic with any hint | holders reached a probe |`);
console.log("|---|---|---|---|---|");
for (const [r, [name]] of rules.entries()) {
  const hits = (probes: Probe[]) => probes.filter((p) => p.listed[r].some((c) => c.share >= SIMILAR_THRESHOLD && (webmasters.judgments[p.id]?.[c.key] ?? 0) > 0)).length / probes.length;
  const hinted = offTopic.filter((p) => p.listed[r].some((c) => c.share >= SIMILAR_THRESHOLD)).length / offTopic.length;
  const reached = duplicates.reduce((sum, p) => sum + p.reached[r], 0) / duplicates.length;
  console.log(`| ${name} | ${pct(hits(duplicates.slice(0, half)))} | ${pct(hits(duplicates.slice(half)))} | ${pct(hinted)} | ${reached.toFixed(0)} |`);
}
await loaded.close();
process.exit(0);
