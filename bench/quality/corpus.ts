// Deterministic generator of the judged corpus (bench/quality/README.md).
// Every note is built from the hand-written material in corpus/ with a PRNG
// seeded by the note's own key, so a note's text depends only on its key and
// the material of its topic or area: adding a topic does not rewrite others.
import type { Area, Topic } from "./corpus/dsl.ts";
import databases from "./corpus/databases.ts";
import infra from "./corpus/infra.ts";
import languages from "./corpus/languages.ts";
import tools from "./corpus/tools.ts";
import services from "./corpus/services.ts";
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
} from "./corpus/generic.ts";

export const TOTAL_NOTES = 3000;
export const DIGEST_NOTES = 160;
export const SEED = "cairn-quality-v1";

export type NoteKind = "focused" | "digest" | "background";

export interface CorpusNote {
  /** Stable key: `<topic>/<i>`, `digest/<i>` or `<area>/bg/<i>`. */
  key: string;
  kind: NoteKind;
  area: string;
  title: string;
  body: string;
  tags: string[];
  /** focused: the topic it is about. */
  topic?: string;
  /** focused: how it treats its topic (an "open" note has no fix yet). */
  style?: string;
  /** digest: the topics it gives one line to. */
  mentions?: string[];
}

export const AREAS: Area[] = [...databases, ...infra, ...languages, ...tools, ...services];
export const TOPICS: Topic[] = AREAS.flatMap((a) => a.topics);

// --- deterministic randomness -------------------------------------------------

export function hash32(text: string): number {
  // FNV-1a, then a murmur-style finaliser.
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A small seeded PRNG (mulberry32); the same seed text gives the same sequence. */
export class Rng {
  private state: number;
  constructor(seedText: string) {
    this.state = hash32(seedText) || 1;
  }
  /** mulberry32 */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)];
  }
  /** `count` distinct items in random order (all of them when count ≥ length). */
  sample<T>(list: readonly T[], count: number): T[] {
    const copy = [...list];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [copy[i], copy[j]] = [copy[j], copy[i]];
    }
    return copy.slice(0, Math.max(0, Math.min(count, copy.length)));
  }
}

// --- text helpers -------------------------------------------------------------

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

function fill(text: string, rng: Rng, label: string): string {
  return text.replace(/\{(\w+)\}/g, (whole, slot: string) => {
    if (slot === "label") return label;
    const values = SLOTS[slot];
    return values ? rng.pick(values) : whole;
  });
}

/** Drops a `[topic-key] ` marker from an area fact. */
const fact = (text: string) => text.replace(/^\[[\w-]+\]\s*/, "");

const code = (snippet: string) => "```\n" + snippet + "\n```";

function paragraphs(parts: (string | undefined | false)[]): string[] {
  return parts.filter((p): p is string => typeof p === "string" && p.trim().length > 0);
}

/** Keeps the body between 50 and 800 words: pads with fillers, trims trailing paragraphs. */
function fitBody(parts: string[], rng: Rng, label: string): string {
  const out = [...parts];
  while (out.length > 1 && words(out.join("\n\n")) > 800) out.pop();
  let guard = 0;
  while (words(out.join("\n\n")) < 50 && guard++ < 20) {
    out.splice(Math.max(1, out.length - 1), 0, fill(rng.pick(FILLERS), rng, label));
  }
  let body = out.join("\n\n");
  if (words(body) > 800) body = body.split(/\s+/).slice(0, 800).join(" ");
  return body;
}

function fitTitle(title: string, key: string): string {
  const n = words(title);
  if (n < 5 || n > 12) throw new Error(`title of ${key} has ${n} words (5-12 needed): ${title}`);
  return title;
}

function tagsFor(rng: Rng, areaTag: string, topicTags: string[]): string[] {
  const tags = [areaTag, ...rng.sample(topicTags, rng.int(0, Math.min(3, topicTags.length)))];
  if (rng.chance(0.35)) tags.push(rng.pick(GENERIC_TAGS));
  const unique = [...new Set(tags)].slice(0, 5);
  // Some authors tag only with the specific tag, not the area.
  if (unique.length > 1 && rng.chance(0.15)) unique.shift();
  return unique;
}

// --- note builders ------------------------------------------------------------

const CAUSE_INTROS = ["Cause:", "Root cause:", "What was going on:", "Why it happens:", "The reason:", ""];
const FIX_INTROS = ["Fix:", "What fixed it:", "Resolution:", "What to do:", "Steps that worked:", "The fix:"];
const SYMPTOM_INTROS = ["Symptom:", "What we saw:", "", "", ""];

function prose(intro: string, sentences: string[]): string {
  return [intro, ...sentences].filter(Boolean).join(" ");
}

function list(intro: string, items: string[]): string {
  return [intro, ...items.map((item) => `- ${item}`)].filter(Boolean).join("\n");
}

function focusedNote(area: Area, topic: Topic, index: number): CorpusNote {
  const key = `${topic.key}/${index}`;
  const rng = new Rng(`${SEED}:${key}`);
  const f = (s: string) => fill(s, rng, area.label);
  const roll = rng.next();
  const style = roll < 0.4 ? "report" : roll < 0.58 ? "tip" : roll < 0.72 ? "checklist" : roll < 0.88 ? "long" : "open";
  const title = fitTitle(f(rng.chance(0.12) ? rng.pick(VAGUE_TITLES) : rng.pick(topic.ti)), key);
  const symptoms = rng.sample(topic.sy, rng.int(1, 2)).map(f);
  const causes = rng.sample(topic.ca, rng.int(1, 2)).map(f);
  const fixes = rng.sample(topic.fx, rng.int(1, 3)).map(f);
  const snippet = topic.sn && rng.chance(0.5) ? code(f(rng.pick(topic.sn))) : undefined;
  const siblings = area.topics.filter((t) => t.key !== topic.key);
  let parts: string[];
  switch (style) {
    case "tip":
      parts = paragraphs([
        prose(rng.pick(TIP_OPENERS), [fixes[0]]),
        prose("", [causes[0], rng.chance(0.6) ? `This shows up as: ${symptoms[0]}` : ""]),
        rng.chance(0.3) && snippet,
      ]);
      break;
    case "checklist":
      parts = paragraphs([
        rng.chance(0.5) && f(rng.pick(OPENERS)),
        prose(rng.pick(SYMPTOM_INTROS), symptoms),
        list(rng.pick(["Checklist:", "Go through these in order:", "What to check:", "Steps:"]), rng.sample(topic.fx, topic.fx.length).map(f)),
        prose(rng.pick(["Background:", "Why:", "Cause:"]), causes),
        rng.chance(0.4) && f(rng.pick(CLOSERS)),
      ]);
      break;
    case "open":
      parts = paragraphs([
        f(rng.pick(OPENERS)),
        prose(rng.pick(SYMPTOM_INTROS), rng.sample(topic.sy, rng.int(2, 3)).map(f)),
        snippet,
        rng.pick(OPEN_LINES),
        siblings.length > 0 &&
          list(
            "Things I tried that did not help:",
            rng.sample(siblings, 2).map((t) => f(rng.pick(t.fx))),
          ),
        f(rng.pick(FILLERS)),
      ]);
      break;
    default: {
      const report = paragraphs([
        rng.chance(0.7) && f(rng.pick(OPENERS)),
        prose(rng.pick(SYMPTOM_INTROS), symptoms),
        snippet && rng.chance(0.5) ? snippet : undefined,
        prose(rng.pick(CAUSE_INTROS), causes),
        rng.chance(0.5) ? prose(rng.pick(FIX_INTROS), fixes) : list(rng.pick(FIX_INTROS), fixes),
        rng.chance(0.3) && f(rng.pick(FILLERS)),
        rng.chance(0.6) && f(rng.pick(CLOSERS)),
      ]);
      if (style === "long") {
        // A full write-up: every symptom, cause and fix, a timeline, background and lessons.
        const background = rng.sample(area.facts, rng.int(3, 8)).map((s) => f(fact(s)));
        const asides = rng.sample(siblings, rng.int(1, 2)).map((t) =>
          f(rng.pick([
            `This is not the same as the ${t.name} problem, although the symptoms overlap at first.`,
            `We first suspected ${t.name}, but that was ruled out quickly.`,
            `Related reading: our earlier note on ${t.name}.`,
          ])),
        );
        parts = paragraphs([
          f(rng.pick(OPENERS)),
          prose(rng.pick(["What we saw:", "Symptoms:", ""]), topic.sy.map(f)),
          snippet,
          rng.chance(0.6) && list("Timeline:", rng.sample(TIMELINE.map((line, i) => [i, line] as const), rng.int(4, 9)).sort((a, b) => a[0] - b[0]).map(([, line]) => f(line))),
          prose(rng.pick(["Root cause:", "What was going on:", "Analysis:"]), [...topic.ca.map(f), ...rng.sample(FILLERS, rng.int(1, 3)).map(f)]),
          prose(rng.pick(["Some background for readers new to this:", "Background:", "For context:"]), background),
          prose("", asides),
          list(rng.pick(["What we changed:", "Fixes:", "Resolution:"]), topic.fx.map(f)),
          topic.sn && topic.sn.length > 1 && rng.chance(0.5) ? code(f(rng.pick(topic.sn))) : undefined,
          prose(rng.pick(["Lessons:", "Takeaways:", "What I would do differently:"]), rng.sample(LESSONS, rng.int(2, 4))),
          prose("", rng.sample(FILLERS, rng.int(2, 6)).map(f)),
          rng.chance(0.3) && prose("Notes from the investigation:", rng.sample(FILLERS, rng.int(6, 12)).map(f)),
          rng.chance(0.3) && (topic.sn ?? []).map((s) => code(f(s))).join("\n\n"),
          f(rng.pick(CLOSERS)),
        ]);
      } else {
        parts = report;
      }
    }
  }
  return {
    key,
    kind: "focused",
    area: area.key,
    topic: topic.key,
    style,
    title,
    body: fitBody(parts, rng, area.label),
    tags: tagsFor(rng, area.tag, topic.tags),
  };
}

function digestNote(index: number): CorpusNote {
  const key = `digest/${index}`;
  const rng = new Rng(`${SEED}:${key}`);
  const area = rng.pick(AREAS.filter((a) => a.topics.length >= 3));
  const f = (s: string) => fill(s, rng, area.label);
  const mentioned = rng.sample(area.topics, rng.int(3, Math.min(5, area.topics.length)));
  const parts = paragraphs([
    rng.pick(DIGEST_INTROS),
    mentioned.map((t) => `- ${f(t.gi)}`).join("\n"),
    rng.chance(0.5) && f(rng.pick(FILLERS)),
    rng.chance(0.5) && f(rng.pick(CLOSERS)),
  ]);
  return {
    key,
    kind: "digest",
    area: area.key,
    mentions: mentioned.map((t) => t.key),
    title: fitTitle(f(rng.pick(DIGEST_TITLES)), key),
    body: fitBody(parts, rng, area.label),
    tags: tagsFor(rng, area.tag, ["til", "oncall", "notes"]),
  };
}

function backgroundNote(area: Area, index: number): CorpusNote {
  const key = `${area.key}/bg/${index}`;
  const rng = new Rng(`${SEED}:${key}`);
  const f = (s: string) => fill(s, rng, area.label);
  const long = rng.chance(0.3);
  const facts = rng.sample(area.facts, long ? area.facts.length : rng.int(3, Math.min(8, area.facts.length))).map((s) => f(fact(s)));
  const split = rng.int(1, facts.length - 1);
  const parts = paragraphs([
    rng.chance(0.5) && f(rng.pick(OPENERS)),
    rng.chance(0.5) ? prose("", facts.slice(0, split)) : list(rng.pick(["Conventions:", "Key points:", "What to know:", "Rules of thumb:"]), facts.slice(0, split)),
    prose("", [...facts.slice(split), ...rng.sample(FILLERS, rng.int(1, 4)).map(f)]),
    long && prose(rng.pick(["Lessons so far:", "Principles:", ""]), rng.sample(LESSONS, rng.int(2, 5))),
    long && prose("", rng.sample(FILLERS, rng.int(3, 8)).map(f)),
    rng.chance(0.4) && f(rng.pick(CLOSERS)),
  ]);
  const topicTags = [...new Set(area.topics.flatMap((t) => t.tags))];
  return {
    key,
    kind: "background",
    area: area.key,
    title: fitTitle(f(rng.pick(area.bg)), key),
    body: fitBody(parts, rng, area.label),
    tags: tagsFor(rng, area.tag, topicTags.length > 0 ? topicTags : ["planning", "team"]),
  };
}

/** How many notes a topic gets: 5 to 14, fixed by its key. */
export const notesPerTopic = (topic: Topic) => 5 + (hash32(`count:${topic.key}`) % 10);

/**
 * The whole corpus, in insertion order (a fixed shuffle, so recency says
 * nothing about relevance). `scale` multiplies every count (a larger, unjudged
 * stress corpus; the judged set is scale 1, and its notes keep their keys and
 * text at any scale).
 */
export function buildCorpus(scale = 1): CorpusNote[] {
  const notes: CorpusNote[] = [];
  for (const area of AREAS) {
    for (const topic of area.topics) {
      for (let i = 0; i < notesPerTopic(topic) * scale; i++) notes.push(focusedNote(area, topic, i));
    }
  }
  for (let i = 0; i < DIGEST_NOTES * scale; i++) notes.push(digestNote(i));
  const backgroundAreas = [...AREAS, MISC];
  const remaining = TOTAL_NOTES * scale - notes.length;
  const weight = backgroundAreas.reduce((sum, a) => sum + a.facts.length, 0);
  let given = 0;
  backgroundAreas.forEach((area, i) => {
    const count = i === backgroundAreas.length - 1 ? remaining - given : Math.round((remaining * area.facts.length) / weight);
    given += count;
    for (let j = 0; j < count; j++) notes.push(backgroundNote(area, j));
  });
  return notes.sort((a, b) => hash32(`order:${a.key}`) - hash32(`order:${b.key}`) || (a.key < b.key ? -1 : 1));
}

// --- judgments ----------------------------------------------------------------

export interface JudgedQuery {
  id: string;
  query: string;
  /** How the query is written: error, tool, phrase, plural, typo, concept. */
  kind: string;
  /** Topic key → grade (2 = the answer, 1 = related / partly answers). */
  topics: Record<string, number>;
  note?: string;
}

/**
 * Grade of a note for a query, from what the note is about:
 * a focused note takes its topic's grade (an "open" note without a fix at most 1);
 * a digest's one-line mention of a grade-2 topic is worth 1; general notes 0.
 */
export function grade(note: CorpusNote, query: JudgedQuery): number {
  if (note.kind === "focused" && note.topic) {
    const g = query.topics[note.topic] ?? 0;
    return note.style === "open" ? Math.min(g, 1) : g;
  }
  if (note.kind === "digest" && note.mentions) {
    return note.mentions.some((t) => query.topics[t] === 2) ? 1 : 0;
  }
  return 0;
}

/** query id → note key → grade (only grades > 0). */
export function qrels(notes: CorpusNote[], queries: JudgedQuery[]): Record<string, Record<string, number>> {
  const known = new Set(TOPICS.map((t) => t.key));
  const out: Record<string, Record<string, number>> = {};
  for (const query of queries) {
    for (const topic of Object.keys(query.topics)) {
      if (!known.has(topic)) throw new Error(`query ${query.id} grades unknown topic ${topic}`);
    }
    const judged: Record<string, number> = {};
    for (const note of notes) {
      const g = grade(note, query);
      if (g > 0) judged[note.key] = g;
    }
    out[query.id] = judged;
  }
  return out;
}
