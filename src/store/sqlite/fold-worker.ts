// The fold thread's side (fold-thread.ts): a worker with a connection of its
// own that prepares the term counts' folds (term-folds.ts) in a read
// snapshot each, the part of a fold that parses the notes' vectors, and
// writes each in a short transaction of its own, in its write turn
// (write-turn.ts), together with the FTS5 rows of the log rows the FTS5 index
// has not followed yet (fts-follow.ts). An entry point of its own in the
// executable (build-common.ts).
import { Database } from "bun:sqlite";
import { FtsFollower } from "./fts-follow.ts";
import { foldWriter, type FoldOutcome, type WrittenVectors } from "./term-folds.ts";
import { attachSearchFile } from "./search-file.ts";
import { WriteTurn } from "./write-turn.ts";
import { runAsBatchThread } from "./background-thread.ts";

export type FoldRequest = { open: string; turn: SharedArrayBuffer } | { close: true } | { prepare: true; written?: WrittenVectors };
export type FoldReply = { opened: true } | { closed: true } | FoldOutcome | { failed: string };

declare const self: Worker;
// Background work: not to preempt the thread serving requests when a message wakes this one (background-thread.ts).
runAsBatchThread();
let db: Database | null = null;
let writeFold: ((written?: WrittenVectors) => FoldOutcome) | null = null;
const reply = (message: FoldReply) => self.postMessage(message);

/**
 * The worker's connection: it writes the search file only (search-file.ts:
 * rows made again from cairn.db if lost), so its autocheckpoint copies back
 * that file's WAL alone; cairn.db's checkpoints are the checkpointer's
 * (checkpointer.ts).
 */
function configure(connection: Database): void {
  connection.exec("PRAGMA busy_timeout = 5000");
  connection.exec("PRAGMA synchronous = NORMAL");
  attachSearchFile(connection);
}

self.onmessage = ({ data }: MessageEvent<FoldRequest>) => {
  try {
    if ("open" in data) {
      db = new Database(data.open);
      configure(db);
      writeFold = foldWriter(db, new WriteTurn(data.turn), new FtsFollower(db));
      reply({ opened: true });
    } else if ("close" in data) {
      db?.close();
      db = null;
      reply({ closed: true });
    } else {
      reply(writeFold!(data.written));
    }
  } catch (error) {
    reply({ failed: String((error as Error)?.message ?? error) });
  }
};
