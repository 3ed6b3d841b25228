// What the in-memory postings take, built from a seeded directory's stored
// term vectors as a server builds them (the first --notes notes, by key):
//   bun bench/postings-size.ts --dir /tmp/b1m [--notes 100000]
// Prints the postings and terms, the index's own byte count (MemoryIndex.bytes),
// bytes per posting and per note, and this process's RSS before and after
// (after a full collection).
import { MemoryIndex } from "../src/core/search/memory-index.ts";
import { benchArgs } from "./wrk.ts";
import { openCorpus } from "./data-files.ts";

const args = benchArgs();
const dir = args.dir ?? "/tmp/b1m";
const limit = Number(args.notes ?? Number.MAX_SAFE_INTEGER);
const db = openCorpus(dir);
Bun.gc(true);
const before = process.memoryUsage();
const rssBefore = before.rss;
const index = new MemoryIndex();
const page = db.query<{ pk: number; vector: string }, [number, number]>("SELECT pk, vector FROM search_vectors WHERE pk > ?1 ORDER BY pk LIMIT ?2");
let notes = 0;
let postings = 0;
const started = performance.now();
for (let after = Number.MIN_SAFE_INTEGER; notes < limit; ) {
  const rows = page.all(after, Math.min(5000, limit - notes));
  for (const row of rows) {
    index.add(row.pk, row.vector);
    postings += row.vector.split(" ").length - 1;
  }
  notes += rows.length;
  if (rows.length === 0) break;
  after = rows[rows.length - 1].pk;
}
index.trim();
const seconds = (performance.now() - started) / 1000;
Bun.gc(true);
const after = process.memoryUsage();
const rssAfter = after.rss;
const heap = after.heapUsed - before.heapUsed;
const buffers = after.arrayBuffers - before.arrayBuffers;
const mb = (bytes: number) => (bytes / 1048576).toFixed(0);
console.log(
  `${dir}: ${notes} notes, ${postings} postings (${(postings / notes).toFixed(0)} per note), built in ${seconds.toFixed(1)} s; ` +
    `index ${mb(index.bytes)} MB by its own count = ${(index.bytes / postings).toFixed(2)} bytes per posting, ${(index.bytes / notes).toFixed(0)} per note (the postings' arrays alone: ${mb(index.postingsBytes)} MB, ${(index.postingsBytes / postings).toFixed(2)} bytes per posting); ` +
    `RSS ${mb(rssBefore)} → ${mb(rssAfter)} MB (+${mb(rssAfter - rssBefore)} MB); JS heap +${mb(heap)} MB, array buffers +${mb(buffers)} MB; ${index.termCount} terms`,
);
db.close();
