// The fold thread's side (fold-thread.ts): a worker with a connection of its
// own that prepares the term counts' folds (term-counts.ts) in a read
// snapshot each, the part of a fold that parses the notes' vectors, and
// hands them back as the upsert's argument; the writer applies them.
// An entry point of its own in the executable (build-common.ts).
import { Database } from "bun:sqlite";
import { foldPreparer, type PreparedFold } from "./term-counts.ts";

export type FoldRequest = { open: string } | { close: true } | { prepare: true };
export type FoldReply = { opened: true } | { closed: true } | { prepared: PreparedFold | null } | { failed: string };

declare const self: Worker;
let db: Database | null = null;
let prepareFold: (() => PreparedFold | null) | null = null;
const reply = (message: FoldReply) => self.postMessage(message);

self.onmessage = ({ data }: MessageEvent<FoldRequest>) => {
  try {
    if ("open" in data) {
      db = new Database(data.open);
      db.exec("PRAGMA busy_timeout = 5000");
      db.exec("PRAGMA query_only = 1");
      prepareFold = foldPreparer(db);
      reply({ opened: true });
    } else if ("close" in data) {
      db?.close();
      db = null;
      reply({ closed: true });
    } else {
      reply({ prepared: prepareFold!() });
    }
  } catch (error) {
    reply({ failed: String((error as Error)?.message ?? error) });
  }
};
