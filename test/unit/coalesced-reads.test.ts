// Coalesced point reads (the PostgreSQL engine's key and note reads): the
// reads asked for in one turn go out as one fetch, each read is sent after it
// was asked for (never answered from an earlier fetch), a failed fetch fails
// its reads and only those, and array parameters are quoted.
import { describe, expect, test } from "bun:test";
import { CoalescedReads, textArray } from "../../src/store/postgres/coalesced-reads.ts";

function recorder(answer: (keys: string[]) => Map<string, number> | Error = (keys) => new Map(keys.map((k) => [k, k.length]))) {
  const fetches: string[][] = [];
  const reads = new CoalescedReads<number, number | null>(
    async (keys) => {
      fetches.push(keys);
      const result = answer(keys);
      if (result instanceof Error) throw result;
      return result;
    },
    (row) => row ?? null,
  );
  return { fetches, reads };
}

describe("CoalescedReads", () => {
  test("reads asked for together share one fetch; a repeated key is fetched once; a missing one answers the default", async () => {
    const { fetches, reads } = recorder((keys) => new Map(keys.filter((k) => k !== "gone").map((k) => [k, k.length])));
    const answers = await Promise.all([reads.read("a"), reads.read("bb"), reads.read("a"), reads.read("gone")]);
    expect(answers).toEqual([1, 2, 1, null]);
    expect(fetches).toEqual([["a", "bb", "gone"]]);
  });

  test("a read asked for after a fetch was sent waits for a new fetch (never an earlier answer)", async () => {
    let version = 0;
    const { fetches, reads } = recorder((keys) => new Map(keys.map((k) => [k, version])));
    const first = reads.read("k");
    await Bun.sleep(0); // the first fetch is sent
    version = 1; // a change committed after the first read was sent...
    const second = reads.read("k"); // ...is seen by a read asked for after it
    expect(await first).toBe(0);
    expect(await second).toBe(1);
    expect(fetches).toEqual([["k"], ["k"]]);
  });

  test("a failed fetch fails every read of its batch, and the next batch is fetched afresh", async () => {
    let fail = true;
    const { reads } = recorder((keys) => (fail ? new Error("database down") : new Map(keys.map((k) => [k, 7]))));
    const failed = await Promise.allSettled([reads.read("x"), reads.read("y")]);
    expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect((failed[0] as PromiseRejectedResult).reason.message).toBe("database down");
    fail = false;
    expect(await reads.read("x")).toBe(7);
  });

  test("an answer that throws fails its own read only", async () => {
    const reads = new CoalescedReads<number, number>(
      async (keys) => new Map(keys.map((k) => [k, k.length])),
      (row) => {
        if (row === 3) throw new Error("bad row");
        return row ?? 0;
      },
    );
    const [ok, bad] = await Promise.allSettled([reads.read("ab"), reads.read("abc")]);
    expect(ok).toEqual({ status: "fulfilled", value: 2 });
    expect(bad.status).toBe("rejected");
  });

  test("sent(): settles after a fetch sent after the call (with the keys asked for meanwhile, or none), and fails with it", async () => {
    let fail = false;
    const { fetches, reads } = recorder((keys) => (fail ? new Error("database down") : new Map(keys.map((k) => [k, 1]))));
    await reads.sent();
    expect(fetches).toEqual([[]]);
    const [, answer] = await Promise.all([reads.sent(), reads.read("k")]);
    expect(answer).toBe(1);
    expect(fetches).toEqual([[], ["k"]]);
    fail = true;
    await expect(reads.sent()).rejects.toThrow("database down");
  });

  test("textArray quotes every element (quotes and backslashes escaped)", () => {
    expect(textArray(["a", 'b"c', "d\\e", "x,y", ""])).toBe('{"a","b\\"c","d\\\\e","x,y",""}');
  });
});
