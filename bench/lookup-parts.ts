// The similar-notes lookup's parts for one new note, in process, with no
// write: the term vector (analysed once per create, shared with the store's
// write), the lookup's terms (similarTerms) and the lookup (Store.similarNotes
// on the in-memory postings):
//   bun bench/lookup-parts.ts [--from /tmp/wt20-seed-100k] [--notes webmasters|bench|headheavy] [--rounds 5] [--repo PATH] [--stored N] [--deleted N]
// Each part is timed for every note in every round, and the least time per
// note over the rounds is summed: preemption on a shared host only adds time,
// so the least of several rounds is the figure the host's noise disturbs
// least. `--repo` runs another checkout's code (e.g. a worktree of an older
// commit) on the same notes, for a before/after in one sitting. Notes: the
// first 2,000 webmasters questions (title + 600 body characters) or the bench
// notes of bench/run.ts (near-duplicates of each other), or the ~2 KB
// head-heavy notes bench/writes.ts sends (with --from /tmp/h100k: most of
// their words are in most notes). `--stored N` first stores N more notes of
// the same kind (through Cairn.createNote, hints off), so the lookups meet a
// commons of their near-duplicates, as in a replay loop (bench/hint-cost.ts).
// `--deleted N` first deletes N notes, every tenth of the newest 10·N, so the
// common terms' lists hold removed notes' postings (they stay until a
// compaction) where the lookup reads its newest holders.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { headNote } from "./headheavy.ts";
import { EVAL_DIR } from "./quality/collection.ts";
import { benchArgs } from "./wrk.ts";
import { copyDatabase, openCorpus } from "./data-files.ts";

const args = benchArgs();
const repo = args.repo ?? join(import.meta.dir, "..");
const from = args.from ?? "/tmp/wt20-seed-100k";
const kind = args.notes ?? "webmasters";
const rounds = Number(args.rounds ?? 5);
const { SqliteStore } = await import(join(repo, "src/store/sqlite/store.ts"));
const { similarTerms, SIMILAR_DATABASE_REACH, SIMILAR_POOL, SIMILAR_REACH, SIMILAR_THRESHOLD, SIMILAR_LIMIT } = await import(join(repo, "src/core/similar.ts"));
const vectors = await import(join(repo, "src/core/search/vector.ts"));
const { termVector } = await import(join(repo, "src/core/search/analyzer.ts"));
const noteVector: (title: string, tags: string[], body: string) => { encoded: string } =
  vectors.noteVector ?? ((title, tags, body) => ({ encoded: vectors.encodeVector(termVector(title, tags, body)) }));

const dir = mkdtempSync(join(tmpdir(), "cairn-lookup-parts-"));
copyDatabase(from, dir);
const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: 2 ** 31 });
await store.migrate();
await store.searchMemoryBuilt();
const questions = readFileSync(join(EVAL_DIR, "cqadupstack-webmasters/corpus.jsonl"), "utf8").split("\n").filter(Boolean).slice(0, 2000).map((line) => JSON.parse(line) as { title: string; body: string });
const notes =
  kind === "bench"
    ? Array.from({ length: 2000 }, (_, i) => ({ title: `bench note ${i % 4}-${i}`, body: `a body of words about sqlite and wal mode, number ${i} ${Math.floor(Date.now() / 1000)}`, tags: ["bench"] }))
    : kind === "headheavy"
      ? Array.from({ length: 1000 }, (_, i) => headNote("cairn-writes", i))
      : questions.map((q, i) => ({ title: `${(q.title || "untitled").slice(0, 190)} ${i}`, body: q.body.slice(0, 600) || "empty", tags: ["webmasters"] }));

const deleted = Number(args.deleted ?? 0);
if (deleted > 0) {
  const db = openCorpus(dir);
  const newest = db.query("SELECT id, contributor_no AS contributorNo FROM posts ORDER BY pk DESC LIMIT ?").all(10 * deleted) as { id: string; contributorNo: number }[];
  db.close();
  for (let i = 0; i < newest.length; i += 10) await store.deleteNote(newest[i].id, newest[i].contributorNo);
}
const stored = Number(args.stored ?? 0);
if (stored > 0) {
  const { Cairn } = await import(join(repo, "src/core/service.ts"));
  const { loadConfig } = await import(join(repo, "src/config.ts"));
  const cairn = new Cairn(store, loadConfig({ POSTS_PER_HOUR: "0", SIMILAR_NOTES: "0", SECRET_SCAN: "0" }));
  const author = (await store.createContributor({ email: "lookup-parts@example.org", keyPrefix: "cairn_lp", keyDigest: new Uint8Array(32), createdAt: 0 })).contributorNo;
  // Numbered after the probes, so no stored note is a probe's exact copy.
  for (let i = 0; i < stored; i++) await cairn.createNote(author, { ...notes[i % notes.length], title: `${notes[i % notes.length].title} ${notes.length + i}` });
}
const least = { vector: new Float64Array(notes.length).fill(Infinity), terms: new Float64Array(notes.length).fill(Infinity), lookup: new Float64Array(notes.length).fill(Infinity) };
const keep = (part: Float64Array, i: number, since: number) => {
  const spent = performance.now() - since;
  if (spent < part[i]) part[i] = spent;
};
for (let round = 0; round < rounds; round++) {
  for (let i = 0; i < notes.length; i++) {
    const { title, tags, body } = notes[i];
    let since = performance.now();
    const { encoded } = noteVector(title, tags, body);
    keep(least.vector, i, since);
    since = performance.now();
    const terms = similarTerms(title, body);
    keep(least.terms, i, since);
    since = performance.now();
    await store.similarNotes({ terms, vector: encoded, limit: SIMILAR_LIMIT, minShare: SIMILAR_THRESHOLD, reach: SIMILAR_REACH, pool: SIMILAR_POOL, databaseReach: SIMILAR_DATABASE_REACH });
    keep(least.lookup, i, since);
  }
}
const perNote = (part: Float64Array) => ((part.reduce((sum, ms) => sum + ms, 0) * 1000) / notes.length).toFixed(1);
console.log(
  `${kind} notes on ${from} (${repo}), least of ${rounds} rounds, µs a note: term vector ${perNote(least.vector)}, lookup terms ${perNote(least.terms)}, lookup ${perNote(least.lookup)}; load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
);
await store.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
