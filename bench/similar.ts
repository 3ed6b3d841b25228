// Similar notes on write, measured (docs/search-quality.md, "Similar notes on write"):
//   bun bench/similar.ts [--engine sqlite|postgres]
// Loads the 17,405 webmasters notes into a real store, then posts each of the
// 500 webmasters queries as a new note (title and body = the query text) and
// counts how often one of its judged duplicates is among the candidates that
// pass a threshold; then posts the 225 cranfield queries (aeronautics,
// off-topic here) the same way and counts how often any note passes. The
// lookup runs before a note is stored (as the server's does), so probes are
// never stored: they never see each other and the commons stays the
// collection's. The threshold is chosen on
// the first 250 webmasters queries; the table also gives the last 250.
// The candidates come from exactly the server's lookup (src/core/similar.ts);
// a last pass runs the server's create path (Cairn.createNote) with the
// shipped threshold and checks it lists what the curve says.
import { loadConfig } from "../src/config.ts";
import { Cairn } from "../src/core/service.ts";
import { SIMILAR_LIMIT, SIMILAR_POOL, SIMILAR_REACH, SIMILAR_THRESHOLD, similarCandidates } from "../src/core/similar.ts";
import { loadCollection, readCollection } from "./quality/collection.ts";

const webmasters = readCollection("cqadupstack-webmasters");
const cranfield = readCollection("cranfield");
if (!webmasters || !cranfield) throw new Error("needs ../shared/eval (cqadupstack-webmasters and cranfield)");

const loaded = await loadCollection(webmasters);
const { store } = loaded;
console.log(`webmasters: ${webmasters.notes.length} notes loaded in ${(loaded.loadMs / 1000).toFixed(1)} s`);
const { contributorNo } = await store.createContributor({ email: "probe@example.org", keyPrefix: "cairn_probe0", keyDigest: new Uint8Array(32), createdAt: 0 });

/** Bounds compared (own-score.ts): holders reached, pool scored exactly (Infinity, Infinity: the exact top-k). */
const BOUNDS: [reach: number, pool: number][] = [[512, 32], [1024, 16], [1024, 32], [2048, 32], [4096, 16], [4096, 32], [8192, 32], [Infinity, 32], [Infinity, Infinity]];

interface Probe {
  id: string;
  candidates: { key: string; share: number }[];
  /** Per BOUNDS entry: the candidates with no threshold. */
  variants: { key: string; share: number }[][];
  ms: number;
  /** The lookup with the shipped threshold (what the server runs). */
  shippedMs: number;
}

/** Takes the candidates of `text` as a new note's (title: its first 200 characters). */
async function probe(id: string, text: string): Promise<Probe> {
  const created = { title: text.slice(0, 200), body: text, tags: [] };
  const started = performance.now();
  const candidates = await similarCandidates(store, created, 0);
  const ms = performance.now() - started;
  const variants = [];
  for (const [reach, pool] of BOUNDS) {
    const found = await similarCandidates(store, created, 0, SIMILAR_LIMIT, reach, pool);
    variants.push(found.map((c) => ({ key: loaded.keyById.get(c.note.id) ?? "?", share: c.share })));
  }
  const again = performance.now();
  await similarCandidates(store, created, SIMILAR_THRESHOLD);
  const shippedMs = performance.now() - again;
  return { id, candidates: candidates.map((c) => ({ key: loaded.keyById.get(c.note.id) ?? "?", share: c.share })), variants, ms, shippedMs };
}

const duplicateProbes: Probe[] = [];
for (const query of webmasters.queries) duplicateProbes.push(await probe(query.id, query.text));
const offTopicProbes: Probe[] = [];
for (const query of cranfield.queries) offTopicProbes.push(await probe(query.id, query.text));

const half = Math.floor(duplicateProbes.length / 2);
const tuning = duplicateProbes.slice(0, half);
const heldOut = duplicateProbes.slice(half);
const listed = (p: Probe, threshold: number) => p.candidates.filter((c) => c.share >= threshold);
const hitRate = (probes: Probe[], threshold: number) =>
  probes.filter((p) => listed(p, threshold).some((c) => (webmasters.judgments[p.id]?.[c.key] ?? 0) > 0)).length / probes.length;
const hintRate = (probes: Probe[], threshold: number) => probes.filter((p) => listed(p, threshold).length > 0).length / probes.length;
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

console.log(`\nprobes: ${duplicateProbes.length} webmasters queries, ${offTopicProbes.length} cranfield queries; up to ${SIMILAR_LIMIT} listed`);
console.log("| threshold (share of own score) | duplicate listed, first 250 (tuning) | last 250 (held out) | all 500 | off-topic with any hint (cranfield) | webmasters probes with any hint |");
console.log("|---|---|---|---|---|---|");
for (const threshold of [0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9]) {
  const mark = threshold === SIMILAR_THRESHOLD ? " **(shipped)**" : "";
  console.log(
    `| ${threshold}${mark} | ${pct(hitRate(tuning, threshold))} | ${pct(hitRate(heldOut, threshold))} | ${pct(hitRate(duplicateProbes, threshold))} | ${pct(hintRate(offTopicProbes, threshold))} | ${pct(hintRate(duplicateProbes, threshold))} |`,
  );
}
console.log(`\nBounds: R holders of the rarest shared terms reached, the P sharing most scored exactly (shipped: ${SIMILAR_REACH}, ${SIMILAR_POOL}), at thresholds 0.25 / 0.3 / 0.35:`);
console.log("| R | P | threshold | first 250 | last 250 | off-topic with any hint |\n|---|---|---|---|---|---|");
for (const [i, [reach, pool]] of BOUNDS.entries()) {
  const as = (probes: Probe[]) => probes.map((p) => ({ ...p, candidates: p.variants[i] }));
  for (const threshold of [0.25, 0.3, 0.35]) {
    console.log(`| ${reach} | ${pool} | ${threshold} | ${pct(hitRate(as(tuning), threshold))} | ${pct(hitRate(as(heldOut), threshold))} | ${pct(hintRate(as(offTopicProbes), threshold))} |`);
  }
}
const times = (pick: (p: Probe) => number) => {
  const sorted = [...duplicateProbes, ...offTopicProbes].map(pick).sort((a, b) => a - b);
  return `median ${sorted[Math.floor(sorted.length / 2)].toFixed(3)} ms, p99 ${sorted[Math.floor(sorted.length * 0.99)].toFixed(2)} ms`;
};
console.log(`\nlookup time per new note (in-process, in-memory postings): no threshold ${times((p) => p.ms)}; shipped threshold ${SIMILAR_THRESHOLD} as the floor ${times((p) => p.shippedMs)}`);

// The server's own path, with the shipped threshold, on the held-out half.
const cairn = new Cairn(store, loadConfig({ POSTS_PER_HOUR: "0" }));
let served = 0;
let agree = 0;
for (const p of heldOut) {
  const text = webmasters.queries.find((q) => q.id === p.id)!.text;
  const answer = await cairn.createNote(contributorNo, { title: text.slice(0, 200), body: text });
  const keys = answer.similar.map((s) => loaded.keyById.get(s.id));
  if (keys.some((key) => key !== undefined && (webmasters.judgments[p.id]?.[key] ?? 0) > 0)) served++;
  if (JSON.stringify(keys) === JSON.stringify(listed(p, SIMILAR_THRESHOLD).map((c) => c.key))) agree++;
  await cairn.deleteNote(contributorNo, answer.id);
}
console.log(`through Cairn.createNote (threshold ${SIMILAR_THRESHOLD}), last 250: duplicate listed ${pct(served / heldOut.length)}; same list as the curve for ${agree}/${heldOut.length}`);
await loaded.close();
