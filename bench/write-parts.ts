// Where a ~2 KB note create's time goes on SQLite, in process, statement by
// statement (docs/benchmarks.md, "Writes of ~2 KB notes"):
//   bun bench/write-parts.ts --dir /tmp/h100k [--notes 2000] [--batch 16] [--skip search.insertVector,...] [--checkpoint PAGES] [--memory] [--fold ROWS]
// Opens a copy of the directory's database (postings off: what a write costs
// the database; `--memory`: on, built before the notes are written, and the
// time of adding notes to them counted too), creates head-heavy notes through the store in batches of
// `batch` at once (one group commit each), and prints the time of each
// prepared statement, of the analysis and of the commit, per note. `--skip`
// turns the named statements into no-ops: what the rest would cost without
// them; `--checkpoint` sets the connection's wal_autocheckpoint (0: none).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { analyze } from "../src/core/search/analyzer.ts";
import { MemoryIndex } from "../src/core/search/memory-index.ts";
import { DEFAULT_SEARCH_MEMORY_BYTES } from "../src/store/sqlite/search.ts";
import { SqliteStore } from "../src/store/sqlite/store.ts";
import { headNote } from "./headheavy.ts";
import { benchArgs } from "./wrk.ts";
import { copyDatabase } from "./data-files.ts";

const args = benchArgs();
const dir = args.dir ?? "/tmp/h100k";
const count = Number(args.notes ?? 2000);
const batch = Number(args.batch ?? 16);
const work = mkdtempSync(join(tmpdir(), "cairn-write-parts-"));
copyDatabase(dir, work);
const store = new SqliteStore({ dataDir: work, searchMemoryBytes: "memory" in args ? DEFAULT_SEARCH_MEMORY_BYTES : 0, searchFoldEvery: args.fold ? Number(args.fold) : undefined });
await store.migrate();
if ("memory" in args) {
  await store.searchMemoryBuilt();
  console.log(`postings: ${store.searchMemoryOffReason ?? "in memory"}`);
}
if (args.checkpoint) store.sqlite.exec(`PRAGMA wal_autocheckpoint = ${Number(args.checkpoint)}`);
const authors: number[] = [];
for (let i = 0; i < 64; i++) {
  authors.push((await store.createContributor({ email: `w${i}@parts.example`, keyPrefix: `cairn_parts${i}`, keyDigest: new Uint8Array(32), createdAt: 0 })).contributorNo);
}
const notes = Array.from({ length: count + 2 * batch }, (_, i) => headNote("cairn-write-parts", i));
let n = 0;
const create = () => {
  const i = n++;
  return store.createNote({ id: crypto.randomUUID(), contributorNo: authors[i % authors.length], ...notes[i], createdAt: Date.now() }, () => false);
};
await Promise.all(Array.from({ length: batch }, create)); // prepares every statement

/** Time per statement name, summed over every call of run/get/all/values. */
const spent = new Map<string, number>();
const skipped = new Set((args.skip ?? "").split(",").filter(Boolean));
function timeStatements(owner: string, holder: Record<string, any>) {
  for (const [name, statement] of Object.entries(holder)) {
    if (skipped.has(`${owner}.${name}`)) {
      for (const method of ["run", "get", "all", "values"]) statement[method] = () => undefined;
      continue;
    }
    for (const method of ["run", "get", "all", "values", "execute"]) {
      const original = statement?.[method];
      if (typeof original !== "function") continue;
      statement[method] = (...call: unknown[]) => {
        const started = performance.now();
        try {
          return original.apply(statement, call);
        } finally {
          const key = `${owner}.${name}`;
          spent.set(key, (spent.get(key) ?? 0) + performance.now() - started);
        }
      };
    }
  }
}
const s = store as any;
timeStatements("search", s.searchIndex.s);
timeStatements("tags", s.searchIndex.tags.s);
// Since the FTS5 index follows the log (src/store/sqlite/fts-follow.ts): its pass's statements, and a new note's tags by their count.
if (s.searchIndex.fts) timeStatements("fts", s.searchIndex.fts.s);
if (Array.isArray(s.searchIndex.tags.s.addNew)) timeStatements("tags.addNew", s.searchIndex.tags.s.addNew);
timeStatements("notes", s.notes.statements());
timeStatements("commit", s.commit.tx);
const search = s.searchIndex;
for (const [owner, method] of [["search", "add"], ["search", "logChange"]] as const) {
  const original = search[method];
  search[method] = function (...call: unknown[]) {
    const started = performance.now();
    try {
      return original.apply(this, call);
    } finally {
      spent.set(`${owner}.${method}()`, (spent.get(`${owner}.${method}()`) ?? 0) + performance.now() - started);
    }
  };
}
const addToPostings = MemoryIndex.prototype.add;
MemoryIndex.prototype.add = function (...call: Parameters<typeof addToPostings>) {
  const started = performance.now();
  try {
    return addToPostings.apply(this, call);
  } finally {
    spent.set("postings.add()", (spent.get("postings.add()") ?? 0) + performance.now() - started);
  }
};
const analyzeStarted = performance.now();
for (let i = 0; i < 200; i++) analyze(`${notes[i].title} ${notes[i].body}`);
const analyzeMs = (performance.now() - analyzeStarted) / 200;

const started = performance.now();
const cpu = process.cpuUsage();
for (let done = 0; done < count; done += batch) await Promise.all(Array.from({ length: batch }, create));
const wall = performance.now() - started;
const used = process.cpuUsage(cpu);
console.log(`${count} notes in batches of ${batch}: ${((count / wall) * 1000).toFixed(0)} notes/s in process, ${((used.user + used.system) / count).toFixed(0)} µs CPU a note; load ${(await Bun.file("/proc/loadavg").text()).trim()}`);
console.log("| part | µs a note |\n|---|---|");
for (const [key, ms] of [...spent].sort((a, b) => b[1] - a[1])) console.log(`| ${key} | ${((ms * 1000) / count).toFixed(0)} |`);
console.log(`| (analyze title+body, alone) | ${(analyzeMs * 1000).toFixed(0)} |`);
await store.close();
rmSync(work, { recursive: true, force: true });
