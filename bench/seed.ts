// Fills a data directory with N realistic notes for benchmarks.
//   bun bench/seed.ts --dir /tmp/cairn-bench --notes 100000 [--contributors 1000] [--seed cairn-bench-v1] [--zipf | --head]
// (--zipf: the search stress corpus of bench/zipf.ts instead of the prose below;
// --head: the head-heavy corpus of bench/headheavy.ts)
//
// The prose is built from the judged corpus's hand-written material
// (bench/quality/corpus/: 141 topics in 30 areas, openers, fillers, closers)
// in the same styles (report, tip, checklist, long write-up, open question,
// log excerpt, digest, general area note), but varied much further so a
// million notes are not copies: every note has its own PRNG seeded by
// (--seed, note number) that picks a topic (Zipf-skewed: some problems are far
// more common than others), a style, a body length (log-normal per style,
// 50 to 800 words), sentences from the topic, its siblings and its area,
// slot values, numbers and identifiers (hosts, request ids, commits, tickets).
// Titles have 5 to 12 words, tags 1 to 5 from a vocabulary of ~275.
// Comments (~0.5 per note) and votes (~2 per note, from distinct contributors,
// never the author) follow one skewed per-note popularity; each note's score and
// comment_count are written consistent with its vote and comment rows.
//
// Writes <dir>/keys.json = { keys: every contributor key created by this run
// (bench only), ids: ~1000 note ids spread over the run, queries: 50 search
// queries drawn from the same material (bench/run.ts uses them) }.
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TAG_PATTERN } from "../src/core/limits.ts";
import { zipfNote, zipfQueries } from "./zipf.ts";
import { headNote, headQueries } from "./headheavy.ts";
import { uuidv7 } from "../src/core/ids.ts";
import { mintKey } from "../src/core/keys.ts";
import { SqliteStore, databasePath } from "../src/store/sqlite/store.ts";
import { AREAS, TOPICS, Rng as CorpusRng, hash32 } from "./quality/corpus.ts";
import type { Area, Topic } from "./quality/corpus/dsl.ts";
import {
  CLOSERS,
  DIGEST_INTROS,
  DIGEST_TITLES,
  FILLERS,
  GENERIC_TAGS,
  LESSONS,
  MISC,
  OPEN_LINES,
  OPENERS,
  SLOTS,
  TIMELINE,
  TIP_OPENERS,
  VAGUE_TITLES,
} from "./quality/corpus/generic.ts";

export const DEFAULT_SEED = "cairn-bench-v1";

// --- deterministic randomness -------------------------------------------------

/** The corpus PRNG plus the distributions the seeder needs. */
export class Rng extends CorpusRng {
  /** Standard normal (Box-Muller). */
  normal(): number {
    return Math.sqrt(-2 * Math.log(1 - this.next())) * Math.cos(2 * Math.PI * this.next());
  }
  /** Log-normal around `median`. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }
  hex(length: number): string {
    let out = "";
    while (out.length < length) out += ((this.next() * 0x100000000) >>> 0).toString(16).padStart(8, "0");
    return out.slice(0, length);
  }
}

// --- material -----------------------------------------------------------------

/** Whitespace-separated words (the count `text.split(/\s+/)` gives for the ASCII whitespace the material uses). */
function countWords(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 11 || c === 0xa0) inWord = false;
    else if (!inWord) {
      inWord = true;
      n++;
    }
  }
  return n;
}
const thousands = (n: number) => String(n).replace(/\B(?=(\d{3})+$)/g, ",");
/** Drops a `[topic-key] ` marker from an area fact. */
const fact = (text: string) => text.replace(/^\[[\w-]+\]\s*/, "");
const code = (snippet: string) => "```\n" + snippet + "\n```";

const HOST_ROLES = ["web", "api", "worker", "db", "cache", "ingest", "batch", "edge", "queue", "search"];
const REGIONS = ["eu-west-1", "us-east-1", "us-west-2", "ap-south-1", "fra1", "ams3"];
const TICKET_PREFIXES = ["INC", "PLAT", "OPS", "DATA", "BUG", "SEC", "PAY", "INFRA", "SRCH"];
const FILES = ["values.yaml", "config.toml", "settings.py", "main.go", "server.ts", "Dockerfile", "docker-compose.yml", "pool.rs", "db.ts", "worker.py"];

/** Identifier and number slots used by the detail sentences below (plus the corpus's own slots). */
function extraSlot(slot: string, rng: Rng): string | undefined {
  switch (slot) {
    case "n":
      return rng.chance(0.6) ? rng.pick(SLOTS.n) : String(Math.round(Math.exp(rng.next() * Math.log(5000))) + 1);
    case "n2":
      return String(rng.int(20, 400));
    case "version":
      return rng.chance(0.5) ? rng.pick(SLOTS.version) : `${rng.int(1, 24)}.${rng.int(0, 30)}`;
    case "semver":
      return `${rng.int(0, 12)}.${rng.int(0, 40)}.${rng.int(0, 20)}`;
    case "host":
      return `${rng.pick(HOST_ROLES)}-${rng.int(1, 64)}${rng.chance(0.4) ? "." + rng.pick(REGIONS) : ""}`;
    case "req":
      return `req_${rng.hex(rng.chance(0.5) ? 8 : 12)}`;
    case "sha":
      return rng.hex(7);
    case "ticket":
      return `${rng.pick(TICKET_PREFIXES)}-${rng.int(100, 9999)}`;
    case "pr":
      return String(rng.int(12, 9999));
    case "ms":
      return String(Math.round(Math.exp(1 + rng.next() * 8)));
    case "pct":
      return String(rng.int(1, 99));
    case "rows":
      return thousands(Math.round(Math.exp(6 + rng.next() * 12)));
    case "gb":
      return String(rng.int(2, 900));
    case "mb":
      return String(rng.int(4, 2048));
    case "port":
      return String(rng.pick([80, 443, 3000, 5432, 6379, 8080, 8443, 9090, 9200, rng.int(1024, 65000)]));
    case "cores":
      return String(rng.pick([2, 4, 8, 16, 32, 64]));
    case "time":
      return `${String(rng.int(0, 23)).padStart(2, "0")}:${String(rng.int(0, 59)).padStart(2, "0")}:${String(rng.int(0, 59)).padStart(2, "0")}`;
    case "date":
      return `202${rng.int(3, 5)}-${String(rng.int(1, 12)).padStart(2, "0")}-${String(rng.int(1, 28)).padStart(2, "0")}`;
    case "build":
      return String(rng.int(1000, 99999));
    case "path":
      return rng.pick([
        `deploy/${rng.pick(SLOTS.service)}/${rng.pick(FILES)}`,
        `/etc/${rng.pick(SLOTS.service)}/${rng.pick(FILES)}`,
        `services/${rng.pick(SLOTS.service)}/src/${rng.pick(FILES)}`,
        `infra/${rng.pick(SLOTS.team)}/${rng.pick(FILES)}`,
      ]);
  }
  return undefined;
}

/** Fills {slots}: the corpus's ({service} {env} {team} {n} {version} {activity} {day} {label}) and the identifiers above. */
function fill(text: string, rng: Rng, label: string): string {
  if (text.indexOf("{") < 0) return text;
  return text.replace(/\{(\w+)\}/g, (whole, slot: string) => {
    if (slot === "label") return label;
    const extra = extraSlot(slot, rng);
    if (extra !== undefined) return extra;
    const values = SLOTS[slot];
    return values ? rng.pick(values) : whole;
  });
}

/** Sentences with numbers and identifiers: the long tail of a real corpus's vocabulary. */
const DETAILS = [
  "Request {req} is a good example; its trace shows the whole sequence.",
  "The first failure in the logs was at {time} UTC on {host}.",
  "The change that introduced it is commit {sha}.",
  "Tracked in {ticket}; the fix went out in PR #{pr}.",
  "P99 latency went from {ms} ms to {ms} ms while it lasted.",
  "CPU on {host} sat at {pct}% for the whole window.",
  "The table had about {rows} rows at the time.",
  "Disk usage on {host} reached {gb} GB before the alert fired.",
  "We are on version {semver} of the client library.",
  "The service listens on port {port} behind the load balancer.",
  "Reproduced with {n} parallel workers on a {cores}-core machine.",
  "It started on {date} and went unnoticed for {n} hours.",
  "Error rate peaked at {pct}% of requests on {env}.",
  "Build {build} was the first one with the problem.",
  "The relevant config lives in {path}.",
  "Retries climbed to {n} per second before the breaker opened.",
  "Memory grew by roughly {mb} MB per hour.",
  "Timeouts were {ms} ms for reads and {n} s for writes.",
  "Related incident: {ticket}.",
  "Affected hosts: {host}, {host} and {host}.",
  "The queue depth reached {rows} messages.",
  "{n} out of {n2} runs failed before the fix, none after.",
  "Upgrading from {semver} to {semver} did not change anything.",
  "Commit {sha} reverts the workaround from {ticket}.",
  "The {service} handled about {rows} requests that day.",
  "Traces for {req} and {req} are attached to {ticket}.",
  "Roughly {gb} GB of logs were written during the incident.",
  "The canary on {host} showed it {n} minutes before the rest of the fleet.",
];

const CAUSE_INTROS = ["Cause:", "Root cause:", "What was going on:", "Why it happens:", "The reason:", ""];
const FIX_INTROS = ["Fix:", "What fixed it:", "Resolution:", "What to do:", "Steps that worked:", "The fix:"];
const SYMPTOM_INTROS = ["Symptom:", "What we saw:", "", "", ""];
const TITLE_PREFIXES = ["TIL:", "Postmortem:", "Fixed:", "Note:", "RCA:", "Runbook:", "Howto:", "Gotcha:", "Solved:", "[{team}]", "[{service}]"];
const TITLE_SUFFIXES = ["on {env}", "in the {service}", "after {activity}", "(again)", "on {day}", "({ticket})", "({ticket})", "- notes", "- solved", "for the {team} team", "on {host}", "since {semver}"];
const OPEN_PREFIXES = ["Question:", "Open:", "Help:", "Unsolved:"];
const LOG_INTROS = ["Log excerpt:", "From the logs:", "Output:", "What the terminal showed:", "Captured output:"];
const COMMENT_REACTIONS = [
  "Same here on {env}.",
  "+1, we hit this during {activity}.",
  "Thanks, this saved me about {n} minutes.",
  "Confirmed on {version} as well.",
  "Good write-up, adding a link to the runbook.",
  "Any update on this?",
  "Still seeing it on {env} after the change.",
  "Linking {ticket} here for reference.",
  "We saw the same thing in the {service} last {day}.",
  "Nice find.",
  "Is this still relevant after the upgrade to {version}?",
  "Could you add the exact error text? It helps the next search.",
  "Hit this again today on {host}.",
  "Worked for us, thanks.",
  "This did not help in our case, see below.",
];
const COMMENT_LEADS = ["Another option that worked for us:", "We fixed it differently:", "Also worth checking:", "One more thing:", "For what it is worth:", ""];

interface AreaMaterial {
  area: Area;
  label: string;
  facts: string[];
  /** Every tag of the area's topics (general notes draw from them). */
  topicTags: string[];
  snippets: string[];
}

const ALL_AREAS = [...AREAS, MISC];
const MATERIAL = new Map<string, AreaMaterial>(
  ALL_AREAS.map((area) => {
    const topicTags = [...new Set(area.topics.flatMap((t) => t.tags))];
    return [
      area.key,
      {
        area,
        label: area.label,
        facts: area.facts.map(fact),
        topicTags: topicTags.length > 0 ? topicTags : ["planning", "team"],
        snippets: area.topics.flatMap((t) => t.sn ?? []),
      },
    ];
  }),
);
const AREA_OF = new Map(AREAS.map((a) => [a.key, a]));

/** The whole tag vocabulary a note can draw from. */
export const TAG_VOCABULARY: string[] = [
  ...new Set([
    ...ALL_AREAS.map((a) => a.tag),
    ...ALL_AREAS.flatMap((a) => MATERIAL.get(a.key)!.topicTags),
    ...GENERIC_TAGS,
    ...SLOTS.service,
    ...SLOTS.team,
  ]),
];
for (const tag of TAG_VOCABULARY) {
  if (!TAG_PATTERN.test(tag) || tag.length > 32) throw new Error(`bad tag in the material: ${tag}`);
}

/** Cumulative weights for picking with `weighted`. */
function cumulative(weights: number[]): Float64Array {
  const out = new Float64Array(weights.length);
  let total = 0;
  weights.forEach((w, i) => (out[i] = total += w));
  return out;
}
function weighted(cum: Float64Array, rng: Rng): number {
  const target = rng.next() * cum[cum.length - 1];
  let lo = 0;
  let hi = cum.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cum[mid] <= target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Topics by popularity: a fixed shuffle, then Zipf-like weights 1/rank^0.7, so
// some problems come up in thousands of notes and others in a few hundred.
const TOPIC_ORDER = [...TOPICS].sort((a, b) => hash32(`pop:${a.key}`) - hash32(`pop:${b.key}`));
const TOPIC_CUM = cumulative(TOPIC_ORDER.map((_, rank) => 1 / (rank + 1) ** 0.7));
// General notes: areas in proportion to how much general material they have.
const AREA_CUM = cumulative(ALL_AREAS.map((a) => a.facts.length + a.bg.length));
const DIGEST_AREAS = AREAS.filter((a) => a.topics.length >= 3);

// --- notes --------------------------------------------------------------------

export interface SeedNote {
  kind: "focused" | "digest" | "background";
  style: string;
  area: string;
  topic?: string;
  title: string;
  body: string;
  tags: string[];
}

/** Paragraphs with a running word count, and the material already used (so a long note does not repeat itself). */
class Body {
  parts: string[] = [];
  counts: number[] = [];
  words = 0;
  private used = new Set<unknown>();
  constructor(
    readonly rng: Rng,
    readonly label: string,
  ) {}
  add(text: string | false | undefined | null): void {
    if (!text) return;
    const trimmed = text.trim();
    if (!trimmed) return;
    const n = countWords(trimmed);
    this.parts.push(trimmed);
    this.counts.push(n);
    this.words += n;
  }
  /** Up to `count` items of `list` not used yet in this note, marked used. */
  take<T>(list: readonly T[], count: number): T[] {
    const fresh = list.filter((item) => !this.used.has(item));
    const out = this.rng.sample(fresh, count);
    for (const item of out) this.used.add(item);
    return out;
  }
  /** `take` with slots filled. */
  fill(list: readonly string[], count: number): string[] {
    return this.take(list, count).map((s) => fill(s, this.rng, this.label));
  }
  /** Ends at a paragraph boundary at most 800 words long (or cuts the only paragraph). */
  finish(): string {
    while (this.parts.length > 1 && this.words > 800) {
      this.parts.pop();
      this.words -= this.counts.pop()!;
    }
    const body = this.parts.join("\n\n");
    return this.words > 800 ? body.split(/\s+/).slice(0, 800).join(" ") : body;
  }
}

const prose = (intro: string, sentences: string[]) => (sentences.length === 0 ? "" : [intro, ...sentences].filter(Boolean).join(" "));
const list = (intro: string, items: string[]) => (items.length === 0 ? "" : [intro, ...items.map((item) => `- ${item}`)].filter(Boolean).join("\n"));

function bodyTarget(rng: Rng, median: number): number {
  const target = Math.round(rng.logNormal(median, 0.55));
  if (target < 50) return 50 + rng.int(0, 25);
  return Math.min(800, target);
}

/** A title of 5-12 words: one of the candidates, sometimes decorated. */
function makeTitle(rng: Rng, candidates: readonly string[], label: string, open = false): string {
  for (let attempt = 0; attempt < 8; attempt++) {
    let title = fill(rng.pick(candidates), rng, label);
    let n = countWords(title);
    if (n < 5 || n > 12) continue;
    const roll = rng.next();
    const extra = open && roll < 0.4 ? rng.pick(OPEN_PREFIXES) : roll < 0.18 ? fill(rng.pick(TITLE_PREFIXES), rng, label) : undefined;
    if (extra && n + countWords(extra) <= 12) {
      title = `${extra} ${title}`;
      n += countWords(extra);
    }
    if (rng.chance(0.3)) {
      const suffix = fill(rng.pick(TITLE_SUFFIXES), rng, label);
      if (n + countWords(suffix) <= 12) title = `${title.replace(/[.?!]$/, "")} ${suffix}`;
    }
    return title;
  }
  return `Notes on ${label} from ${rng.pick(SLOTS.activity)}`.split(/\s+/).slice(0, 12).join(" ");
}

function makeTags(rng: Rng, areaTag: string, topicTags: string[]): string[] {
  const tags = [areaTag, ...rng.sample(topicTags, rng.int(0, Math.min(3, topicTags.length)))];
  if (rng.chance(0.35)) tags.push(rng.pick(GENERIC_TAGS));
  if (rng.chance(0.08)) tags.push(rng.pick(SLOTS.service));
  if (rng.chance(0.04)) tags.push(rng.pick(SLOTS.team));
  const unique = [...new Set(tags)].slice(0, 5);
  if (unique.length > 1 && rng.chance(0.15)) unique.shift();
  return unique;
}

const timeline = (body: Body, min: number, max: number) =>
  list("Timeline:", body.take(TIMELINE.map((_, i) => i), body.rng.int(min, max)).sort((a, b) => a - b).map((i) => fill(TIMELINE[i], body.rng, body.label)));

/** Extra paragraphs a write-up wanders into until it reaches its length: fresh material first, then identifiers and numbers. */
function pad(body: Body, target: number, m: AreaMaterial, topic: Topic | undefined): void {
  const rng = body.rng;
  const f = (s: string) => fill(s, rng, m.label);
  const siblings = m.area.topics.filter((t) => t !== topic);
  const topicPool = topic ? [...topic.sy, ...topic.ca, ...topic.fx] : [];
  for (let guard = 0; body.words < target && guard < 40; guard++) {
    const roll = rng.next();
    if (roll < 0.22) body.add(prose("", body.fill(FILLERS, rng.int(1, 3))));
    else if (roll < 0.4) body.add(prose("", body.fill(DETAILS, rng.int(1, 3))));
    else if (roll < 0.56) body.add(prose(rng.pick(["", "", "Background:", "For context:", "Worth knowing:"]), body.fill(m.facts, rng.int(2, 4))));
    else if (roll < 0.64) body.add(prose(rng.pick(["", "Also:", "Another detail:", "On top of that:"]), body.fill(topicPool, rng.int(1, 2))));
    else if (roll < 0.78) {
      const [t] = body.take(siblings, 1);
      if (t) {
        body.add(
          f(rng.pick([
            `We first suspected ${t.name}, but that was ruled out quickly. ${rng.pick(t.ca)}`,
            `This is not the same as the ${t.name} problem, although the symptoms overlap at first. ${rng.pick(t.sy)}`,
            `Related: ${t.gi}`,
            `While at it we also checked for ${t.name}: ${rng.pick(t.fx)}`,
          ])),
        );
      }
    } else if (roll < 0.83) body.add(timeline(body, 3, 8));
    else if (roll < 0.89) body.add(prose(rng.pick(["Lessons:", "Takeaways:", ""]), body.take(LESSONS, rng.int(1, 3))));
    else if (roll < 0.95) body.add(body.fill(m.snippets, 1).map(code)[0]);
    else body.add(prose("", body.fill(CLOSERS, 1)));
  }
  // Material exhausted (a long note in a small area): numbers and identifiers, which never run out.
  while (body.words < target) body.add(prose("", Array.from({ length: rng.int(2, 4) }, () => f(rng.pick(DETAILS)))));
}

function focusedNote(rng: Rng): SeedNote {
  const topic = TOPIC_ORDER[weighted(TOPIC_CUM, rng)];
  const area = AREA_OF.get(topic.area)!;
  const m = MATERIAL.get(area.key)!;
  const f = (s: string) => fill(s, rng, area.label);
  const roll = rng.next();
  const style =
    roll < 0.36 ? "report" : roll < 0.53 ? "tip" : roll < 0.65 ? "checklist" : roll < 0.78 ? "long" : roll < 0.9 ? "open" : "log";
  const title = makeTitle(rng, rng.chance(0.1) ? VAGUE_TITLES : topic.ti, area.label, style === "open");
  const body = new Body(rng, area.label);
  const symptoms = body.fill(topic.sy, rng.int(1, 2));
  const causes = body.fill(topic.ca, rng.int(1, 2));
  const fixes = body.fill(topic.fx, rng.int(1, 3));
  const snippet = topic.sn && rng.chance(0.5) ? body.fill(topic.sn, 1).map(code)[0] : undefined;
  const siblings = area.topics.filter((t) => t !== topic);
  let median = 140;
  switch (style) {
    case "tip":
      median = 65;
      body.add(prose(rng.pick(TIP_OPENERS), [fixes[0]]));
      body.add(prose("", [causes[0], rng.chance(0.6) ? `This shows up as: ${symptoms[0]}` : ""]));
      if (rng.chance(0.3)) body.add(snippet);
      break;
    case "checklist":
      median = 120;
      if (rng.chance(0.5)) body.add(prose("", body.fill(OPENERS, 1)));
      body.add(prose(rng.pick(SYMPTOM_INTROS), symptoms));
      body.add(list(rng.pick(["Checklist:", "Go through these in order:", "What to check:", "Steps:"]), [...fixes, ...body.fill(topic.fx, topic.fx.length)]));
      body.add(prose(rng.pick(["Background:", "Why:", "Cause:"]), causes));
      break;
    case "open":
      median = 120;
      body.add(prose("", body.fill(OPENERS, 1)));
      body.add(prose(rng.pick(SYMPTOM_INTROS), [...symptoms, ...body.fill(topic.sy, 1)]));
      body.add(snippet);
      body.add(rng.pick(OPEN_LINES));
      body.add(list("Things I tried that did not help:", body.take(siblings, 2).map((t) => f(rng.pick(t.fx)))));
      break;
    case "log":
      median = 110;
      body.add(prose(rng.pick(SYMPTOM_INTROS), symptoms));
      body.add(rng.pick(LOG_INTROS) + "\n" + code(f(topic.sn ? rng.pick(topic.sn) : rng.pick(DETAILS))));
      body.add(prose(rng.pick(CAUSE_INTROS), causes));
      body.add(prose(rng.pick(FIX_INTROS), fixes));
      break;
    case "long":
      median = 420;
      body.add(prose("", body.fill(OPENERS, 1)));
      body.add(prose(rng.pick(["What we saw:", "Symptoms:", ""]), [...symptoms, ...body.fill(topic.sy, topic.sy.length)]));
      body.add(snippet);
      if (rng.chance(0.6)) body.add(timeline(body, 4, 9));
      body.add(prose(rng.pick(["Root cause:", "What was going on:", "Analysis:"]), [...causes, ...body.fill(topic.ca, topic.ca.length), ...body.fill(FILLERS, rng.int(1, 3))]));
      body.add(prose(rng.pick(["Some background for readers new to this:", "Background:", "For context:"]), body.fill(m.facts, rng.int(3, 8))));
      body.add(list(rng.pick(["What we changed:", "Fixes:", "Resolution:"]), [...fixes, ...body.fill(topic.fx, topic.fx.length)]));
      body.add(prose(rng.pick(["Lessons:", "Takeaways:", "What I would do differently:"]), body.take(LESSONS, rng.int(2, 4))));
      break;
    default:
      if (rng.chance(0.7)) body.add(prose("", body.fill(OPENERS, 1)));
      body.add(prose(rng.pick(SYMPTOM_INTROS), symptoms));
      if (snippet && rng.chance(0.5)) body.add(snippet);
      body.add(prose(rng.pick(CAUSE_INTROS), causes));
      body.add(rng.chance(0.5) ? prose(rng.pick(FIX_INTROS), fixes) : list(rng.pick(FIX_INTROS), fixes));
  }
  // Real sessions mix problems: sometimes a second topic of the same area.
  const [other] = rng.chance(0.15) ? body.take(siblings, 1) : [];
  if (other) {
    body.add(prose(rng.pick(["Also hit this in the same session:", "Unrelated, but found at the same time:", "Side note:"]), [f(rng.pick(other.sy)), f(rng.pick(other.fx))]));
  }
  pad(body, bodyTarget(rng, median), m, topic);
  if (style !== "open" && rng.chance(0.5)) body.add(prose("", body.fill(CLOSERS, 1)));
  return { kind: "focused", style, area: area.key, topic: topic.key, title, body: body.finish(), tags: makeTags(rng, area.tag, topic.tags) };
}

function digestNote(rng: Rng): SeedNote {
  const area = rng.pick(DIGEST_AREAS);
  const m = MATERIAL.get(area.key)!;
  const f = (s: string) => fill(s, rng, area.label);
  const body = new Body(rng, area.label);
  const mentioned = body.take(area.topics, rng.int(3, Math.min(6, area.topics.length)));
  body.add(rng.pick(DIGEST_INTROS));
  body.add(mentioned.map((t) => `- ${f(t.gi)}`).join("\n"));
  if (rng.chance(0.5)) body.add(prose("", body.fill(FILLERS, 1)));
  pad(body, bodyTarget(rng, 90), m, undefined);
  if (rng.chance(0.5)) body.add(prose("", body.fill(CLOSERS, 1)));
  return {
    kind: "digest",
    style: "digest",
    area: area.key,
    title: makeTitle(rng, DIGEST_TITLES, area.label),
    body: body.finish(),
    tags: makeTags(rng, area.tag, ["til", "oncall", "notes", ...rng.sample(m.topicTags, 2)]),
  };
}

function backgroundNote(rng: Rng): SeedNote {
  const area = ALL_AREAS[weighted(AREA_CUM, rng)];
  const m = MATERIAL.get(area.key)!;
  const long = rng.chance(0.25);
  const body = new Body(rng, area.label);
  const facts = body.fill(m.facts, long ? m.facts.length : rng.int(3, Math.min(8, m.facts.length)));
  const split = rng.int(1, facts.length - 1);
  if (rng.chance(0.5)) body.add(prose("", body.fill(OPENERS, 1)));
  body.add(rng.chance(0.5) ? prose("", facts.slice(0, split)) : list(rng.pick(["Conventions:", "Key points:", "What to know:", "Rules of thumb:"]), facts.slice(0, split)));
  body.add(prose("", [...facts.slice(split), ...body.fill(FILLERS, rng.int(1, 3))]));
  if (long) body.add(prose(rng.pick(["Lessons so far:", "Principles:", ""]), body.take(LESSONS, rng.int(2, 5))));
  pad(body, bodyTarget(rng, long ? 320 : 120), m, undefined);
  if (rng.chance(0.4)) body.add(prose("", body.fill(CLOSERS, 1)));
  return { kind: "background", style: long ? "long" : "general", area: area.key, title: makeTitle(rng, area.bg, area.label), body: body.finish(), tags: makeTags(rng, area.tag, m.topicTags) };
}

/** Note number `index` of the run seeded with `seed`: depends only on the two. */
export function seedNote(seed: string, index: number): SeedNote {
  const rng = new Rng(`${seed}:note:${index}`);
  const roll = rng.next();
  return roll < 0.6 ? focusedNote(rng) : roll < 0.65 ? digestNote(rng) : backgroundNote(rng);
}

/** A comment on `note` (5 to ~80 words). */
export function seedComment(rng: Rng, note: SeedNote): string {
  const area = ALL_AREAS.find((a) => a.key === note.area) ?? MISC;
  const topic = note.topic ? area.topics.find((t) => t.key === note.topic) : undefined;
  const f = (s: string) => fill(s, rng, area.label);
  const parts: string[] = [];
  if (rng.chance(0.55)) parts.push(f(rng.pick(COMMENT_REACTIONS)));
  const roll = rng.next();
  if (topic && roll < 0.35) parts.push(prose(rng.pick(COMMENT_LEADS), [f(rng.pick(topic.fx))]));
  else if (topic && roll < 0.5) parts.push(prose("In our case the cause was different:", [f(rng.pick(topic.ca))]));
  else if (roll < 0.65) parts.push(f(rng.pick(DETAILS)));
  else if (roll < 0.8 && area.facts.length > 0) parts.push(f(fact(rng.pick(area.facts))));
  else if (roll < 0.9) parts.push(rng.pick(LESSONS));
  else parts.push(f(rng.pick(FILLERS)));
  if (rng.chance(0.15)) parts.push(f(rng.pick(FILLERS)));
  return parts.join(" ");
}

// --- queries ------------------------------------------------------------------

const STOP = new Set(
  ("a an the of in on for to and or with is are was be been by at from after before when why how what which our we it its this that not no " +
    "between under over into about via using your you i my their them there than then while only just does did do has have had can " +
    "up out all some any more most less other same one two three new old every each get gets got make makes")
    .split(" "),
);
const ascii = (s: string) => s.replace(/[^\x20-\x7e]/g, " ").replace(/\s+/g, " ").trim();

/** Search queries written the way agents search, drawn from the material: error text, tool and problem names, title fragments, tag pairs, typos. */
export function benchQueries(seed: string, count = 50): string[] {
  const rng = new Rng(`${seed}:queries`);
  const errors = [
    ...new Set(
      TOPICS.flatMap((t) => t.sy.flatMap((s) => [...s.matchAll(/`([^`]+)`/g)].map((m) => ascii(m[1])))).filter(
        (e) => e.length >= 12 && e.length <= 70 && !e.includes("{") && e.includes(" ") && /[A-Za-z]{3}/.test(e),
      ),
    ),
  ];
  const fragment = (): string => {
    for (;;) {
      const title = rng.pick(rng.pick(TOPICS).ti);
      if (title.includes("{")) continue;
      const words = ascii(title.replace(/[`:;,.()"'?!]/g, " ")).toLowerCase().split(" ");
      const length = rng.int(2, 4);
      const start = rng.int(0, Math.max(0, words.length - length));
      const slice = words.slice(start, start + length);
      if (slice.length < 2 || STOP.has(slice[0]) || STOP.has(slice[slice.length - 1])) continue;
      return slice.join(" ");
    }
  };
  const typo = (text: string): string => {
    const words = text.split(" ");
    const i = words.reduce((best, w, j) => (w.length > words[best].length ? j : best), 0);
    const w = words[i];
    if (w.length < 5) return text;
    const k = rng.int(1, w.length - 3);
    words[i] = rng.chance(0.5) ? w.slice(0, k) + w[k + 1] + w[k] + w.slice(k + 2) : w.slice(0, k) + w.slice(k + 1);
    return words.join(" ");
  };
  const out = new Set<string>();
  const add = (q: string, limit: number) => {
    if (out.size < limit && q) out.add(q);
  };
  for (const e of rng.sample(errors, 18)) add(e, 18);
  for (const t of rng.sample(TOPICS, 10)) add(ascii(t.name).toLowerCase(), 28);
  for (let guard = 0; out.size < 38 && guard < 200; guard++) add(fragment(), 38);
  for (let guard = 0; out.size < 44 && guard < 200; guard++) {
    const t = rng.pick(TOPICS);
    add(`${AREA_OF.get(t.area)!.tag} ${rng.pick(t.tags)}`, 44);
  }
  for (let guard = 0; out.size < count && guard < 200; guard++) add(typo(rng.chance(0.5) ? fragment() : ascii(rng.pick(TOPICS).name).toLowerCase()), count);
  return [...out];
}

// --- seeding ------------------------------------------------------------------

/** Popularity of a note: log-normal with mean 1, so votes and comments are skewed and correlated. */
function popularity(rng: Rng): number {
  const sigma = 1.1;
  return Math.exp(sigma * rng.normal() - (sigma * sigma) / 2);
}

/** Stochastic rounding keeps the mean exact. */
const roundRandom = (x: number, rng: Rng) => Math.floor(x + rng.next());

async function main() {
  const args = Object.fromEntries(
    process.argv.slice(2).reduce<[string, string][]>((pairs, arg, i, all) => {
      if (arg.startsWith("--")) pairs.push([arg.slice(2), all[i + 1]]);
      return pairs;
    }, []),
  );
  const dir = args.dir ?? "/tmp/cairn-bench";
  const notes = Number(args.notes ?? 100_000);
  const zipf = "zipf" in args;
  const head = "head" in args;
  const contributorCount = Number(args.contributors ?? 1000);
  const seed = args.seed ?? DEFAULT_SEED;
  if (!Number.isInteger(notes) || notes < 0) throw new Error("--notes must be a whole number");
  if (!Number.isInteger(contributorCount) || contributorCount < 2) throw new Error("--contributors must be at least 2");

  const store = new SqliteStore({ dataDir: dir });
  await store.migrate();
  const db = store.sqlite;
  // A bulk load of a scratch directory: no fsync needed until the end.
  db.exec("PRAGMA synchronous = OFF");
  db.exec("PRAGMA cache_size = -262144");

  const started = performance.now();
  const insertContributor = db.prepare("INSERT INTO contributors (email, key_prefix, key_digest, active, created_at) VALUES (?, ?, ?, 1, ?)");
  const insertNote = db.prepare(
    "INSERT INTO posts (pk, id, contributor_no, title, body, tags, score, comment_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insertVote = db.prepare("INSERT INTO votes (post_pk, contributor_no, value, created_at) VALUES (?, ?, ?, ?)");
  const insertComment = db.prepare("INSERT INTO comments (post_pk, contributor_no, body, created_at) VALUES (?, ?, ?, ?)");

  const now = Date.now();
  const span = 365 * 24 * 3600 * 1000;
  const firstDay = now - span;
  const keys: string[] = [];
  const contributorNos: number[] = [];
  db.transaction(() => {
    for (let i = 0; i < contributorCount; i++) {
      const key = mintKey();
      keys.push(key.key);
      const row = insertContributor.run(`bench${i}-${key.prefix.slice(-6)}@example.org`, key.prefix, key.digest, firstDay);
      contributorNos.push(Number(row.lastInsertRowid));
    }
  })();
  const C = contributorNos.length;
  const basePk = (db.query("SELECT coalesce(max(pk), 0) AS pk FROM posts").get() as { pk: number }).pk;

  const ids: string[] = [];
  const sampleEvery = Math.max(1, Math.floor(notes / 1000));
  let commentRows = 0;
  let voteRows = 0;
  let words = 0;
  const voters = new Set<number>();
  const batch = 5_000;
  let chunkStarted = performance.now();
  for (let done = 0; done < notes; done += batch) {
    if (done > 0 && done % 50_000 === 0) {
      console.error(`  ${done} notes, ${Math.round(50_000 / ((performance.now() - chunkStarted) / 1000))} notes/s over the last 50,000`);
      chunkStarted = performance.now();
    }
    db.transaction(() => {
      for (let i = done; i < Math.min(notes, done + batch); i++) {
        const note = head ? headNote(seed, i) : zipf ? zipfNote(seed, i) : seedNote(seed, i);
        const rng = new Rng(`${seed}:activity:${i}`);
        const pk = basePk + i + 1;
        // Spread over the last year in order; ids are UUIDv7 of that time.
        const createdAt = Math.floor(firstDay + ((i + rng.next()) * span) / Math.max(1, notes));
        const id = uuidv7(createdAt);
        if (i % sampleEvery === 0) ids.push(id);
        // Some contributors write far more than others.
        const author = contributorNos[Math.floor(C * rng.next() ** 1.5)];
        const pop = popularity(rng);
        const voteCount = Math.min(C - 1, 500, roundRandom(2 * pop, rng));
        const commentCount = Math.min(200, roundRandom(0.5 * pop, rng));
        // Distinct voters other than the author.
        voters.clear();
        if (voteCount > (C - 1) / 2) {
          for (const no of rng.sample(contributorNos.filter((no) => no !== author), voteCount)) voters.add(no);
        } else {
          while (voters.size < voteCount) {
            const no = contributorNos[Math.floor(rng.next() * C)];
            if (no !== author) voters.add(no);
          }
        }
        const sortedVoters = [...voters].sort((a, b) => a - b);
        const values = sortedVoters.map(() => (rng.chance(0.85) ? 1 : -1));
        const score = values.reduce((s, v) => s + v, 0);
        const later = () => Math.min(now, createdAt + Math.floor(-Math.log(1 - rng.next()) * 2 * 86_400_000));
        insertNote.run(pk, id, author, note.title, note.body, JSON.stringify(note.tags), score, commentCount, createdAt);
        store.searchIndex.add({ pk, title: note.title, tags: note.tags, body: note.body });
        store.searchIndex.tags.add(pk, note.tags, score, createdAt);
        for (let v = 0; v < sortedVoters.length; v++) insertVote.run(pk, sortedVoters[v], values[v], later());
        const times = Array.from({ length: commentCount }, later).sort((a, b) => a - b);
        for (const at of times) {
          const by = rng.chance(0.1) ? author : contributorNos[Math.floor(C * rng.next() ** 1.5)];
          insertComment.run(pk, by, zipf || head ? "Thanks, this helped." : seedComment(rng, note as SeedNote), at);
        }
        commentRows += commentCount;
        voteRows += sortedVoters.length;
        words += countWords(note.body);
      }
    })();
  }
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  await store.close();
  const queries = head ? headQueries(seed) : zipf ? zipfQueries(seed) : benchQueries(seed);
  writeFileSync(join(dir, "keys.json"), JSON.stringify({ keys, ids, queries }));
  const seconds = (performance.now() - started) / 1000;
  const bytes = statSync(databasePath(dir)).size;
  console.log(
    `seeded ${notes} notes (${(words / Math.max(1, notes)).toFixed(0)} body words on average), ${commentRows} comments, ${voteRows} votes, ` +
      `${contributorCount} contributors in ${seconds.toFixed(1)} s (${Math.round(notes / seconds)} notes/s) → ${dir} (database ${(bytes / 1e6).toFixed(0)} MB)`,
  );
}

if (import.meta.main) await main();
