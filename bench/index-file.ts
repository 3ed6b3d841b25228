// The in-memory postings written to a file and read back, for benches only:
// a 1M-note index takes ~2 minutes to build from a database and seconds to
// read from its dump (bench/rank-memory.ts --save / --load). Reaches into
// MemoryIndex's private fields on purpose; not a storage format.
import { readFileSync, writeFileSync } from "node:fs";
import { MemoryIndex, TermPostings } from "../src/core/search/memory-index.ts";

// biome-ignore lint: benches reach into the index
type Loose = any;

export function saveIndex(index: MemoryIndex, path: string): void {
  const x = index as Loose;
  const terms = index.termEntries();
  const header = {
    nextOrdinal: x.nextOrdinal,
    notes: index.notes,
    lengthSums: index.lengthSums,
    removed: x.removed,
    terms: terms.map(([term, p]) => [term, p.length, p.size, p.notes, p.last, p.skips ? p.skips.length : 0]),
  };
  const head = Buffer.from(JSON.stringify(header));
  const n = x.nextOrdinal as number;
  const parts: Uint8Array[] = [new Uint8Array(new Uint32Array([head.length]).buffer), head];
  const pad = (bytes: Uint8Array) => {
    parts.push(bytes);
    const rest = bytes.length % 8;
    if (rest) parts.push(new Uint8Array(8 - rest));
  };
  const total = parts.reduce((s, p) => s + p.length, 0);
  if (total % 8) parts.push(new Uint8Array(8 - (total % 8)));
  pad(new Uint8Array((x.keys as Float64Array).buffer, 0, 8 * n));
  pad(new Uint8Array((x.fieldLengths as Uint32Array).buffer, 0, 12 * n));
  pad((x.live as Uint8Array).subarray(0, n));
  for (const [, p] of terms) {
    pad(p.data.subarray(0, p.length));
    if (p.skips) pad(new Uint8Array(p.skips.buffer, p.skips.byteOffset, p.skips.byteLength));
  }
  writeFileSync(path, Buffer.concat(parts));
}

export function loadIndex(path: string): MemoryIndex {
  const file = readFileSync(path);
  const bytes = new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
  const headLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true);
  const header = JSON.parse(Buffer.from(bytes.subarray(4, 4 + headLength)).toString());
  let at = 4 + headLength;
  if (at % 8) at += 8 - (at % 8);
  const take = (length: number) => {
    const slice = bytes.slice(at, at + length);
    at += length;
    if (at % 8) at += 8 - (at % 8);
    return slice;
  };
  const n = header.nextOrdinal as number;
  const index = new MemoryIndex();
  const x = index as Loose;
  x.keys = new Float64Array(take(8 * n).buffer);
  x.fieldLengths = new Uint32Array(take(12 * n).buffer);
  x.live = take(n);
  x.nextOrdinal = n;
  x.removed = header.removed;
  index.notes = header.notes;
  for (let f = 0; f < 3; f++) index.lengthSums[f] = header.lengthSums[f];
  const ordinalOfKey = x.ordinalOfKey as Map<number, number>;
  for (let o = 0; o < n; o++) if (x.live[o]) ordinalOfKey.set(x.keys[o], o);
  for (const [term, length, size, notes, last, skipCount] of header.terms as [string, number, number, number, number, number][]) {
    const p = new TermPostings(0);
    p.data = take(length);
    p.length = length;
    p.size = size;
    p.notes = notes;
    p.last = last;
    if (skipCount > 0) p.skips = new Int32Array(take(4 * skipCount).buffer);
    x.newTerm(term, p);
  }
  return index;
}
