// Would a signature index find near-duplicates as well as the BM25F lookup?
// (issue 21: "a purpose-built signature such as MinHash ... measure"):
//   bun bench/similar-signatures.ts
// The same probes as bench/similar.ts (the 500 webmasters queries as new
// notes against the 17,405 webmasters notes; the 225 cranfield queries as
// off-topic notes), each note reduced to the set of its content terms (title
// and the body's first SIMILAR_BODY_CHARS characters, function words left
// out, as the lookup's terms are). Three listings, up to 3 notes each:
//   - exact Jaccard |A ∩ B| / |A ∪ B|, every note compared (the most any
//     MinHash of these sets can approach);
//   - exact containment |A ∩ B| / |A| (A the new note: a short question
//     inside a long answer-like note);
//   - MinHash with LSH banding (64 hashes, 16 bands of 4): candidates sharing
//     a band, ranked by the estimated Jaccard: what an O(1) index would list,
//     and what it costs a note.
// For each, the curve over thresholds: judged duplicates listed on the first
// and last 250 queries, off-topic notes with any hint.
import { readFileSync } from "node:fs";
import { analyzeWithout } from "../src/core/search/analyzer.ts";
import { STOPWORDS } from "../src/core/search/query.ts";
import { SIMILAR_BODY_CHARS, SIMILAR_LIMIT } from "../src/core/similar.ts";
import { readCollection } from "./quality/collection.ts";

const webmasters = readCollection("cqadupstack-webmasters");
const cranfield = readCollection("cranfield");
if (!webmasters || !cranfield) throw new Error("needs ../shared/eval (cqadupstack-webmasters and cranfield)");

const termSet = (title: string, body: string) => new Set(analyzeWithout(`${title}\n${body.slice(0, SIMILAR_BODY_CHARS)}`, STOPWORDS));
const notes = webmasters.notes.map((note) => ({ key: note.key, terms: termSet(note.title, note.body) }));
const probeOf = (text: string) => termSet(text.slice(0, 200), text);

// MinHash: 64 hashes of each term (a 32-bit FNV-1a, then 64 seeded mixes), the least per hash.
const HASHES = 64;
const BANDS = 16;
const ROWS = HASHES / BANDS;
// Per hash a seed xor-ed in, then MurmurHash3's finaliser (a multiply-add family mod 2^32 was tried first: its hashes were
// so correlated that unrelated notes looked 80% alike).
let seedState = 12345;
const seeds = Uint32Array.from({ length: HASHES }, () => (seedState = (Math.imul(seedState, 1103515245) + 12345) >>> 0));
function fnv(term: string): number {
  let h = 2166136261;
  for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), 16777619);
  return h >>> 0;
}
function signature(terms: Set<string>): Uint32Array {
  const sig = new Uint32Array(HASHES).fill(0xffffffff);
  for (const term of terms) {
    const h = fnv(term);
    for (let i = 0; i < HASHES; i++) {
      let x = h ^ seeds[i];
      x ^= x >>> 16;
      x = Math.imul(x, 0x85ebca6b);
      x ^= x >>> 13;
      x = Math.imul(x, 0xc2b2ae35);
      x = (x ^ (x >>> 16)) >>> 0;
      if (x < sig[i]) sig[i] = x;
    }
  }
  return sig;
}
const bandKey = (sig: Uint32Array, band: number) => `${band}:${Array.from(sig.subarray(band * ROWS, band * ROWS + ROWS)).join(",")}`;

let started = performance.now();
const signatures = notes.map((note) => signature(note.terms));
const signMs = (performance.now() - started) / notes.length;
const buckets = new Map<string, number[]>();
signatures.forEach((sig, n) => {
  for (let band = 0; band < BANDS; band++) {
    const key = bandKey(sig, band);
    const bucket = buckets.get(key);
    if (bucket) bucket.push(n);
    else buckets.set(key, [n]);
  }
});

type Listing = { key: string; score: number }[];
const top = (scored: Listing) => scored.sort((a, b) => b.score - a.score).slice(0, SIMILAR_LIMIT);
function exact(probe: Set<string>, measure: (shared: number, size: number) => number): Listing {
  const scored: Listing = [];
  for (const note of notes) {
    let shared = 0;
    for (const term of probe) if (note.terms.has(term)) shared++;
    if (shared > 0) scored.push({ key: note.key, score: measure(shared, note.terms.size) });
  }
  return top(scored);
}
let lshMs = 0;
let lshCandidates = 0;
function lsh(probe: Set<string>): Listing {
  const t0 = performance.now();
  const sig = signature(probe);
  const candidates = new Set<number>();
  for (let band = 0; band < BANDS; band++) for (const n of buckets.get(bandKey(sig, band)) ?? []) candidates.add(n);
  const scored: Listing = [];
  for (const n of candidates) {
    let same = 0;
    for (let i = 0; i < HASHES; i++) if (signatures[n][i] === sig[i]) same++;
    scored.push({ key: notes[n].key, score: same / HASHES });
  }
  const listed = top(scored);
  lshMs += performance.now() - t0;
  lshCandidates += candidates.size;
  return listed;
}

const methods: [string, (probe: Set<string>) => Listing][] = [
  ["exact Jaccard", (p) => exact(p, (shared, size) => shared / (p.size + size - shared))],
  ["exact containment", (p) => exact(p, (shared) => shared / p.size)],
  ["MinHash LSH (64 hashes, 16 bands of 4)", lsh],
];
const duplicateProbes = webmasters.queries.map((q) => ({ id: q.id, terms: probeOf(q.text) }));
const offTopicProbes = cranfield.queries.map((q) => ({ id: q.id, terms: probeOf(q.text) }));
const half = Math.floor(duplicateProbes.length / 2);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
for (const [name, list] of methods) {
  lshMs = 0;
  lshCandidates = 0;
  started = performance.now();
  const found = duplicateProbes.map((p) => ({ id: p.id, listed: list(p.terms) }));
  const offTopic = offTopicProbes.map((p) => list(p.terms));
  const ms = (performance.now() - started) / (duplicateProbes.length + offTopicProbes.length);
  const hit = (probes: typeof found, t: number) => probes.filter((p) => p.listed.some((c) => c.score >= t && (webmasters.judgments[p.id]?.[c.key] ?? 0) > 0)).length / probes.length;
  const hinted = (t: number) => offTopic.filter((listed) => listed.some((c) => c.score >= t)).length / offTopic.length;
  console.log(`\n${name}: ${ms.toFixed(3)} ms a probe${name.startsWith("MinHash") ? ` (signature ${((lshMs / (duplicateProbes.length + offTopicProbes.length)) * 1000).toFixed(1)} µs with lookup; ${(lshCandidates / (duplicateProbes.length + offTopicProbes.length)).toFixed(1)} candidates a probe; a stored note's signature ${(signMs * 1000).toFixed(1)} µs)` : ""}`);
  console.log("| threshold | duplicate listed, first 250 | last 250 | off-topic with any hint |\n|---|---|---|---|");
  for (const t of [0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7]) {
    console.log(`| ${t} | ${pct(hit(found.slice(0, half), t))} | ${pct(hit(found.slice(half), t))} | ${pct(hinted(t))} |`);
  }
}
console.log(`\nload average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
