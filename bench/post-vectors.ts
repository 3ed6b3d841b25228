// What sending a write batch's vectors to the search thread costs the sender
// (SearchThread.committed): a postMessage of ten ~2 KB head-heavy notes'
// vectors as stored strings only, as worded vectors (one buffer each: no
// string) copied, and moved (transferred), in wall µs a note, least of 5
// rounds of 2,000 notes, a second pass after the first (warm):
//   bun bench/post-vectors.ts
// Figures: docs/benchmarks.md, "Eleventh round".
import { headNote } from "./headheavy.ts";
import { noteVector, wordedVector, type WordedVector } from "../src/core/search/vector.ts";

const worker = new Worker(URL.createObjectURL(new Blob(['self.onmessage = (e) => { if (e.data === "done") self.postMessage("done"); };'], { type: "text/javascript" })));
const vectors = Array.from({ length: 2000 }, (_, i) => {
  const note = headNote("post-vectors", i);
  return noteVector(note.title, note.tags, note.body);
});
await Bun.sleep(200);

function run(label: string, form: "strings" | "copied" | "moved"): void {
  let least = Infinity;
  for (let round = 0; round < 5; round++) {
    const batches: Map<number, string | WordedVector>[] = [];
    for (let at = 0; at < vectors.length; at += 10) batches.push(new Map(vectors.slice(at, at + 10).map((v, i) => [i, form === "strings" ? v.encoded : wordedVector(v)])));
    const started = performance.now();
    for (const committed of batches) {
      const moved: ArrayBuffer[] = [];
      if (form === "moved") for (const v of committed.values()) if (typeof v !== "string") moved.push(v.words.buffer as ArrayBuffer);
      worker.postMessage({ committed }, moved);
    }
    least = Math.min(least, ((performance.now() - started) * 1000) / vectors.length);
  }
  console.log(`${label}: ${least.toFixed(2)} µs a note`);
}
for (let pass = 0; pass < 2; pass++) {
  console.log(pass === 0 ? "first pass" : "second pass");
  run("  stored strings only", "strings");
  run("  worded, buffers copied", "copied");
  run("  worded, buffers moved", "moved");
}
worker.postMessage("done");
worker.onmessage = () => process.exit(0);
