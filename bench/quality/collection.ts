// A judged collection loaded into a real Cairn store, and the measures taken
// on it. Used by bench/quality/run.ts and the CI quality test.
//   collection: notes {key, title, body, tags}, queries {id, text}, judgments query id → note key → grade.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { uuidv7 } from "../../src/core/ids.ts";
import { searchRequest } from "../../src/core/search/query.ts";
import { DEFAULT_SEARCH_MEMORY_BYTES } from "../../src/store/sqlite/search.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";

export const K = 10;

export interface Collection {
  name: string;
  notes: { key: string; title: string; body: string; tags: string[] }[];
  queries: { id: string; text: string }[];
  judgments: Record<string, Record<string, number>>;
}

/**
 * EVAL_DIR when set; otherwise shared/eval beside the project or beside any
 * folder above it (a clone made elsewhere in the same workspace still finds it).
 */
export const EVAL_DIR = process.env.EVAL_DIR ?? findSharedEval(resolve(import.meta.dir, "../.."));

function findSharedEval(project: string): string {
  for (let dir = dirname(project); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "shared/eval"))) return join(dir, "shared/eval");
    if (dirname(dir) === dir) return join(dirname(project), "shared/eval");
  }
}

const TAG = /^[a-z0-9][a-z0-9.+#-]*$/;

/** A collection in shared/eval's layout (corpus.jsonl, queries.jsonl, qrels.tsv), or null when it is not there. */
export function readCollection(name: string, dir = EVAL_DIR): Collection | null {
  const base = join(dir, name);
  if (!existsSync(join(base, "corpus.jsonl"))) return null;
  const lines = (file: string) => readFileSync(join(base, file), "utf8").split("\n").filter((line) => line.trim().length > 0);
  const notes = lines("corpus.jsonl").map((line) => {
    const doc = JSON.parse(line) as { id: string; title: string; body: string; tags?: string[] };
    // Tags as an agent would write them within the contract's limits (the text is searched as is).
    const tags = (doc.tags ?? []).map((t) => t.toLowerCase()).filter((t) => TAG.test(t) && t.length <= 32).slice(0, 10);
    return { key: doc.id, title: doc.title.slice(0, 200) || "(untitled)", body: doc.body || "(empty)", tags };
  });
  const queries = lines("queries.jsonl").map((line) => JSON.parse(line) as { id: string; text: string });
  const judgments: Record<string, Record<string, number>> = {};
  for (const line of lines("qrels.tsv")) {
    const [query, doc, grade] = line.split("\t");
    (judgments[query] ??= {})[doc] = Number(grade);
  }
  return { name, notes, queries, judgments };
}

export interface Loaded {
  store: SqliteStore;
  /** The store's data directory (removed by close). */
  dataDir: string;
  keyById: Map<string, string>;
  keyByPk: Map<number, string>;
  loadMs: number;
  close: () => Promise<void>;
}

/** Loads the notes through the store's own write path (createNote), as POST /v1/posts does. */
export async function loadCollection(collection: Collection, options: { searchMemoryBytes?: number } = {}): Promise<Loaded> {
  const dir = mkdtempSync(join(tmpdir(), "cairn-quality-"));
  const store = new SqliteStore({ dataDir: dir, searchMemoryBytes: options.searchMemoryBytes ?? DEFAULT_SEARCH_MEMORY_BYTES });
  await store.migrate();
  const started = performance.now();
  const { contributorNo } = await store.createContributor({ email: "quality@example.org", keyPrefix: "cairn_qualit", keyDigest: new Uint8Array(32), createdAt: 0 });
  const keyById = new Map<string, string>();
  const start = Date.UTC(2026, 0, 1);
  const BATCH = 256;
  for (let from = 0; from < collection.notes.length; from += BATCH) {
    await Promise.all(
      collection.notes.slice(from, from + BATCH).map(async (note, j) => {
        const createdAt = start + (from + j) * 60_000;
        const id = uuidv7(createdAt);
        keyById.set(id, note.key);
        await store.createNote({ id, contributorNo, title: note.title, body: note.body, tags: note.tags, createdAt }, () => false);
      }),
    );
  }
  const keyByPk = new Map<number, string>();
  for (const row of store.sqlite.query<{ pk: number; id: string }, []>("SELECT pk, id FROM posts").all()) keyByPk.set(row.pk, keyById.get(row.id)!);
  const loadMs = performance.now() - started;
  return {
    store,
    dataDir: dir,
    keyById,
    keyByPk,
    loadMs,
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Exactly what POST /v1/search runs, minus HTTP and the answer's formatting. */
export async function cairnSearch(loaded: Loaded, text: string, k = K): Promise<string[]> {
  const request = searchRequest(text, k);
  const found = request.words.length > 0 ? await loaded.store.search(request) : [];
  return found.map((note) => loaded.keyById.get(note.id)!);
}

const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * The plain baseline: an FTS5 table with SQLite's own tokenizer (porter
 * unicode61 remove_diacritics 2) over the same notes, the query's words
 * quoted and OR'ed, every match ranked by bm25() with the given column weights.
 */
export function plainBaseline(loaded: Loaded, weights: [number, number, number] = [1, 1, 1]): (text: string) => string[] {
  const db = loaded.store.sqlite;
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.plain_fts USING fts5(title, tags, body, tokenize='porter unicode61 remove_diacritics 2')`);
  if ((db.query("SELECT count(*) AS n FROM temp.plain_fts").get() as { n: number }).n === 0) {
    db.exec("INSERT INTO temp.plain_fts(rowid, title, tags, body) SELECT pk, title, tags, body FROM posts");
  }
  const query = db.query<{ rowid: number }, [string]>(
    `SELECT rowid FROM temp.plain_fts WHERE plain_fts MATCH ? ORDER BY bm25(plain_fts, ${weights.join(", ")}) LIMIT ${K}`,
  );
  return (text) => {
    const words = [...new Set([...text.toLowerCase().matchAll(WORD)].map((m) => m[0]))];
    if (words.length === 0) return [];
    return query.all(words.map((w) => `"${w.replaceAll('"', '""')}"`).join(" OR ")).map((row) => loaded.keyByPk.get(row.rowid)!);
  };
}

// --- measures --------------------------------------------------------------------

export function ndcg(ranked: string[], judged: Record<string, number>): number {
  const gain = (g: number) => 2 ** g - 1;
  const dcg = ranked.slice(0, K).reduce((sum, key, i) => sum + gain(judged[key] ?? 0) / Math.log2(i + 2), 0);
  const ideal = Object.values(judged).sort((a, b) => b - a).slice(0, K);
  const idcg = ideal.reduce((sum, g, i) => sum + gain(g) / Math.log2(i + 2), 0);
  return idcg === 0 ? 0 : dcg / idcg;
}
export function recall(ranked: string[], judged: Record<string, number>): number {
  const relevant = Object.values(judged).filter((g) => g > 0).length;
  return relevant === 0 ? 0 : ranked.slice(0, K).filter((key) => (judged[key] ?? 0) > 0).length / relevant;
}
export function mrr(ranked: string[], judged: Record<string, number>): number {
  const at = ranked.slice(0, K).findIndex((key) => (judged[key] ?? 0) > 0);
  return at < 0 ? 0 : 1 / (at + 1);
}
export const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

export interface Measures {
  ndcg: number;
  recall: number;
  mrr: number;
}
export function measure(results: Map<string, string[]>, judgments: Record<string, Record<string, number>>, ids: string[]): Measures {
  const judged = ids.filter((id) => judgments[id]);
  return {
    ndcg: mean(judged.map((id) => ndcg(results.get(id) ?? [], judgments[id]))),
    recall: mean(judged.map((id) => recall(results.get(id) ?? [], judgments[id]))),
    mrr: mean(judged.map((id) => mrr(results.get(id) ?? [], judgments[id]))),
  };
}
