// A judged collection (../shared/eval) as a data directory the HTTP benches
// read: the notes loaded through the store's write path (bench/quality), a
// contributor with a key, and keys.json with that key and the collection's
// queries:
//   bun bench/collection-dir.ts --collection cqadupstack-webmasters --dir /tmp/webmasters
//   bun run build && bun bench/search-http.ts --dir /tmp/webmasters
import { cpSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mintKey } from "../src/core/keys.ts";
import { loadCollection, readCollection } from "./quality/collection.ts";
import { benchArgs } from "./wrk.ts";

const args = benchArgs();
const name = args.collection ?? "cqadupstack-webmasters";
const dir = args.dir;
if (!dir) throw new Error("--dir DIR: where the data directory is written");
const collection = readCollection(name);
if (!collection) throw new Error(`collection ${name} not found`);
const loaded = await loadCollection(collection);
const key = mintKey();
await loaded.store.createContributor({ email: "bench@example.org", keyPrefix: key.prefix, keyDigest: key.digest, createdAt: Date.now() });
await loaded.store.close();
cpSync(loaded.dataDir, dir, { recursive: true });
rmSync(loaded.dataDir, { recursive: true, force: true });
writeFileSync(join(dir, "keys.json"), JSON.stringify({ keys: [key.key], queries: collection.queries.map((q) => q.text) }));
console.log(`${dir}: ${collection.notes.length} notes of ${name}, ${collection.queries.length} queries`);
