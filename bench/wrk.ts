// What the HTTP benches (run.ts, replicas.ts) share: their flags, starting
// the built server, and wrk (its Lua scripts and its output).
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** `--name value` flags as a map. */
export function benchArgs(): Record<string, string> {
  return Object.fromEntries(
    process.argv.slice(2).reduce<[string, string][]>((pairs, arg, i, all) => {
      if (arg.startsWith("--")) pairs.push([arg.slice(2), all[i + 1]]);
      return pairs;
    }, []),
  );
}

export const BREAKERS_OFF = { POSTS_PER_HOUR: "0", SEARCHES_PER_HOUR: "0", VOTES_PER_HOUR: "0", COMMENTS_PER_HOUR: "0" };

/** `binary serve` on 127.0.0.1:port with the breakers off, once it answers ready; start-up time included. */
export async function startServer(binary: string, port: number, dataDir: string, extraEnv: Record<string, string> = {}) {
  const startedAt = performance.now();
  const proc = Bun.spawn([binary, "serve"], {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_LEVEL: "warn", ...BREAKERS_OFF, ...extraEnv },
    stdout: "ignore",
    stderr: "inherit",
  });
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/v1/readyz`)).ok) break;
    } catch {}
    await Bun.sleep(2);
  }
  return { proc, startupMs: performance.now() - startedAt };
}

export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

/** wrk's command line; the script (if any) is written into `work`. */
export function wrkArgv(work: string, url: string, script: string | undefined, connections: number, seconds: number): string[] {
  const argv = ["wrk", `-t${Math.min(2, connections)}`, `-c${connections}`, `-d${seconds}s`, "--latency"];
  if (script) {
    const file = join(work, `s${Math.random().toString(36).slice(2)}.lua`);
    writeFileSync(file, script);
    argv.push("-s", file);
  }
  return [...argv, url];
}

export function parseWrk(out: string): Figures {
  const ms = (s: string) => (s.endsWith("us") ? parseFloat(s) / 1000 : s.endsWith("ms") ? parseFloat(s) : parseFloat(s) * 1000);
  const pct = (p: string) => ms(out.match(new RegExp(`\\s${p}%\\s+(\\S+)`))?.[1] ?? "0");
  return {
    rps: parseFloat(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? "0"),
    p50: pct("50"),
    p99: pct("99"),
    non2xx: parseInt(out.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? "0"),
  };
}

/** A string as a Lua literal. */
export const lua = (s: string) => JSON.stringify(s);

/**
 * The Lua prelude of the keyed scripts: the keys, and `key(n)` choosing one.
 * wrk runs each thread in its own Lua state: every thread gets an id, so the
 * threads (and, with `offset`, several wrk processes) use disjoint keys and
 * never send the same note twice (a 409).
 */
export function keyListLua(keys: string[], stride: number, offset = 0): string {
  return `local keys = {${keys.slice(0, 2000).map(lua).join(",")}}
local threads = 0
function setup(thread) thread:set("tid", threads); threads = threads + 1 end
tid = 0
local function key(n) return keys[((n * ${stride} + tid${offset ? ` + ${offset}` : ""}) % #keys) + 1] end`;
}

/**
 * POST /v1/posts of webmasters questions in turn (`corpus`: the collection's
 * corpus.jsonl; title and the body's first 600 characters), keyed as
 * `keyList` says (keyListLua, stride 2). No request may repeat its
 * contributor's last note (a 409 duplicate, cheaper than a write, would be
 * counted in the rate). The keys come round every 1,000 requests, so the
 * first 1,999 questions are sent, not 2,000: with 2,000 each contributor would
 * alternate two questions (1,999 is prime, so each goes through all of them).
 * And each run on the same database is a new `pass`: the counter starts
 * 500,000 requests on from the last pass's (keys unchanged, questions moved
 * on by 500 rounds of the keys), so a run does not open with the question
 * the run before it (a warm-up) ended on for a contributor it reached once.
 */
export function webmastersPostsLua(keyList: string, corpus: string, pass = 0): string {
  const docs = corpus
    .split("\n")
    .filter((line) => line.trim())
    .slice(0, 1999)
    .map((line) => {
      const doc = JSON.parse(line) as { title: string; body: string };
      return lua(JSON.stringify({ title: doc.title.slice(0, 200) || "untitled", body: doc.body.slice(0, 600) || "empty", tags: ["webmasters"] }));
    });
  return `${keyList}\nlocal docs = {${docs.join(",")}}\nlocal n = ${pass * 500_000}\nrequest = function()\n n = n + 1\n return wrk.format("POST", "/v1/posts", {["Authorization"] = "Bearer " .. key(n), ["Content-Type"] = "application/json"}, docs[(n % #docs) + 1])\nend`;
}

/** Keyed GET /v1/posts/{id} over the ids in turn. */
export const getNoteLua = (keyList: string, ids: string[]) =>
  `${keyList}\nlocal ids = {${ids.map(lua).join(",")}}\nlocal n = 0\nrequest = function()\n n = n + 1\n return wrk.format("GET", "/v1/posts/" .. ids[(n % #ids) + 1], {["Authorization"] = "Bearer " .. key(n)})\nend`;

/** POST /v1/search over the queries in turn. */
export const searchLua = (keyList: string, queries: string[]) =>
  `${keyList}\nlocal q = {${queries.map((q) => lua(JSON.stringify({ query: q }))).join(",")}}\nlocal n = 0\nrequest = function()\n n = n + 1\n return wrk.format("POST", "/v1/search", {["Authorization"] = "Bearer " .. key(n), ["Content-Type"] = "application/json"}, q[(n % #q) + 1])\nend`;
