// The head-heavy corpus (issue 18): notes of real length whose common words
// are in most notes, as a community's notes are. Words come from three Zipf
// laws: ~100 technical head words, English stop words (kept by the analyzer),
// and a tail of 20,000 made-up rare words. A note has 5 to 35 sentences
// (about 60 to 600 words, ~2 KB on average); a query has 1 to 6 words, mostly
// head words, often phrased with stop words ("how to retry a deadlock").
//   bun bench/seed.ts --dir /tmp/h100k --notes 100000 --head          (straight into the store)
//   bun bench/load-http.ts --dir /tmp/h100k --notes 100000            (the same notes through POST /v1/posts)
import { Rng } from "./quality/corpus.ts";

export const HEAD_WORDS = (
  "error node postgres memory leak retry deadlock query server timeout connection database index cache request " +
  "response client thread process lock transaction table schema migration deploy build test config container " +
  "kubernetes docker cluster replica network socket port proxy certificate token auth session user file disk " +
  "log metric alert latency throughput queue worker job batch stream event handler callback promise async " +
  "function module package version dependency upgrade crash panic exception stack trace debug profile cpu heap " +
  "garbage collector pool limit rate backoff write read commit rollback snapshot backup restore replication " +
  "shard partition key value json api endpoint route"
).split(" ");
export const STOP_WORDS = (
  "the to a of and in is it for on with that this how when not be we after from by at or but as an was are " +
  "i do does why what which then if can so"
).split(" ");
export const TAIL_WORDS = 20_000;

/** Share of a note's words drawn from each law (the rest from the tail). */
const STOP_SHARE = 0.38;
const HEAD_SHARE = 0.32;

/** Zipf(-Mandelbrot) law over ranks 0..size-1: p(r) ∝ 1 / (r + 1 + offset)^exponent. */
function cdf(size: number, exponent: number, offset = 0): Float64Array {
  const c = new Float64Array(size);
  let sum = 0;
  for (let r = 0; r < size; r++) c[r] = sum += 1 / (r + 1 + offset) ** exponent;
  for (let r = 0; r < size; r++) c[r] /= sum;
  return c;
}
const HEAD_CDF = cdf(HEAD_WORDS.length, 0.9);
const STOP_CDF = cdf(STOP_WORDS.length, 1.0);
// The tail's head is flattened (offset 500) so that even its most common word
// is in a few percent of notes, its rarest in about a thousandth of them at 100k.
const TAIL_CDF = cdf(TAIL_WORDS, 1.05, 500);

function draw(c: Float64Array, rng: Rng): number {
  const u = rng.next();
  let lo = 0;
  let hi = c.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (c[mid] < u) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const CONSONANTS = "bcdfghjklmnprstvz";
const VOWELS = "aeiou";
/** The made-up tail word of a rank: consonant-vowel pairs spelling the rank, then "q" (never a Porter ending, never an English word). */
export function tailWord(rank: number): string {
  let word = "";
  let n = rank;
  // Two syllables at least: tail words are as long as real ones.
  for (let syllables = 0; syllables < 2 || n > 0; syllables++) {
    word += CONSONANTS[n % CONSONANTS.length] + VOWELS[Math.floor(n / CONSONANTS.length) % VOWELS.length];
    n = Math.floor(n / (CONSONANTS.length * VOWELS.length));
  }
  return `${word}q`;
}

const headWord = (rng: Rng) => HEAD_WORDS[draw(HEAD_CDF, rng)];
const stopWord = (rng: Rng) => STOP_WORDS[draw(STOP_CDF, rng)];

function word(rng: Rng): string {
  const u = rng.next();
  if (u < STOP_SHARE) return stopWord(rng);
  if (u < STOP_SHARE + HEAD_SHARE) return headWord(rng);
  return tailWord(draw(TAIL_CDF, rng));
}

function sentence(rng: Rng): string {
  const words = Array.from({ length: rng.int(9, 22) }, () => word(rng));
  words[0] = words[0].charAt(0).toUpperCase() + words[0].slice(1);
  return `${words.join(" ")}.`;
}

export function headNote(seed: string, index: number): { title: string; body: string; tags: string[] } {
  const rng = new Rng(`${seed}:head:${index}`);
  const titleWords = Array.from({ length: rng.int(4, 10) }, () => (rng.chance(0.6) ? headWord(rng) : word(rng)));
  const title = titleWords.join(" ");
  const body = Array.from({ length: rng.int(5, 35) }, () => sentence(rng)).join(" ");
  const tags = [...new Set(Array.from({ length: rng.int(1, 3) }, () => headWord(rng)))];
  return { title: title.charAt(0).toUpperCase() + title.slice(1), body, tags };
}

/** Query shapes: natural-language phrasings around 1 to 4 content words (H: a head word, T: a tail word). */
const SHAPES = [
  "H", "H H", "H H H", "T", "H T", "how to H a H", "H in H", "why does H H", "how to H the H H", "H H after H",
  "what is the H H", "H H H H", "H when H T", "H of the H", "fix H H", "H H T", "the H is H",
];

export function headQueries(seed: string, count = 200): string[] {
  const rng = new Rng(`${seed}:head-queries`);
  return Array.from({ length: count }, () =>
    rng
      .pick(SHAPES)
      .split(" ")
      .map((slot) => (slot === "H" ? headWord(rng) : slot === "T" ? tailWord(draw(TAIL_CDF, rng)) : slot))
      .join(" "),
  );
}
