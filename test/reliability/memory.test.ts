// Issue 12, point 3: memory bounded in bytes. The worst case for the note
// cache is notes at the body limit in characters that take the most bytes:
// 20,000 CJK characters each (60 KB of UTF-8, 40 KB of UTF-16). NOTES of them
// are created, then each is read once, through the compiled server; RSS is
// read from /proc before and after. With NOTE_CACHE_MB=16 the growth must stay
// below half of what caching all of them costs (the search postings are off
// there, so the cache alone is measured). The same notes are the worst case
// for the search postings (issue 13: ~14,100 distinct character pairs each):
// a second server with SEARCH_MEMORY_MB=64 must stay near that budget.
// Figures: docs/reliability.md.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { call, startServer, type RunningServer } from "../helpers/server.ts";
import { inBatches, NO_BREAKERS, register } from "../helpers/api.ts";
import { cjkBody, ensureBinary, procKb } from "./support.ts";

const NOTES = Number(process.env.MEMORY_NOTES ?? 3000);
const CACHE_MB = process.env.MEMORY_CACHE_MB ?? "16";

let server: RunningServer;
beforeAll(async () => {
  ensureBinary();
  // Similar-note hints off: this test is about the note cache, and on the database index's path
  // the lookup reads candidates' whole term vectors, which for 3,000 notes of 20,000 CJK
  // characters costs more than the test's budget on a shared host (docs/benchmarks.md, "Similar notes").
  server = await startServer({ binary: true, env: { ...NO_BREAKERS, NOTE_CACHE_MB: CACHE_MB, SEARCH_MEMORY_MB: "0", LOG_LEVEL: "warn", SIMILAR_NOTES: "0" } });
});
afterAll(async () => {
  await server?.stop();
});

test(
  `reading ${NOTES} notes of 20,000 CJK characters once grows RSS by the cache budget, not by the notes`,
  async () => {
    const author = await register(server.url);
    const ids = await inBatches(NOTES, 8, async (i) => {
      const res = await call(server.url, "POST", "/v1/posts", { key: author.key, json: { title: `cjk ${i}`, body: cjkBody(i) } });
      if (res.status !== 201) throw new Error(`create ${i}: ${res.status} ${res.text.slice(0, 200)}`);
      return res.data.id as string;
    });
    Bun.gc(true);
    await Bun.sleep(500);
    const pid = server.proc.pid;
    const before = procKb(pid, "VmRSS");
    const readAll = () =>
      inBatches(ids.length, 8, async (i) => {
        const res = await fetch(`${server.url}/v1/posts/${ids[i]}`, { headers: { authorization: `Bearer ${author.key}` } });
        if (res.status !== 200) throw new Error(`read ${i}: ${res.status}`);
        await res.arrayBuffer();
      });
    // RSS after reading holds what the cache keeps plus the reads' garbage the server has not
    // collected yet (it cannot be asked to): the least of five readings, each after reading every
    // note again, keeps the first and drops most of the second. A cache holding every note would
    // hold them at all five readings. (With three, one run of many on a loaded host read 117 MB
    // against the 114 MB bound: the garbage, not the cache.)
    const readings: number[] = [];
    for (let pass = 0; pass < 5; pass++) {
      await readAll();
      await Bun.sleep(500);
      readings.push(procKb(pid, "VmRSS"));
    }
    const after = Math.min(...readings);
    const peak = procKb(pid, "VmHWM");
    const growthMb = (after - before) / 1024;
    console.log(
      `MEMORY notes=${NOTES} NOTE_CACHE_MB=${CACHE_MB} rss_before=${(before / 1024).toFixed(0)}MB rss_after=${(after / 1024).toFixed(0)}MB (readings ${readings.map((kb) => (kb / 1024).toFixed(0)).join("/")}) growth=${growthMb.toFixed(0)}MB peak=${(peak / 1024).toFixed(0)}MB`,
    );
    // Caching every note costs ~78 KB each (233 MB for 3,000 with NOTE_CACHE_MB=1024). What
    // stays above the 16 MB budget is garbage the collector has not taken back yet (52 MB measured).
    if (process.env.MEMORY_CACHE_MB === undefined) expect(growthMb).toBeLessThan((NOTES * 78) / 1024 / 2);
  },
  300_000,
);

test("notes of 20,000 distinct CJK pairs each keep the search postings near SEARCH_MEMORY_MB", async () => {
  // Hints off here too: this test bounds the postings; what the lookup adds on these notes is in docs/benchmarks.md.
  const postingsServer = await startServer({ binary: true, env: { ...NO_BREAKERS, SEARCH_MEMORY_MB: "64", LOG_LEVEL: "warn", SIMILAR_NOTES: "0" } });
  try {
    const author = await register(postingsServer.url);
    const pid = postingsServer.proc.pid;
    const before = procKb(pid, "VmRSS");
    const count = 300; // ~14,100 distinct pairs each, 133,406 in all: the postings hold ~40 MB by their own count, ~78 MB of heap (docs/reliability.md)
    await inBatches(count, 8, async (i) => {
      const res = await call(postingsServer.url, "POST", "/v1/posts", { key: author.key, json: { title: `cjk postings ${i}`, body: cjkBody(10_000 + i) } });
      if (res.status !== 201) throw new Error(`create ${i}: ${res.status} ${res.text.slice(0, 200)}`);
    });
    // Search still answers, from the SQLite index once the postings are dropped.
    const found = await call(postingsServer.url, "POST", "/v1/search", { key: author.key, json: { query: cjkBody(10_007).slice(0, 4) } });
    expect(found.status).toBe(200);
    expect((found.data.results as { title: string }[]).map((r) => r.title)).toContain("cjk postings 7");
    const peak = procKb(pid, "VmHWM");
    console.log(`POSTINGS notes=${count} SEARCH_MEMORY_MB=64 rss_before=${(before / 1024).toFixed(0)}MB peak=${(peak / 1024).toFixed(0)}MB`);
    expect((peak - before) / 1024).toBeLessThan(600);
  } finally {
    await postingsServer.stop();
  }
}, 300_000);
