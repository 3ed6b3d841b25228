// The group commit's hold (src/store/sqlite/group-commit.ts, WriteHold): a
// batch waits for the writes known to be on their way (note creations whose
// similar-notes lookup is being answered) and commits them together; it never
// waits past its bound, and waits for nothing when nothing is on its way.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { GroupCommit, LookupsOnTheirWay } from "../../src/store/sqlite/group-commit.ts";

/** A group commit on a fresh database, held by `lookups` (the search thread tells it of lookups by query id, ascending). */
function committer(lookups: LookupsOnTheirWay) {
  const sqlite = new Database(":memory:");
  sqlite.exec("CREATE TABLE t (x INTEGER)");
  const batches: number[] = [];
  let inBatch = 0;
  const commit = new GroupCommit(
    sqlite,
    {
      committed: () => {
        batches.push(inBatch);
        inBatch = 0;
      },
      failed: () => {},
      writeStarted: () => inBatch++,
    },
    undefined,
    lookups,
  );
  const insert = sqlite.prepare("INSERT INTO t (x) VALUES (?)");
  return { batches, write: (x: number) => commit.write(() => insert.run(x)) };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

test("a batch waits for the writes whose lookups were asked before it, and commits them together", async () => {
  const lookups = new LookupsOnTheirWay();
  const { batches, write } = committer(lookups);
  lookups.asked(0);
  lookups.asked(1);
  // The first lookup answered: its write is queued while the second is still on its way.
  lookups.answered(0);
  const a = write(1);
  await turn();
  await turn();
  expect(batches).toEqual([]);
  lookups.answered(1);
  const b = write(2);
  lookups.arrived();
  await Promise.all([a, b]);
  expect(batches).toEqual([2]);
});

test("a batch never waits past its bound for a lookup that does not come back", async () => {
  const lookups = new LookupsOnTheirWay();
  const { batches, write } = committer(lookups);
  lookups.asked(0);
  const started = performance.now();
  await write(1);
  expect(batches).toEqual([1]);
  // MAX_HOLD_MS (1 ms) plus a timer's slack on a loaded host.
  expect(performance.now() - started).toBeLessThan(200);
});

test("nothing on its way (a lone create, lookups asked after the write, no lookups): no wait", async () => {
  const lookups = new LookupsOnTheirWay();
  const { batches, write } = committer(lookups);
  const a = write(1);
  // Asked after the batch's first write: not waited for.
  lookups.asked(0);
  await turn();
  await turn();
  // Committed within the turn after the write, not at the bound.
  expect(batches).toEqual([1]);
  await a;
});
