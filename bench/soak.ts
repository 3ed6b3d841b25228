// Load and soak: a mixed workload against a fresh server for a fixed time.
//   bun run soak                          # 300 s (the documented 5-minute soak)
//   bun bench/soak.ts --duration 20 --seed-notes 20000   # the CI run (test/reliability/soak.test.ts)
// Flags: --duration S (300), --workers N (32 concurrent closed-loop clients),
//   --contributors N (1000), --seed-notes N (500), --source (run `bun src/main.ts`
//   instead of dist/cairn), --durability normal|full, --keep (keep the data dir),
//   --memory-margin-mb M (16), --mix R,S,V,C,N (percentages; 70,15,5,5,5).
//
// Workload per request: 70% GET /v1/posts/{id}, 15% POST /v1/search, 5% votes,
// 5% comments, 5% note creations; every request by a random one of the
// registered contributors; breakers off. Every 10 s it prints the rate, p50/p99
// latency and the server's resident memory. At the end it checks:
// - zero 5xx, zero unexpected answers, zero connection errors;
// - zero lost writes: `cairn admin stats` counts equal what the client saw
//   succeed (notes, comments, votes as distinct voter/note pairs whose last
//   value is up or down), and a sample of notes shows the expected
//   comment_count and score;
// - memory flat after warm-up: the floor of RSS in the last third of the run
//   (its least sample, taken 4 times a second: what is left just after the
//   collector ran) is within max(margin, 10%) of the middle third's floor, plus
//   what the search postings hold by design for the notes written meanwhile.
//   Means swing by tens of MB with the garbage awaiting collection at the
//   moment of a sample (docs/reliability.md); a leak raises the floor.
// Exits 1 when an invariant is violated. The last line is `SOAK_RESULT {json}`.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { termVector } from "../src/core/search/analyzer.ts";
import { POSTING_BYTES, TERM_BYTES } from "../src/core/search/memory-index.ts";

// ---------- settings ----------
const argv = process.argv.slice(2);
function flag(name: string, fallback: string): string {
  const i = argv.indexOf(`--${name}`);
  if (i >= 0 && argv[i + 1] !== undefined && !argv[i + 1].startsWith("--")) return argv[i + 1];
  const inline = argv.find((a) => a.startsWith(`--${name}=`));
  return inline ? inline.slice(name.length + 3) : fallback;
}
const has = (name: string) => argv.includes(`--${name}`);
const DURATION_S = Number(flag("duration", "300"));
const WORKERS = Number(flag("workers", "32"));
const CONTRIBUTORS = Number(flag("contributors", "1000"));
const SEED_NOTES = Number(flag("seed-notes", "500"));
const DURABILITY = flag("durability", "normal");
const MEMORY_MARGIN_MB = Number(flag("memory-margin-mb", "16"));
/** Percentages of reads, searches, votes, comments, creates. */
const MIX = flag("mix", "70,15,5,5,5").split(",").map(Number);
if (MIX.length !== 5 || MIX.some((n) => !(n >= 0)) || MIX.reduce((a, b) => a + b, 0) !== 100) {
  console.error("--mix takes five percentages adding up to 100: reads,searches,votes,comments,creates");
  process.exit(2);
}
const CUT = MIX.map((_, i) => MIX.slice(0, i + 1).reduce((a, b) => a + b, 0));
const REPORT_EVERY_S = 10;
// Often enough that each third has samples taken just after a collection.
const RSS_SAMPLE_MS = 250;
const ROOT = join(import.meta.dir, "..");
const BINARY = join(ROOT, "dist/cairn");
const useBinary = !has("source") && existsSync(BINARY);
const command = useBinary ? [BINARY] : [process.execPath, join(ROOT, "src/main.ts")];

// ---------- server ----------
const dataDir = mkdtempSync(join(tmpdir(), "cairn-soak-"));
const env: Record<string, string> = {
  ...(process.env as Record<string, string>),
  HOST: "127.0.0.1",
  PORT: "0",
  DATA_DIR: dataDir,
  LOG_LEVEL: "info",
  DURABILITY,
  POSTS_PER_HOUR: "0",
  COMMENTS_PER_HOUR: "0",
  VOTES_PER_HOUR: "0",
  SEARCHES_PER_HOUR: "0",
  REGISTRATIONS_PER_HOUR: "0",
  WEB_EVENTS_PER_HOUR: "0",
};
const server = Bun.spawn([...command, "serve"], { env, stdout: "pipe", stderr: "pipe" });
let head = ""; // the first lines, to find the URL
let serverErrors: string[] = []; // error/warn lines and 5xx request lines
let requestLines = 0;
const lifecycle: string[] = []; // other lines: listening, draining (with the signal), stopped
async function drain(stream: ReadableStream<Uint8Array>) {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      if (head.length < 4096) head += line + "\n";
      if (line.includes('"msg":"request"')) {
        requestLines++;
        if (/"status":5\d\d/.test(line)) serverErrors.push(line);
      } else if (/"level":"(warn|error)"/.test(line) || (line && !line.startsWith("{"))) serverErrors.push(line);
      else if (line) lifecycle.push(line);
    }
  }
}
void drain(server.stdout as ReadableStream<Uint8Array>);
void drain(server.stderr as ReadableStream<Uint8Array>);

let base = "";
for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
  const match = head.match(/"listening","url":"(http:\/\/[^"]+)"/);
  if (match) {
    base = match[1];
    break;
  }
  if (server.exitCode !== null) break;
  await Bun.sleep(20);
}
if (!base) {
  console.error(`server did not start:\n${head}\n${serverErrors.join("\n")}`);
  process.exit(1);
}

let finishing = false;
let serverGone = "";
void server.exited.then((code) => {
  if (finishing) return;
  serverGone = `the server exited during the run: code ${code}, signal ${server.signalCode}`;
  console.error(serverGone);
  console.error(`its last lines:\n${[...lifecycle.slice(-5), ...serverErrors.slice(-20)].join("\n")}`);
});

function rssMb(): number {
  try {
    const status = readFileSync(`/proc/${server.pid}/status`, "utf8");
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

async function admin(...args: string[]): Promise<any> {
  const child = Bun.spawn([...command, "admin", ...args], { env, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`cairn admin ${args.join(" ")} exited ${code}: ${err}`);
  return JSON.parse(out);
}

// ---------- content ----------
// A vocabulary of 1,000 words: 160 technical terms (the most frequent) and
// pronounceable made-up identifiers. Note text draws words with a Zipf-like
// (log-uniform rank) law, so a few words are everywhere and most are rare;
// queries draw 1-3 words uniformly past the 20 most common, as agents search
// for specific terms.
const TERMS = (
  "the a to of and in is for on with error file run build test server client request response config value " +
  "sqlite wal checkpoint deadlock mutex tokio runtime panic borrow checker lifetime kubernetes pod eviction " +
  "postgres replication slot vacuum bloat index btree planner rebase conflict cherry pick submodule ssh agent " +
  "tls certificate proxy timeout retry backoff cache flamegraph latency throughput migration schema column " +
  "foreign key constraint transaction isolation snapshot heap profile memory leak descriptor epoll cgroup " +
  "namespace container image registry webpack bundler esbuild typescript generic inference async await " +
  "docker compose volume mount permission denied segfault core dump stack trace overflow underflow integer " +
  "float precision unicode utf8 encoding decoder parser lexer grammar token regex match capture group " +
  "thread pool queue worker scheduler cron job signal handler socket bind listen accept connect refused " +
  "dns resolver hostname port firewall iptables nginx upstream gateway header cookie session token jwt oauth"
).split(" ");
const SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "sa", "do", "fu", "gi", "ha", "jo", "be", "xu", "qi", "we", "yo"];
const VOCABULARY = [...new Set(TERMS)];
for (let i = 0; VOCABULARY.length < 1000; i++) {
  let word = "";
  for (let n = i + 7919; n > 0; n = Math.floor(n / SYLLABLES.length)) word += SYLLABLES[n % SYLLABLES.length];
  if (!VOCABULARY.includes(word)) VOCABULARY.push(word);
}
const pick = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)];
const zipfWord = () => VOCABULARY[Math.floor(Math.exp(Math.random() * Math.log(VOCABULARY.length + 1))) - 1];
const words = (min: number, max: number) =>
  Array.from({ length: min + Math.floor(Math.random() * (max - min + 1)) }, zipfWord).join(" ");
const queryText = () =>
  Array.from({ length: 1 + Math.floor(Math.random() * 3) }, () => VOCABULARY[20 + Math.floor(Math.random() * (VOCABULARY.length - 20))]).join(" ");
const tag = () => VOCABULARY[20 + Math.floor(Math.random() * 300)];
let serial = 0;

// ---------- client state ----------
interface Who {
  no: number;
  key: string;
}
interface NoteRef {
  id: string;
  author: number;
}
const contributors: Who[] = [];
const notes: NoteRef[] = [];
const expectedComments = new Map<string, number>();
/** Last vote value per `${voter}|${noteId}`: 1, -1 or 0. */
const lastVote = new Map<string, number>();
const votesInFlight = new Set<string>();

const counts = { reads: 0, searches: 0, votes: 0, comments: 0, creates: 0 };
let errors5xx = 0;
let unexpected = 0;
let networkErrors = 0;
const examples: string[] = [];

async function request(method: string, path: string, key: string | null, body?: unknown): Promise<{ status: number; data: any; ms: number }> {
  const started = performance.now();
  const headers: Record<string, string> = {};
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const ms = performance.now() - started;
  let data: any = null;
  try {
    data = JSON.parse(text);
  } catch {}
  return { status: res.status, data, ms };
}

function note(kind: string, status: number, detail: unknown) {
  if (status >= 500) errors5xx++;
  else unexpected++;
  if (examples.length < 10) examples.push(`${kind}: ${status} ${JSON.stringify(detail).slice(0, 200)}`);
}

// ---------- set-up: contributors and seed notes ----------
const setupStarted = performance.now();
async function inParallel(count: number, width: number, job: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) await job(next++);
    }),
  );
}
await inParallel(CONTRIBUTORS, 16, async (i) => {
  const res = await request("POST", "/v1/register", null, { email: `soak-${i}-${Date.now().toString(36)}@example.org` });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(res.data)}`);
  contributors.push({ no: res.data.contributor_no, key: res.data.api_key });
});
await inParallel(SEED_NOTES, 16, async (i) => {
  const who = contributors[i % contributors.length];
  const res = await request("POST", "/v1/posts", who.key, { title: `Seed ${i}: ${words(5, 12)}`, body: words(50, 300), tags: [tag(), tag()] });
  if (res.status !== 201) throw new Error(`seed note: ${res.status} ${JSON.stringify(res.data)}`);
  notes.push({ id: res.data.id, author: who.no });
});
console.log(
  `soak: ${useBinary ? "dist/cairn" : "bun src/main.ts"}, DURABILITY=${DURABILITY}, ${WORKERS} workers, ${DURATION_S} s; ` +
    `${contributors.length} contributors and ${notes.length} notes set up in ${Math.round(performance.now() - setupStarted)} ms; server RSS ${rssMb().toFixed(1)} MB`,
);

// ---------- the workload ----------
let interval: number[] = [];
const all: number[] = [];
const byKind: Record<string, number[]> = {};
const rssSeries: { t: number; mb: number }[] = [];
// What the server's in-memory search postings hold by design for each note
// written (docs/design.md, "Search"): they grow with the notes, so the memory
// check below allows for them (twice over: arrays grow by half again, and
// the arrays they replace wait for the collector).
const postingsGrowth: { t: number; bytes: number }[] = [];
const seenTerms = new Set<string>();
function postingsBytes(note: { title: string; body: string; tags: string[] }): number {
  const { counts } = termVector(note.title, note.tags, note.body);
  let fresh = 0;
  for (const term of counts.keys()) if (!seenTerms.has(term)) (seenTerms.add(term), fresh++);
  return 2 * (counts.size * POSTING_BYTES + fresh * TERM_BYTES);
}
const started = performance.now();
const deadline = started + DURATION_S * 1000;

async function oneOperation() {
  const who = pick(contributors);
  const roll = Math.random() * 100;
  const kind = roll < CUT[0] ? "read" : roll < CUT[1] ? "search" : roll < CUT[2] ? "vote" : roll < CUT[3] ? "comment" : "create";
  let res: { status: number; data: any; ms: number };
  if (roll < CUT[0]) {
    const target = pick(notes);
    res = await request("GET", `/v1/posts/${target.id}`, who.key);
    if (res.status === 200 && res.data?.id === target.id) counts.reads++;
    else note("read", res.status, res.data);
  } else if (roll < CUT[1]) {
    res = await request("POST", "/v1/search", who.key, { query: queryText() });
    if (res.status === 200 && Array.isArray(res.data?.results)) counts.searches++;
    else note("search", res.status, res.data);
  } else if (roll < CUT[2]) {
    let target = pick(notes);
    let pair = `${who.no}|${target.id}`;
    for (let tries = 0; (target.author === who.no || votesInFlight.has(pair)) && tries < 10; tries++) {
      target = pick(notes);
      pair = `${who.no}|${target.id}`;
    }
    if (target.author === who.no || votesInFlight.has(pair)) return;
    const vote = pick(["up", "down", "none"] as const);
    votesInFlight.add(pair);
    try {
      res = await request("POST", `/v1/posts/${target.id}/vote`, who.key, { vote });
    } finally {
      votesInFlight.delete(pair);
    }
    if (res.status === 200 && res.data?.your_vote === vote) {
      counts.votes++;
      lastVote.set(pair, vote === "up" ? 1 : vote === "down" ? -1 : 0);
    } else note("vote", res.status, res.data);
  } else if (roll < CUT[3]) {
    const target = pick(notes);
    res = await request("POST", `/v1/posts/${target.id}/comments`, who.key, { body: `Comment ${++serial}: ${words(5, 30)}` });
    if (res.status === 201) {
      counts.comments++;
      expectedComments.set(target.id, (expectedComments.get(target.id) ?? 0) + 1);
    } else note("comment", res.status, res.data);
  } else {
    const created = { title: `Note ${++serial}: ${words(5, 12)}`, body: words(50, 300), tags: [tag()] };
    res = await request("POST", "/v1/posts", who.key, created);
    if (res.status === 201) {
      counts.creates++;
      notes.push({ id: res.data.id, author: who.no });
      postingsGrowth.push({ t: (performance.now() - started) / 1000, bytes: postingsBytes(created) });
    } else note("create", res.status, res.data);
  }
  interval.push(res.ms);
  all.push(res.ms);
  (byKind[kind] ??= []).push(res.ms);
}

async function worker() {
  while (performance.now() < deadline && !serverGone) {
    try {
      await oneOperation();
    } catch (error) {
      networkErrors++;
      if (examples.length < 10) examples.push(`network: ${String(error)}`);
      await Bun.sleep(10);
    }
  }
}

const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);
const sampler = setInterval(() => rssSeries.push({ t: (performance.now() - started) / 1000, mb: rssMb() }), RSS_SAMPLE_MS);
let lastReport = started;
const reporter = setInterval(() => {
  const now = performance.now();
  const sorted = interval.sort((a, b) => a - b);
  const rate = sorted.length / ((now - lastReport) / 1000);
  console.log(
    `t=${Math.round((now - started) / 1000)}s rate=${Math.round(rate)} req/s p50=${percentile(sorted, 50).toFixed(2)}ms ` +
      `p99=${percentile(sorted, 99).toFixed(2)}ms rss=${rssMb().toFixed(1)}MB notes=${notes.length} errors=${errors5xx + unexpected + networkErrors}`,
  );
  interval = [];
  lastReport = now;
}, REPORT_EVERY_S * 1000);

await Promise.all(Array.from({ length: WORKERS }, worker));
const elapsed = (performance.now() - started) / 1000;
clearInterval(sampler);
clearInterval(reporter);

// ---------- the checks ----------
const problems: string[] = [];
const total = counts.reads + counts.searches + counts.votes + counts.comments + counts.creates;
const sortedAll = all.sort((a, b) => a - b);

if (errors5xx) problems.push(`${errors5xx} answers were 5xx`);
if (unexpected) problems.push(`${unexpected} answers were unexpected (non-2xx or wrong body)`);
if (networkErrors) problems.push(`${networkErrors} requests failed to connect or were cut`);
if (server.exitCode !== null) problems.push(`the server exited with ${server.exitCode}`);

if (serverGone) {
  // Stopped from outside (a draining line names the signal): the write checks would be moot.
  console.log(`FAIL: ${serverGone}; ${total} requests had run in ${elapsed.toFixed(1)} s`);
  console.log(`SOAK_RESULT ${JSON.stringify({ problems: [serverGone], requests: total, counts })}`);
  if (!has("keep")) rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
}

// Writes: what the server holds against what the client saw succeed.
const stats = await admin("stats");
const liveVotes = [...lastVote.values()].filter((v) => v !== 0).length;
const expected = { contributors: contributors.length, notes: notes.length, comments: counts.comments, votes: liveVotes };
for (const [name, value] of Object.entries(expected)) {
  if (stats[name] !== value) problems.push(`admin stats ${name} = ${stats[name]}, the client counted ${value}`);
}
// A sample of notes: comment_count and score as the client's successful requests say.
const scores = new Map<string, number>();
for (const [pair, value] of lastVote) {
  const id = pair.slice(pair.indexOf("|") + 1);
  scores.set(id, (scores.get(id) ?? 0) + value);
}
const sample = [...new Set([...[...scores.keys()].slice(0, 300), ...[...expectedComments.keys()].slice(0, 300), ...Array.from({ length: 200 }, () => pick(notes).id)])];
const reader = contributors[0].key;
let sampleMismatches = 0;
await inParallel(sample.length, 16, async (i) => {
  const id = sample[i];
  const res = await request("GET", `/v1/posts/${id}`, reader).catch((error) => ({ status: 0, data: { error: String(error) }, ms: 0 }));
  const want = { score: scores.get(id) ?? 0, comment_count: expectedComments.get(id) ?? 0 };
  if (res.status !== 200 || res.data.score !== want.score || res.data.comment_count !== want.comment_count) {
    sampleMismatches++;
    if (sampleMismatches <= 5) problems.push(`note ${id}: got ${res.status} score=${res.data?.score} comments=${res.data?.comment_count}, expected ${JSON.stringify(want)}`);
  }
});
if (sampleMismatches > 5) problems.push(`… ${sampleMismatches} sampled notes differ in all`);

// Memory: last third against the middle third (the first third is warm-up).
const third = DURATION_S / 3;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const middle = rssSeries.filter((s) => s.t >= third && s.t < 2 * third).map((s) => s.mb);
const last = rssSeries.filter((s) => s.t >= 2 * third).map((s) => s.mb);
const middleMb = Math.min(...middle);
const lastMb = Math.min(...last);
// The postings written between the middle of the middle third and the middle of the last.
const postingsMb =
  postingsGrowth.filter((g) => g.t >= 1.5 * third && g.t < 2.5 * third).reduce((sum, g) => sum + g.bytes, 0) / 1048576;
const allowedMb = Math.max(MEMORY_MARGIN_MB, middleMb * 0.1) + postingsMb;
if (!(middle.length && last.length)) problems.push("too few memory samples to judge");
else if (lastMb - middleMb > allowedMb) {
  problems.push(`memory grew after warm-up: floor of the middle third ${middleMb.toFixed(1)} MB, of the last third ${lastMb.toFixed(1)} MB (allowed +${allowedMb.toFixed(1)} MB, of which ${postingsMb.toFixed(1)} MB for the search postings of the notes written meanwhile)`);
}

// The server's own account: no 5xx request line and no warning or error.
finishing = true;
server.kill("SIGTERM");
await server.exited;
await Bun.sleep(50);
if (serverErrors.length) problems.push(`server printed ${serverErrors.length} warning/error/5xx lines, e.g. ${serverErrors[0].slice(0, 300)}`);

const result = {
  seconds: Math.round(elapsed),
  seed_notes: SEED_NOTES,
  workers: WORKERS,
  durability: DURABILITY,
  requests: total,
  rate: Math.round(total / elapsed),
  p50_ms: Number(percentile(sortedAll, 50).toFixed(2)),
  p99_ms: Number(percentile(sortedAll, 99).toFixed(2)),
  p999_ms: Number(percentile(sortedAll, 99.9).toFixed(2)),
  max_ms: Number((sortedAll.at(-1) ?? NaN).toFixed(2)),
  counts,
  latency_by_kind_ms: Object.fromEntries(
    Object.entries(byKind).map(([kind, xs]) => {
      const sorted = xs.sort((a, b) => a - b);
      return [kind, { p50: Number(percentile(sorted, 50).toFixed(2)), p99: Number(percentile(sorted, 99).toFixed(2)) }];
    }),
  ),
  stats: { contributors: stats.contributors, notes: stats.notes, comments: stats.comments, votes: stats.votes },
  rss_mb: {
    start: Number((rssSeries[0]?.mb ?? NaN).toFixed(1)),
    middle_third_floor: Number(middleMb.toFixed(1)),
    last_third_floor: Number(lastMb.toFixed(1)),
    middle_third_mean: Number(mean(middle).toFixed(1)),
    last_third_mean: Number(mean(last).toFixed(1)),
    max: Number(Math.max(...rssSeries.map((s) => s.mb)).toFixed(1)),
  },
  errors: { http5xx: errors5xx, unexpected, network: networkErrors, server_lines: serverErrors.length },
  request_log_lines: requestLines,
  problems,
};

console.log(
  `\n${total} requests in ${elapsed.toFixed(1)} s: ${result.rate} req/s, p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms, p99.9 ${result.p999_ms} ms, max ${result.max_ms} ms`,
);
console.log(`latency by kind (ms): ${Object.entries(result.latency_by_kind_ms).map(([k, v]) => `${k} p50 ${v.p50} p99 ${v.p99}`).join(", ")}`);
console.log(`ops: ${JSON.stringify(counts)}; admin stats: ${JSON.stringify(result.stats)}; votes expected ${liveVotes}`);
console.log(`RSS: start ${result.rss_mb.start} MB, middle third floor ${result.rss_mb.middle_third_floor} MB (mean ${result.rss_mb.middle_third_mean}), last third floor ${result.rss_mb.last_third_floor} MB (mean ${result.rss_mb.last_third_mean}), max ${result.rss_mb.max} MB; allowed growth ${allowedMb.toFixed(1)} MB (${postingsMb.toFixed(1)} MB of it for the search postings)`);
if (examples.length) console.log(`first failures:\n  ${examples.join("\n  ")}`);
console.log(problems.length ? `FAIL:\n  ${problems.join("\n  ")}` : "OK: zero 5xx, zero lost writes, memory flat after warm-up");
console.log(`SOAK_RESULT ${JSON.stringify(result)}`);
if (!has("keep")) rmSync(dataDir, { recursive: true, force: true });
else console.log(`data kept in ${dataDir}`);
process.exit(problems.length ? 1 : 0);
