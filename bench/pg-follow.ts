// What following another replica's writes costs a replica, in process: two
// PostgresStores on one fresh database, a writer (Cairn.createNote, similar
// notes off, 16 at a time) and a follower whose timer is stopped; each round
// the writer creates --batch notes, then the follower catches up once
// (SearchFollower.follow: the log read, its rows decoded, MemoryIndex.add of
// every vector) and this process's CPU for that catch-up alone is divided by
// the notes. Checkouts side by side, alternating round by round:
//   bun bench/pg-follow.ts --repos main=/path/to/main,this=. [--notes short|real] [--corpus 20000] [--batch 400] [--rounds 15]
// short: bench/replicas.ts's one-line notes; real: the seeder's prose (bench/seed.ts, ~1-2 KB).
// The PostgreSQL is the tests' throwaway cluster (test/helpers/postgres.ts). Figures: docs/benchmarks.md.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { freshDatabase } from "../test/helpers/postgres.ts";
import { seedNote } from "./seed.ts";
import { benchArgs } from "./wrk.ts";

const args = benchArgs();
const repos = (args.repos ?? "this=.").split(",").map((pair) => pair.split("=", 2) as [string, string]);
const kind = args.notes ?? "short";
const corpus = Number(args.corpus ?? 20_000);
const batch = Number(args.batch ?? 400);
const rounds = Number(args.rounds ?? 15);

let counter = 0;
function note(i: number): { title: string; body: string; tags: string[] } {
  const n = counter++;
  if (kind === "short") return { title: `bench ${n % 4}-${n}`, body: `a body of words about replicas and postgres, number ${n} ${i}`, tags: ["bench"] };
  const seeded = seedNote("pg-follow", n % 2000);
  return { title: `${seeded.title} ${n}`, body: seeded.body, tags: seeded.tags };
}

// biome-ignore lint: stores are imported from other source trees
type Loose = any;
interface Setup {
  name: string;
  write: (i: number) => Promise<unknown>;
  follower: Loose;
  stores: Loose[];
  authors: number[];
}

async function setUp(name: string, repo: string): Promise<Setup> {
  const root = resolve(repo);
  const { PostgresStore } = await import(join(root, "src/store/postgres/store.ts"));
  const { Cairn } = await import(join(root, "src/core/service.ts"));
  const { loadConfig } = await import(join(root, "src/config.ts"));
  const url = await freshDatabase(`follow_${name.replace(/\W/g, "")}`);
  const writer = new PostgresStore({ url, poolSize: 5, searchMemoryBytes: 2 ** 30 });
  await writer.migrate();
  const authors: number[] = [];
  for (let i = 0; i < 64; i++) authors.push((await writer.createContributor({ email: `f${i}@example.org`, keyPrefix: `cairn_f${i}`, keyDigest: new Uint8Array(32), createdAt: 0 })).contributorNo);
  const cairn = new Cairn(writer, loadConfig({ POSTS_PER_HOUR: "0", SIMILAR_NOTES: "0" }));
  const write = (i: number) => cairn.createNote(authors[i % authors.length], note(i));
  await writeMany(write, corpus);
  const follower = new PostgresStore({ url, poolSize: 5, searchMemoryBytes: 2 ** 30 });
  await follower.migrate();
  await follower.searchIndex.memory.loaded();
  // The timer off: every catch-up is the one measured.
  const memory = follower.searchIndex.memory as Loose;
  if (memory.timer) clearInterval(memory.timer);
  memory.timer = null;
  await memory.follow();
  return { name, write, follower: memory, stores: [writer, follower], authors };
}

async function writeMany(write: (i: number) => Promise<unknown>, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < count) await write(next++);
    }),
  );
}

async function round(setup: Setup): Promise<number> {
  await writeMany(setup.write, batch);
  Bun.gc(false);
  const before = process.cpuUsage();
  await setup.follower.follow();
  const cpu = process.cpuUsage(before);
  return (cpu.user + cpu.system) / batch;
}

const setups: Setup[] = [];
for (const [name, repo] of repos) setups.push(await setUp(name, repo));
for (const setup of setups) await round(setup); // warm-up
const results = new Map<string, number[]>();
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? setups : [...setups].reverse();
  for (const setup of order) results.set(setup.name, [...(results.get(setup.name) ?? []), await round(setup)]);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`following ${batch} ${kind} notes a round after ${corpus}, ${rounds} rounds alternating, load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}, ${new Date().toISOString()}`);
console.log("| checkout | follower CPU µs a note, median | by round |\n|---|---|---|");
for (const { name } of setups) {
  const xs = results.get(name)!;
  console.log(`| ${name} | ${median(xs).toFixed(1)} | ${xs.map((x) => x.toFixed(1)).join(", ")} |`);
}
for (const setup of setups) for (const store of setup.stores) await store.close();
process.exit(0);
