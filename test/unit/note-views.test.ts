// The PostgreSQL engine's note views (src/store/postgres/note-views.ts), the
// memory part: a view is answered from only while the last log read is
// recent; a change seen while a row read is in flight keeps that row out of
// memory; reads of the log that answer out of order never move the place back;
// a trimmed log forgets every view. (The two-replica black-box tests are in
// test/api/replicas.test.ts.)
import { describe, expect, test } from "bun:test";
import { NoteViews, LOG_LEASE_MS } from "../../src/store/postgres/note-views.ts";
import type { NoteRecord } from "../../src/store/types.ts";

const note = (id: string, score = 0): NoteRecord => ({
  id,
  contributorNo: 1,
  title: "t",
  body: "b",
  tags: [],
  score,
  commentCount: 0,
  createdAt: 0,
  supersedes: null,
  supersededBy: null,
});

function views() {
  let clock = 1_000;
  const v = new NoteViews(1 << 20, () => clock);
  const tick = (ms: number) => (clock += ms);
  const logRead = (changed: string[] = [], snapshot = `s${clock}`, trimmed = false, sentAt = clock) => v.applied({ sentAt, snapshot, trimmed, changed });
  const fill = (records: NoteRecord[]) => {
    const ids = records.map((r) => r.id);
    v.reading(ids);
    return () => v.read(ids, new Map(records.map((r) => [r.id, r])));
  };
  return { v, tick, logRead, fill, now: () => clock };
}

describe("NoteViews", () => {
  test("nothing is answered from before the first log read, nor once the last one is older than LOG_LEASE_MS", () => {
    const { v, tick, logRead, fill } = views();
    fill([note("a")])();
    expect(v.current("a")).toBeUndefined();
    logRead([], "s1", true); // the first read starts from nowhere: trimmed
    fill([note("a")])();
    expect(v.current("a")).toEqual(note("a"));
    tick(LOG_LEASE_MS + 1);
    expect(v.fresh).toBe(false);
    expect(v.current("a")).toBeUndefined();
    logRead();
    expect(v.current("a")).toEqual(note("a"));
  });

  test("a note the log names is dropped; a row read in flight across the change answers but is not kept", () => {
    const { v, logRead, fill } = views();
    logRead([], "s1", true);
    fill([note("a"), note("b")])();
    logRead(["a"]);
    expect(v.current("a")).toBeUndefined();
    expect(v.current("b")).toEqual(note("b"));

    const stale = fill([note("a", 0)]); // sent before the vote committed
    logRead(["a"]); // the vote, read from the log before the row read came back
    stale();
    expect(v.current("a")).toBeUndefined();
    fill([note("a", 1)])();
    expect(v.current("a")).toEqual(note("a", 1));
  });

  test("this replica's own change drops the view, and a row read in flight is not kept either", () => {
    const { v, logRead, fill } = views();
    logRead([], "s1", true);
    fill([note("a")])();
    const stale = fill([note("a")]);
    v.changed(["a", null, undefined]);
    stale();
    expect(v.current("a")).toBeUndefined();
  });

  test("a failed row read keeps nothing and leaves no read registered", () => {
    const { v, logRead } = views();
    logRead([], "s1", true);
    v.reading(["a"]);
    v.read(["a"], null);
    v.changed(["a"]); // no fill is left to mark
    const ids = ["a"];
    v.reading(ids);
    v.read(ids, new Map([["a", note("a")]]));
    expect(v.current("a")).toEqual(note("a"));
  });

  test("log reads answering out of order: every change applies, and the place is the last one sent", () => {
    const { v, tick, logRead, fill, now } = views();
    logRead([], "s0", true);
    fill([note("a"), note("b")])();
    const firstSent = now();
    tick(5);
    logRead(["b"], "s2"); // sent later, answered first
    logRead(["a"], "s1", false, firstSent);
    expect(v.position).toBe("s2");
    expect(v.current("a")).toBeUndefined();
    expect(v.current("b")).toBeUndefined();
  });

  test("a log trimmed past this replica's place forgets every view and every row read in flight", () => {
    const { v, logRead, fill } = views();
    logRead([], "s0", true);
    fill([note("a"), note("b")])();
    const inFlight = fill([note("c")]);
    logRead([], "s1", true);
    inFlight();
    for (const id of ["a", "b", "c"]) expect(v.current(id)).toBeUndefined();
    expect(v.size).toBe(0);
  });
});
