// Which tables and indexes a ~2 KB note's write dirties (docs/benchmarks.md,
// "Writes of ~2 KB notes, second round"): creates head-heavy notes through
// SqliteStore.createNote, 16 at a time (one group commit each), on a copy of the
// directory's database with automatic checkpoints off and no fold, then reads
// the page number of every frame in the WAL and names its B-tree by dbstat.
// Every frame is a page written at some COMMIT (and copied again at a checkpoint).
//   bun bench/wal-frames.ts --dir /tmp/h100k [--notes 512]
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteStore } from "../src/store/sqlite/store.ts";
import { headNote } from "./headheavy.ts";
import { benchArgs } from "./wrk.ts";
import { copyDatabase } from "./data-files.ts";

const args = benchArgs();
const dir = args.dir ?? "/tmp/h100k";
const count = Number(args.notes ?? 512);
const work = mkdtempSync(join(tmpdir(), "cairn-wal-frames-"));
copyDatabase(dir, work);
const store = new SqliteStore({ dataDir: work, searchMemoryBytes: 0, searchFoldEvery: Number.MAX_SAFE_INTEGER });
await store.migrate();
const authors: number[] = [];
for (let i = 0; i < 64; i++) authors.push((await store.createContributor({ email: `f${i}@wal-frames.example`, keyPrefix: `cairn_wf${i}`, keyDigest: new Uint8Array(32), createdAt: 0 })).contributorNo);
store.sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
store.sqlite.exec("PRAGMA wal_autocheckpoint = 0");
let n = 0;
for (let done = 0; done < count; done += 16) {
  await Promise.all(Array.from({ length: 16 }, () => {
    const i = n++;
    return store.createNote({ id: crypto.randomUUID(), contributorNo: authors[i % authors.length], ...headNote("cairn-wal-frames", i), createdAt: Date.now() }, () => false);
  }));
}
const wal = readFileSync(join(work, "cairn.db-wal"));
const pageSize = wal.readUInt32BE(8);
const pages: number[] = [];
for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) pages.push(wal.readUInt32BE(at));
const check = new Database(join(work, "cairn.db"), { readonly: true });
const owner = new Map((check.query("SELECT name, pageno FROM dbstat").all() as { name: string; pageno: number }[]).map((row) => [row.pageno, row.name]));
check.close();
const frames = new Map<string, number>();
for (const page of pages) {
  const name = owner.get(page) ?? "(pages new since the copy)";
  frames.set(name, (frames.get(name) ?? 0) + 1);
}
console.log(`${pages.length} WAL frames for ${n} notes in batches of 16: ${(pages.length / n).toFixed(2)} a note`);
console.log("| B-tree | frames a note |\n|---|---|");
for (const [name, k] of [...frames].sort((a, b) => b[1] - a[1])) console.log(`| ${name} | ${(k / n).toFixed(2)} |`);
await store.close();
rmSync(work, { recursive: true, force: true });
