// The group commit's hold (src/store/sqlite/group-commit.ts, WriteHold): a
// batch waits for the writes known to be on their way (note creations whose
// similar-notes lookup is being answered) and commits them together; it never
// waits past its bound, and waits for nothing when nothing is on its way.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { GroupCommit, type WriteHold } from "../../src/store/sqlite/group-commit.ts";

/** The search thread's side of the hold, driven by the test: lookups asked (ids) and answered. */
class Lookups implements WriteHold {
  private next = 0;
  private readonly waiting = new Set<number>();
  private arrivals: (() => void)[] = [];
  ask(): number {
    this.waiting.add(this.next);
    return this.next++;
  }
  answer(id: number): void {
    this.waiting.delete(id);
  }
  /** What an answers message does after its answers (search-thread.ts). */
  arrived(): void {
    const wakes = this.arrivals;
    this.arrivals = [];
    for (const wake of wakes) wake();
  }
  mark(): number {
    return this.next;
  }
  coming(mark: number): boolean {
    for (const id of this.waiting) return id < mark;
    return false;
  }
  onArrival(wake: () => void): void {
    this.arrivals.push(wake);
  }
}

function committer(lookups: Lookups) {
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
  const lookups = new Lookups();
  const { batches, write } = committer(lookups);
  const first = lookups.ask();
  const second = lookups.ask();
  // The first lookup answered: its write is queued while the second is still on its way.
  lookups.answer(first);
  const a = write(1);
  await turn();
  await turn();
  expect(batches).toEqual([]);
  lookups.answer(second);
  const b = write(2);
  lookups.arrived();
  await Promise.all([a, b]);
  expect(batches).toEqual([2]);
});

test("a batch never waits past its bound for a lookup that does not come back", async () => {
  const lookups = new Lookups();
  const { batches, write } = committer(lookups);
  lookups.ask();
  const started = performance.now();
  await write(1);
  expect(batches).toEqual([1]);
  // MAX_HOLD_MS (1 ms) plus a timer's slack on a loaded host.
  expect(performance.now() - started).toBeLessThan(200);
});

test("nothing on its way (a lone create, lookups asked after the write, no lookups): no wait", async () => {
  const lookups = new Lookups();
  const { batches, write } = committer(lookups);
  const a = write(1);
  // Asked after the batch's first write: not waited for.
  lookups.ask();
  await turn();
  await turn();
  // Committed within the turn after the write, not at the bound.
  expect(batches).toEqual([1]);
  await a;
});
