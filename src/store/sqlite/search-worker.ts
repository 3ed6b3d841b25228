// The search thread's side (search-thread.ts): a worker holding the in-memory
// postings, with a read-only connection of its own to the database and the
// search file. It builds them, follows the search log as another process on
// the same file would (memory-search.ts), taking the stored vectors of the
// notes the serving thread wrote from its messages instead of reading them
// back, and answers searches, tagged searches and similar-notes lookups with
// keys and scores (the serving thread reads the rows; of a lookup's notes
// tied past its limit, this thread reads the order and cuts them). Every query first
// reads the log up to the latest commit, so it finds every note committed
// before it was asked. An entry point of its own in the executable
// (worker-url.ts).
import { Database } from "bun:sqlite";
import type { SimilarQuery, SimilarRanking } from "../../core/search/own-score.ts";
import type { Ranked } from "../../core/search/ranking.ts";
import type { WordedVector } from "../../core/search/vector.ts";
import type { OwnRows, SearchFollower } from "../search-follower.ts";
import { orderColumns, sqliteMemorySearch, storedVectors } from "./memory-search.ts";
import { cutTies, type OrderColumns } from "../../core/search/query.ts";
import { SqliteNoteTags } from "./note-tags.ts";
import { searchPostings, searchTaggedPostings, type VectorReader } from "../../core/search/memory-queries.ts";
import { rankSimilarInMemory } from "../../core/search/similar-memory.ts";
import { attachSearchFile } from "./search-file.ts";
import { runAsBatchThread, type ThreadScheduling } from "./background-thread.ts";

export type SearchQuery =
  | { search: { words: string[]; limit: number } }
  | { tagged: { words: string[]; tags: string[]; limit: number } }
  | { similar: SimilarQuery };
/**
 * `queries`: the queries the serving thread asked in one turn of its event
 * loop, in one message (a message costs its sender ~10 µs whatever it holds:
 * docs/design.md, "The search thread"); their answers go back together
 * (answerAll).
 */
export type SearchThreadRequest =
  | { open: { file: string; budgetBytes: number; loadNowPostings?: number } }
  | { committed: Map<number, string | WordedVector>; rows?: OwnRows; upTo?: number }
  | { queries: ({ id: number } & SearchQuery)[] }
  | { close: true };
/** `off`: why the postings do not serve queries now (null: they do), sent with every answer. */
export type QueryAnswer =
  | { id: number; off: string | null; ranked: Ranked[] | null }
  | { id: number; off: string | null; similar: SimilarRanking | null }
  | { id: number; off: string | null; error: string };
export type SearchThreadReply =
  | { started: true; off: string | null; scheduling: ThreadScheduling }
  | { loaded: true; off: string | null }
  | { answers: QueryAnswer[] }
  | { closed: true }
  | { failed: string };

declare const self: Worker;
// Background work: not to preempt the thread serving requests when a message wakes this one (background-thread.ts).
const scheduling = runAsBatchThread();
let db: Database | null = null;
let follower: SearchFollower<number> | null = null;
let tags: SqliteNoteTags | null = null;
let stored: VectorReader | null = null;
let order: ((keys: number[]) => OrderColumns[]) | null = null;
const reply = (message: SearchThreadReply) => self.postMessage(message);

function open({ file, budgetBytes, loadNowPostings }: { file: string; budgetBytes: number; loadNowPostings?: number }): void {
  db = new Database(file, { readonly: true });
  db.exec("PRAGMA busy_timeout = 5000");
  attachSearchFile(db, true);
  const connection = db;
  stored = { vectors: storedVectors(connection) };
  order = orderColumns(connection);
  tags = new SqliteNoteTags(connection);
  follower = sqliteMemorySearch(connection, budgetBytes, loadNowPostings);
  const started = follower;
  void started.start().then(
    () => {
      reply({ started: true, off: started.offReason, scheduling });
      void started.loaded().then(() => reply({ loaded: true, off: started.offReason }));
    },
    (error) => reply({ failed: String((error as Error)?.message ?? error) }),
  );
}

async function answer(request: { id: number } & SearchQuery): Promise<QueryAnswer> {
  const { id } = request;
  const postings = follower;
  if (postings === null) return { id, off: "closed", ranked: null };
  try {
    const memory = await postings.current();
    const off = postings.offReason;
    if ("similar" in request) {
      // Ties past the limit cut here, on this connection: the serving thread then reads the listed notes' rows only.
      const similar = memory ? rankSimilarInMemory(memory, request.similar) : null;
      if (similar) similar.ranked = cutTies(similar.ranked, request.similar.limit, order!);
      return { id, off, similar };
    }
    let ranked: Ranked[] | null = null;
    if (memory && "search" in request) ranked = await searchPostings(memory, request.search.words, request.search.limit);
    else if (memory && "tagged" in request) {
      const { words, tags: tagWords, limit } = request.tagged;
      ranked = await searchTaggedPostings(memory, words, tags!.tagged(tagWords), limit, stored!);
    }
    return { id, off, ranked };
  } catch (error) {
    return { id, off: postings.offReason, error: String((error as Error)?.message ?? error) };
  }
}

/**
 * A turn's answers go back together: in one message when the turn's queries
 * are ranked within REPLY_WAIT_MS of the first answer kept back, else what is
 * ranked by then, and the rest at the end. A message costs both threads ~10 µs
 * whatever it holds: one an answer cost hinted creates 7-12% of their rate,
 * while the whole turn at once left the serving thread idle, then flooded
 * (docs/benchmarks.md, "Twelfth round"). A timer sends the answers held should
 * a later query wait on the database (a search first reads the log when the
 * postings are behind), so an answer is never held much past the wait.
 */
async function answerAll(queries: ({ id: number } & SearchQuery)[]): Promise<void> {
  let held: QueryAnswer[] = [];
  let heldSince = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const send = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (held.length > 0) reply({ answers: held });
    held = [];
  };
  for (const query of queries) {
    const answered = await answer(query);
    if (held.length === 0) {
      heldSince = performance.now();
      timer = setTimeout(send, REPLY_WAIT_MS);
    }
    held.push(answered);
    if (performance.now() - heldSince >= REPLY_WAIT_MS) send();
  }
  send();
}

/** How long a ranked answer may wait for the answers after it (answerAll). */
const REPLY_WAIT_MS = 0.5;

self.onmessage = ({ data }: MessageEvent<SearchThreadRequest>) => {
  try {
    if ("open" in data) open(data.open);
    else if ("committed" in data) follower?.committed(data.committed, data.rows, data.upTo);
    else if ("close" in data) {
      follower?.close();
      follower = null;
      db?.close();
      db = null;
      reply({ closed: true });
    } else void answerAll(data.queries);
  } catch (error) {
    reply({ failed: String((error as Error)?.message ?? error) });
  }
};
