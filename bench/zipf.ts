// A stress corpus for search: words drawn from a Zipf law (exponent 1.07)
// over a vocabulary of 200,000 made-up words, so most words are rare and a
// few are in most notes, and queries of 2 to 6 words drawn the same way.
//   bun bench/seed.ts --dir /tmp/zipf100k --notes 100000 --zipf
import { Rng } from "./quality/corpus.ts";

export const ZIPF_VOCABULARY = 200_000;
const EXPONENT = 1.07;
const SYLLABLES = "ba be bi bo bu da de di do du fa fe fi fo fu ga ge gi go gu ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo vu za ze zi zo zu".split(" ");

/** The made-up word of a rank: its syllables spell the rank in base 65. */
export function zipfWord(rank: number): string {
  let word = "";
  let n = rank;
  do {
    word += SYLLABLES[n % SYLLABLES.length];
    n = Math.floor(n / SYLLABLES.length);
  } while (n > 0);
  return `${word}x`; // a final x: never a Porter ending, so distinct ranks stay distinct terms
}

let cumulative: Float64Array | undefined;
function cdf(): Float64Array {
  if (cumulative) return cumulative;
  cumulative = new Float64Array(ZIPF_VOCABULARY);
  let sum = 0;
  for (let r = 0; r < ZIPF_VOCABULARY; r++) cumulative[r] = sum += 1 / (r + 1) ** EXPONENT;
  for (let r = 0; r < ZIPF_VOCABULARY; r++) cumulative[r] /= sum;
  return cumulative;
}

export function zipfRank(rng: Rng): number {
  const c = cdf();
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

const words = (rng: Rng, n: number) => Array.from({ length: n }, () => zipfWord(zipfRank(rng)));

export function zipfNote(seed: string, index: number): { title: string; body: string; tags: string[] } {
  const rng = new Rng(`${seed}:zipf:${index}`);
  const title = words(rng, rng.int(5, 12)).join(" ");
  const normal = Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  const body = words(rng, Math.round(Math.min(600, Math.max(20, 120 * Math.exp(0.6 * normal))))).join(" ");
  const tags = [...new Set(Array.from({ length: rng.int(1, 3) }, () => zipfWord(Math.min(299, zipfRank(rng)))))];
  return { title: title.charAt(0).toUpperCase() + title.slice(1), body, tags };
}

export function zipfQueries(seed: string, count = 50): string[] {
  const rng = new Rng(`${seed}:zipf-queries`);
  return Array.from({ length: count }, () => words(rng, rng.int(2, 6)).join(" "));
}
