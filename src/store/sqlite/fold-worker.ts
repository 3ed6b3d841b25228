// The worker threads' side (fold-thread.ts, fts-thread.ts): a worker with a
// connection of its own that either prepares the term counts' folds
// (term-counts.ts) in a read snapshot each, the part of a fold that parses the
// notes' vectors, and hands them back as the upsert's argument (the writer
// applies them), or keeps the FTS5 index level with the search log
// (fts-follow.ts), in passes it writes itself, each in its turn (write-turn.ts).
// An entry point of its own in the executable (build-common.ts): one module
// for both, so the executable needs one entry point more, not two.
import { Database } from "bun:sqlite";
import { FTS_PASS_ROWS, FtsFollower } from "./fts-follow.ts";
import { foldWriter, type PreparedFold } from "./term-counts.ts";
import { WORKER, WriteTurn } from "./write-turn.ts";

export type FoldRequest = { open: string; turn: SharedArrayBuffer } | { close: true } | { prepare: true };
export type FoldReply = { opened: true } | { closed: true } | { prepared: PreparedFold | null; applied: boolean } | { failed: string };
export type FtsRequest = { openFts: string; turn: SharedArrayBuffer } | { close: true } | { follow: true };
export type FtsReply = { opened: true } | { closed: true } | { followed: number; lag: number } | { failed: string };

declare const self: Worker;
let db: Database | null = null;
let writeFold: (() => { prepared: PreparedFold | null; applied: boolean }) | null = null;
let fts: { follower: FtsFollower; turn: WriteTurn } | null = null;
const reply = (message: FoldReply | FtsReply) => self.postMessage(message);

/** A worker's connection: it writes derived rows (made again from the log if lost), and checkpoints are the checkpointer's (checkpointer.ts). */
function configure(connection: Database): void {
  connection.exec("PRAGMA busy_timeout = 5000");
  connection.exec("PRAGMA synchronous = NORMAL");
  connection.exec("PRAGMA wal_autocheckpoint = 0");
}

/** One FTS5 pass in the worker's turn: the writer's batches wait for it, so it is short (FTS_PASS_ROWS). */
function follow(): FtsReply {
  const { follower, turn } = fts!;
  turn.take(WORKER);
  let followed: number;
  try {
    followed = db!.transaction(() => follower.apply(FTS_PASS_ROWS)).immediate();
  } finally {
    turn.give(WORKER);
  }
  return { followed, lag: follower.lag() };
}

self.onmessage = ({ data }: MessageEvent<FoldRequest | FtsRequest>) => {
  try {
    if ("open" in data) {
      db = new Database(data.open);
      configure(db);
      writeFold = foldWriter(db, new WriteTurn(data.turn));
      reply({ opened: true });
    } else if ("openFts" in data) {
      db = new Database(data.openFts);
      configure(db);
      fts = { follower: new FtsFollower(db), turn: new WriteTurn(data.turn) };
      reply({ opened: true });
    } else if ("close" in data) {
      db?.close();
      db = null;
      reply({ closed: true });
    } else if ("follow" in data) {
      reply(follow());
    } else {
      reply(writeFold!());
    }
  } catch (error) {
    reply({ failed: String((error as Error)?.message ?? error) });
  }
};
