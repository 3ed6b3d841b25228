// What the fold thread's transaction holds the write turn for, by fold size
// (docs/benchmarks.md, "Writes of ~2 KB notes, fifth round"): on a copy of the
// directory's database, N head-heavy notes are written with no fold and no
// FTS5 pass, then `foldWriter` (term-folds.ts) folds them and makes their
// FTS5 rows, as the fold thread does (given the notes' vectors as the writer
// hands them over, "sixth round"); printed: the time it held the write turn
// in all (the writer's batches wait that long) and at once at most, its read
// snapshot's time before (with the 1 ms it lets the writer in), the fold's
// CPU, and the same for an FTS5 pass alone over N more notes.
//   bun bench/write-fold.ts --dir /tmp/h100k [--sizes 512,1024,2048] [--rounds 2]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FtsFollower, passColumns } from "../src/store/sqlite/fts-follow.ts";
import { SqliteStore } from "../src/store/sqlite/store.ts";
import { foldWriter } from "../src/store/sqlite/term-folds.ts";
import { WriteTurn } from "../src/store/sqlite/write-turn.ts";
import { headNote } from "./headheavy.ts";
import { benchArgs } from "./wrk.ts";
import { copyDatabase } from "./data-files.ts";

const args = benchArgs();
const dir = args.dir ?? "/tmp/h100k";
const sizes = (args.sizes ?? "512,1024,2048").split(",").map(Number);
const rounds = Number(args.rounds ?? 2);

/** A write turn that times how long it is held. */
class TimedTurn extends WriteTurn {
  heldMs = 0;
  longestMs = 0;
  private since = 0;
  override take(who: number): void {
    super.take(who);
    this.since = performance.now();
  }
  override give(who: number): void {
    this.heldMs += performance.now() - this.since;
    this.longestMs = Math.max(this.longestMs, performance.now() - this.since);
    super.give(who);
  }
}

async function writeNotes(store: SqliteStore, authors: number[], from: number, count: number): Promise<void> {
  for (let n = from; n < from + count; n += 16) {
    await Promise.all(Array.from({ length: Math.min(16, from + count - n) }, (_, j) => {
      const i = n + j;
      return store.createNote({ id: crypto.randomUUID(), contributorNo: authors[i % authors.length], ...headNote("cairn-write-fold", i), createdAt: Date.now() }, () => false);
    }));
  }
}

/** This thread's CPU in ms (ticks of 10 ms): the fold runs on it here, as it does on the fold thread. */
function threadCpuMs(): number {
  const fields = readFileSync("/proc/thread-self/stat", "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

console.log("| notes | fold + FTS5 rows: turn held ms (µs a note) | longest hold ms | its snapshot ms | fold + FTS5 rows: CPU ms (µs a note) | FTS5 pass alone: turn held ms (µs a note) |\n|---|---|---|---|---|---|");
for (let r = 0; r < rounds; r++) {
  for (const size of sizes) {
    const work = mkdtempSync(join(tmpdir(), "cairn-write-fold-"));
    copyDatabase(dir, work);
    const store = new SqliteStore({ dataDir: work, searchMemoryBytes: 0, searchFoldEvery: 100_000_000 });
    await store.migrate();
    // biome-ignore lint: the writer's own FTS5 passes and folds off, so the notes stay pending for the measured ones
    const search = store.searchIndex as any;
    search.beforeCommit = function () {
      const [notes, title, tags, body] = this.totalsOfBatch;
      this.totalsOfBatch = [0, 0, 0, 0];
      if (notes) this.s.addTotals.run(notes, title, tags, body);
    };
    search.termCounts.logged = () => {};
    const authors: number[] = [];
    for (let i = 0; i < 64; i++) authors.push((await store.createContributor({ email: `f${i}@fold.example`, keyPrefix: `cairn_fold${i}`, keyDigest: new Uint8Array(32), createdAt: 0 })).contributorNo);
    await writeNotes(store, authors, 0, size);
    const turn = new TimedTurn();
    // The stored vectors of the notes just written, as the writer hands them to the fold thread (a tree whose
    // foldWriter takes none ignores them).
    const written = new Map(
      store.sqlite
        .query<{ pk: number; seq: number; vector: string }, []>("SELECT l.pk, l.seq, v.vector FROM search_log l JOIN search_vectors v ON v.pk = l.pk WHERE l.removed IS NULL AND l.seq > (SELECT terms_seq FROM search_totals)")
        .all()
        .map(({ pk, seq, vector }) => [pk, { seq, vector }]),
    );
    const started = performance.now();
    const cpuBefore = threadCpuMs();
    const outcome = foldWriter(store.sqlite, turn, new FtsFollower(store.sqlite))(written);
    const cpuMs = threadCpuMs() - cpuBefore;
    const snapshotMs = performance.now() - started - turn.heldMs;
    if (outcome.ftsRows < size) throw new Error(`the pass made ${outcome.ftsRows} rows, not ${size}`);
    // An FTS5 pass alone (the fold level): N more notes.
    await writeNotes(store, authors, size, size);
    const fts = new FtsFollower(store.sqlite);
    const pass = store.sqlite.transaction(() => fts.nextPass(1e9, 1e12))();
    const columns = passColumns(pass);
    const t = performance.now();
    store.sqlite.transaction(() => fts.apply(columns, pass.upTo)).immediate();
    const passMs = performance.now() - t;
    console.log(`| ${size} | ${turn.heldMs.toFixed(1)} (${((turn.heldMs * 1000) / size).toFixed(0)}) | ${turn.longestMs.toFixed(1)} | ${snapshotMs.toFixed(1)} | ${cpuMs} (${((cpuMs * 1000) / size).toFixed(0)}) | ${passMs.toFixed(1)} (${((passMs * 1000) / size).toFixed(0)}) |`);
    await store.close();
    rmSync(work, { recursive: true, force: true });
  }
}
console.log(`load ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}, ${new Date().toISOString()}`);
