// Fills a data directory with N synthetic notes for benchmarks.
//   bun bench/seed.ts --dir /tmp/cairn-bench --notes 100000 [--contributors 1000]
// Writes <dir>/keys.json with every contributor's API key (bench only).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { uuidv7 } from "../src/core/ids.ts";
import { mintKey } from "../src/core/keys.ts";
import { SqliteStore } from "../src/store/sqlite/store.ts";

const args = Object.fromEntries(
  process.argv.slice(2).reduce<[string, string][]>((pairs, arg, i, all) => {
    if (arg.startsWith("--")) pairs.push([arg.slice(2), all[i + 1]]);
    return pairs;
  }, []),
);
const dir = args.dir ?? "/tmp/cairn-bench";
const notes = Number(args.notes ?? 100_000);
const contributorCount = Number(args.contributors ?? 1000);

const WORDS = (
  "sqlite wal checkpoint deadlock mutex thread pool queue retry backoff timeout socket tls certificate proxy nginx " +
  "kubernetes pod container image registry cache eviction memory leak heap profile flamegraph latency throughput " +
  "index btree query planner vacuum migration schema column constraint foreign key transaction isolation snapshot " +
  "rust borrow checker lifetime trait async await future tokio runtime panic unwrap error handling result option " +
  "python virtualenv pip wheel dependency resolver typescript compiler bundler esbuild webpack module import export " +
  "git rebase merge conflict branch commit hook bisect cherry pick stash worktree submodule signing gpg ssh agent " +
  "postgres replication logical slot vacuum autovacuum bloat toast partition sharding connection pooler pgbouncer " +
  "linux kernel cgroup namespace systemd journal unit service socket activation ulimit file descriptor epoll io_uring"
).split(" ");
const TAGS = Array.from(new Set(WORDS)).slice(0, 300);

let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)];

// A Zipf-distributed vocabulary: the technical words above spread among
// 20,000 generated words, so posting lists have realistic lengths (a few very
// common words, a long tail of rare ones), plus English function words.
const FUNCTION_WORDS = "the a an to of in on for with is are was be it this that when then if or and but not by from at as we you".split(" ");
const SYLLABLES = "ka lo mi ne ru ta vo shi pe la dro fen gal hup ister ment tion able ing ed er or al ic ous ive".split(" ");
const vocabulary: string[] = [];
for (let i = 0; vocabulary.length < 20_000; i++) {
  const parts = 2 + (i % 3);
  let word = "";
  for (let p = 0, n = i; p < parts; p++, n = Math.floor(n / SYLLABLES.length) + p * 7) word += SYLLABLES[n % SYLLABLES.length];
  vocabulary.push(word + (i >= SYLLABLES.length ** 2 ? String(i % 97) : ""));
}
WORDS.forEach((word, i) => (vocabulary[20 + i * 37] = word));
const cumulative: number[] = [];
let total = 0;
for (let rank = 1; rank <= vocabulary.length; rank++) cumulative.push((total += 1 / rank));
function zipfWord(): string {
  const target = rand() * total;
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid] < target) lo = mid + 1;
    else hi = mid;
  }
  return vocabulary[lo];
}
const sentence = (min: number, max: number) =>
  Array.from({ length: min + Math.floor(rand() * (max - min + 1)) }, () => (rand() < 0.4 ? pick(FUNCTION_WORDS) : zipfWord())).join(" ");

const store = new SqliteStore({ dataDir: dir });
await store.migrate();
const keys: string[] = [];
const insertContributor = store.sqlite.prepare(
  "INSERT INTO contributors (email, key_prefix, key_digest, active, created_at) VALUES (?, ?, ?, 1, ?)",
);
const insertNote = store.sqlite.prepare(
  "INSERT INTO posts (id, contributor_no, title, body, tags, score, comment_count, created_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?)",
);
const started = performance.now();
store.sqlite.transaction(() => {
  for (let i = 0; i < contributorCount; i++) {
    const key = mintKey();
    keys.push(key.key);
    insertContributor.run(`bench${i}@example.org`, key.prefix, key.digest, Date.now());
  }
})();
const ids: string[] = [];
const batch = 10_000;
for (let done = 0; done < notes; done += batch) {
  store.sqlite.transaction(() => {
    for (let i = done; i < Math.min(notes, done + batch); i++) {
      const id = uuidv7();
      ids.push(id);
      const tags = Array.from(new Set(Array.from({ length: 1 + Math.floor(rand() * 5) }, () => pick(TAGS))));
      insertNote.run(
        id,
        1 + (i % contributorCount),
        sentence(5, 12),
        sentence(50, 800),
        JSON.stringify(tags),
        Math.floor(rand() * 20) - 5,
        Date.now(),
      );
    }
  })();
}
await store.close();
writeFileSync(join(dir, "keys.json"), JSON.stringify({ keys, ids: ids.filter((_, i) => i % Math.max(1, Math.floor(notes / 1000)) === 0) }));
console.log(`seeded ${notes} notes, ${contributorCount} contributors in ${((performance.now() - started) / 1000).toFixed(1)} s → ${dir}`);
