// bench/seed.ts: fills a data directory with realistic notes, comments and
// votes through the real schema. Seeds 2,000 notes and checks the shape of
// every row and the consistency of the counters.
import { Database } from "bun:sqlite";
import { attachSearchFile } from "../../src/store/sqlite/search-file.ts";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_SEED, seedNote } from "../../bench/seed.ts";
import { TAG_PATTERN } from "../../src/core/limits.ts";
import { ROOT, tempDir } from "../helpers/server.ts";

const NOTES = 2000;
const CONTRIBUTORS = 50;
let dir: string;
let db: Database;
let output: string;

beforeAll(() => {
  dir = tempDir("cairn-seed-");
  const run = Bun.spawnSync([process.execPath, join(ROOT, "bench/seed.ts"), "--dir", dir, "--notes", String(NOTES), "--contributors", String(CONTRIBUTORS)], {
    stdout: "pipe",
    stderr: "pipe",
  });
  output = run.stdout.toString() + run.stderr.toString();
  if (run.exitCode !== 0) throw new Error(`seeding failed (${run.exitCode}): ${output}`);
  db = new Database(join(dir, "cairn.db"));
  attachSearchFile(db);
}, 30_000);

afterAll(() => {
  db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
const one = (sql: string) => (db.query(sql).get() as { n: number }).n;

test("seeds the requested number of notes and contributors", () => {
  expect(output).toContain(`seeded ${NOTES} notes`);
  expect(one("SELECT count(*) AS n FROM posts")).toBe(NOTES);
  expect(one("SELECT count(*) AS n FROM contributors")).toBe(CONTRIBUTORS);
});

test("titles have 5-12 words, bodies 50-800, tags 1-5 valid distinct tags", () => {
  const rows = db.query("SELECT title, body, tags FROM posts").all() as { title: string; body: string; tags: string }[];
  const bodyWords: number[] = [];
  const vocabulary = new Set<string>();
  for (const row of rows) {
    const t = words(row.title);
    if (t < 5 || t > 12) throw new Error(`title of ${t} words: ${row.title}`);
    const b = words(row.body);
    if (b < 50 || b > 800) throw new Error(`body of ${b} words: ${row.title}`);
    bodyWords.push(b);
    const tags = JSON.parse(row.tags) as string[];
    expect(tags.length).toBeGreaterThanOrEqual(1);
    expect(tags.length).toBeLessThanOrEqual(5);
    expect(new Set(tags).size).toBe(tags.length);
    for (const tag of tags) {
      if (!TAG_PATTERN.test(tag) || tag.length > 32) throw new Error(`bad tag ${tag}`);
      vocabulary.add(tag);
    }
  }
  // A realistic spread: mostly short notes, a long tail of write-ups.
  bodyWords.sort((a, b) => a - b);
  const median = bodyWords[bodyWords.length >> 1];
  expect(median).toBeGreaterThan(90);
  expect(median).toBeLessThan(250);
  expect(bodyWords[Math.floor(bodyWords.length * 0.98)]).toBeGreaterThan(500);
  expect(vocabulary.size).toBeGreaterThan(150);
  // Not copies of one another.
  expect(new Set(rows.map((r) => r.body)).size).toBe(NOTES);
});

test("every note's score is the sum of its votes and comment_count the number of its comments", () => {
  expect(one("SELECT count(*) AS n FROM posts p WHERE score != (SELECT coalesce(sum(value), 0) FROM votes v WHERE v.post_pk = p.pk)")).toBe(0);
  expect(one("SELECT count(*) AS n FROM posts p WHERE comment_count != (SELECT count(*) FROM comments c WHERE c.post_pk = p.pk)")).toBe(0);
  const votes = one("SELECT count(*) AS n FROM votes");
  const comments = one("SELECT count(*) AS n FROM comments");
  // About two votes and half a comment per note, skewed: most notes have few, some many.
  expect(votes / NOTES).toBeGreaterThan(1.5);
  expect(votes / NOTES).toBeLessThan(2.5);
  expect(comments / NOTES).toBeGreaterThan(0.3);
  expect(comments / NOTES).toBeLessThan(0.7);
  expect(one("SELECT count(*) AS n FROM posts WHERE comment_count = 0")).toBeGreaterThan(NOTES / 2);
  expect(one("SELECT max(comment_count) AS n FROM posts")).toBeGreaterThan(4);
  expect(one("SELECT count(*) AS n FROM comments WHERE length(trim(body)) = 0")).toBe(0);
});

test("nobody votes on their own note, and every row's references hold", () => {
  expect(one("SELECT count(*) AS n FROM votes v JOIN posts p ON p.pk = v.post_pk WHERE v.contributor_no = p.contributor_no")).toBe(0);
  expect(one("SELECT count(*) AS n FROM votes WHERE value NOT IN (-1, 1)")).toBe(0);
  expect(db.query("PRAGMA foreign_key_check").all()).toEqual([]);
  expect(db.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
});

test("the full-text index finds notes", () => {
  for (const term of ["postgr", "timeout", "kubernet"]) {
    const hits = db.query("SELECT rowid FROM search_fts WHERE search_fts MATCH ? LIMIT 50").all(`"${term}"`) as { rowid: number }[];
    expect(hits.length).toBeGreaterThan(10);
  }
  const [hit] = db.query(`SELECT p.title FROM search_fts f JOIN posts p ON p.pk = f.rowid WHERE search_fts MATCH '"replic"' LIMIT 1`).all() as { title: string }[];
  expect(hit.title.length).toBeGreaterThan(0);
  expect(one("SELECT notes AS n FROM search_totals")).toBe(one("SELECT count(*) AS n FROM posts"));
});

test("keys.json holds every key, a sample of existing ids and 50 queries", () => {
  const file = JSON.parse(readFileSync(join(dir, "keys.json"), "utf8")) as { keys: string[]; ids: string[]; queries: string[] };
  expect(file.keys.length).toBe(CONTRIBUTORS);
  expect(new Set(file.keys).size).toBe(CONTRIBUTORS);
  expect(file.ids.length).toBeGreaterThan(500);
  expect(file.ids.length).toBeLessThanOrEqual(1000);
  const exists = db.query("SELECT 1 AS n FROM posts WHERE id = ?");
  for (const id of file.ids) expect(exists.get(id)).not.toBeNull();
  expect(file.queries.length).toBe(50);
  expect(new Set(file.queries).size).toBe(50);
  for (const q of file.queries) expect(q.trim().length).toBeGreaterThan(1);
});

test("a note's text depends only on the seed and its number", () => {
  expect(seedNote(DEFAULT_SEED, 41)).toEqual(seedNote(DEFAULT_SEED, 41));
  expect(seedNote(DEFAULT_SEED, 41).body).not.toBe(seedNote(DEFAULT_SEED, 42).body);
  const row = db.query("SELECT title, body, tags FROM posts ORDER BY pk LIMIT 1 OFFSET 41").get() as { title: string; body: string; tags: string };
  const note = seedNote(DEFAULT_SEED, 41);
  expect(row).toEqual({ title: note.title, body: note.body, tags: JSON.stringify(note.tags) });
});
