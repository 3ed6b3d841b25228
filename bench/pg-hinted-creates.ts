// Creates with similar notes on (the default) through Cairn.createNote on one
// PostgreSQL replica, in process, for two checkouts side by side: this
// process's CPU per create (process.cpuUsage: the replica's side, PostgreSQL
// not included) and creates/s, the checkouts alternating round by round so
// the host's load hits them alike (docs/benchmarks.md, "Issue 20: own notes
// indexed at commit").
//   bun bench/pg-hinted-creates.ts --repos main=/path/to/main,this=. [--corpus 20000] [--rounds 3] [--seconds 4] [--writers 32]
// Each checkout gets a fresh database of --corpus notes like the bench's
// (written first with similar notes off), then --writers concurrent writers
// create bench notes (every one a near-duplicate of the others: the lookup's
// worst case) for --seconds per round.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { freshDatabase } from "../test/helpers/postgres.ts";
import { benchArgs } from "./wrk.ts";

const args = benchArgs();
const repos = (args.repos ?? `this=.`).split(",").map((pair) => pair.split("=", 2) as [string, string]);
const corpus = Number(args.corpus ?? 20_000);
const rounds = Number(args.rounds ?? 3);
const seconds = Number(args.seconds ?? 4);
const writers = Number(args.writers ?? 32);

const note = (i: number) => ({ title: `bench note ${i % 4}-${i}`, body: `a body of words about replicas and postgres, number ${i} ${Math.floor(Date.now() / 1000)}`, tags: ["bench"] });

interface Setup {
  name: string;
  cairnOn: { createNote: (author: number, note: { title: string; body: string; tags: string[] }) => Promise<unknown> };
  authors: number[];
  next: number;
}

async function setUp(name: string, repo: string): Promise<Setup> {
  const root = resolve(repo);
  const { PostgresStore } = await import(join(root, "src/store/postgres/store.ts"));
  const { Cairn } = await import(join(root, "src/core/service.ts"));
  const { loadConfig } = await import(join(root, "src/config.ts"));
  const store = new PostgresStore({ url: await freshDatabase(`hinted_${name.replace(/\W/g, "")}`), poolSize: 5, searchMemoryBytes: 2 ** 30 });
  await store.migrate();
  const authors: number[] = [];
  for (let i = 0; i < 64; i++) authors.push((await store.createContributor({ email: `h${i}@example.org`, keyPrefix: `cairn_h${i}`, keyDigest: new Uint8Array(32), createdAt: 0 })).contributorNo);
  const off = new Cairn(store, loadConfig({ POSTS_PER_HOUR: "0", SIMILAR_NOTES: "0" }));
  const setup: Setup = { name, cairnOn: new Cairn(store, loadConfig({ POSTS_PER_HOUR: "0" })), authors, next: 0 };
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (setup.next < corpus) {
        const i = setup.next++;
        await off.createNote(authors[i % authors.length], note(i));
      }
    }),
  );
  return setup;
}

async function round(setup: Setup): Promise<{ rate: number; cpuUs: number }> {
  const first = setup.next;
  const end = performance.now() + seconds * 1000;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      while (performance.now() < end) {
        const i = setup.next++;
        await setup.cairnOn.createNote(setup.authors[(i * 7 + w) % setup.authors.length], note(i));
      }
    }),
  );
  const cpu = process.cpuUsage(before);
  const made = setup.next - first;
  return { rate: made / seconds, cpuUs: (cpu.user + cpu.system) / made };
}

const setups: Setup[] = [];
for (const [name, repo] of repos) setups.push(await setUp(name, repo));
for (const setup of setups) await round(setup); // warm-up
const results = new Map<string, { rate: number; cpuUs: number }[]>();
for (let r = 1; r <= rounds; r++) {
  for (const setup of setups) {
    const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
    const result = await round(setup);
    results.set(setup.name, [...(results.get(setup.name) ?? []), result]);
    console.log(`round ${r} | ${setup.name} | ${Math.round(result.rate)} creates/s | ${result.cpuUs.toFixed(0)} µs CPU a create | load ${load}`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`\nhinted creates on one PostgreSQL replica, in process: corpus ${corpus} bench notes, ${writers} writers, ${seconds} s rounds`);
console.log("| checkout | creates/s, median (rounds) | µs CPU a create, median (rounds) |\n|---|---|---|");
for (const [name, list] of results)
  console.log(`| ${name} | ${Math.round(median(list.map((x) => x.rate)))} (${list.map((x) => Math.round(x.rate)).join(", ")}) | ${median(list.map((x) => x.cpuUs)).toFixed(0)} (${list.map((x) => x.cpuUs.toFixed(0)).join(", ")}) |`);
process.exit(0);
