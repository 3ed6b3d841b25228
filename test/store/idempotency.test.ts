// Issue 19: the idempotency keys' storage on every engine, with the clock in
// hand: a reservation, its answer, expiry after 24 hours, a lapsed lease, the
// per-contributor cap and the bounded prune of expired keys.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS } from "../../src/core/idempotency.ts";
import type { ReserveIdempotencyKey, Store } from "../../src/store/types.ts";
import { forEachEngine, freshTestDatabase, type TestDatabase } from "../helpers/engines.ts";

forEachEngine((engine) => {
  let database: TestDatabase;
  let store: Store;
  let contributorNo: number;
  const T0 = 1_800_000_000_000;

  beforeAll(async () => {
    database = await freshTestDatabase(engine);
    store = database.open();
    await store.migrate();
    ({ contributorNo } = await store.createContributor({ email: "idem@example.org", keyPrefix: "cairn_idem00", keyDigest: new Uint8Array(32), createdAt: T0 }));
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    database?.cleanup();
  });

  const reserve = (key: string, now: number, overrides: Partial<ReserveIdempotencyKey> = {}) =>
    store.reserveIdempotencyKey({
      contributorNo,
      key,
      fingerprint: "f1",
      token: crypto.randomUUID(),
      now,
      expiresAt: now + IDEMPOTENCY_TTL_MS,
      leasedUntil: now + IDEMPOTENCY_LEASE_MS,
      keepPerContributor: 1_000,
      pruneBatch: 32,
      ...overrides,
    });

  /** Reserves `key` and stores `body` as its answer through a vote on a missing note (a write that changes nothing else). */
  async function answered(key: string, now: number, body: string) {
    const token = crypto.randomUUID();
    expect(await reserve(key, now, { token })).toEqual({ kind: "reserved" });
    await store.setVote("01890a5d-ac96-774b-bcce-b302099a8057", contributorNo, 1, now, {
      contributorNo,
      key,
      token,
      answer: () => ({ status: 404, body, noteId: null }),
    });
  }

  test("reserved, then in progress, then replayed; another fingerprint is a mismatch", async () => {
    expect(await reserve("k-basic", T0)).toEqual({ kind: "reserved" });
    expect(await reserve("k-basic", T0 + 1)).toEqual({ kind: "in_progress" });
    expect(await reserve("k-basic", T0 + 1, { fingerprint: "f2" })).toEqual({ kind: "mismatch" });
    await answered("k-done", T0, '{"first":true}');
    expect(await reserve("k-done", T0 + 5)).toEqual({ kind: "replay", answer: { status: 404, body: '{"first":true}' } });
  });

  test("a key stored under an older version's fingerprint still replays when the request names it as its former one", async () => {
    await answered("k-former", T0, '{"former":true}');
    expect(await reserve("k-former", T0 + 5, { fingerprint: "f-sorted", formerFingerprint: "f1" })).toEqual({
      kind: "replay",
      answer: { status: 404, body: '{"former":true}' },
    });
    expect(await reserve("k-former", T0 + 5, { fingerprint: "f-sorted", formerFingerprint: "f-other" })).toEqual({ kind: "mismatch" });
  });

  test("a reservation whose request never finished is taken over after its lease; the late request cannot store its answer", async () => {
    const lateToken = crypto.randomUUID();
    expect(await reserve("k-lease", T0, { token: lateToken })).toEqual({ kind: "reserved" });
    expect(await reserve("k-lease", T0 + IDEMPOTENCY_LEASE_MS + 1)).toEqual({ kind: "reserved" });
    const late = store.setVote("01890a5d-ac96-774b-bcce-b302099a8057", contributorNo, 1, T0, {
      contributorNo,
      key: "k-lease",
      token: lateToken,
      answer: () => ({ status: 404, body: "{}", noteId: null }),
    });
    await expect(late).rejects.toThrow(/taken over/);
  });

  test("an answer expires after 24 hours: the key is then new", async () => {
    await answered("k-expiry", T0, '{"old":true}');
    expect((await reserve("k-expiry", T0 + IDEMPOTENCY_TTL_MS - 1)).kind).toBe("replay");
    expect(await reserve("k-expiry", T0 + IDEMPOTENCY_TTL_MS, { fingerprint: "other" })).toEqual({ kind: "reserved" });
  });

  test("a new reservation prunes a bounded batch of expired keys, and a contributor keeps at most the cap", async () => {
    // Older than every other key here, so they are the first the prune finds.
    const old = T0 - 10 * IDEMPOTENCY_TTL_MS;
    for (let i = 0; i < 40; i++) await answered(`k-old-${i}`, old + i, "{}");
    const later = T0 + 3 * IDEMPOTENCY_TTL_MS;
    // One new reservation removes pruneBatch expired keys, the oldest first.
    await reserve("k-new-1", later, { pruneBatch: 32 });
    const survivors = async () => {
      let n = 0;
      for (let i = 0; i < 40; i++) if ((await reserve(`k-old-${i}`, old + i + 1)).kind === "replay") n++;
      return n;
    };
    expect(await survivors()).toBe(40 - 32);

    // The cap: with room for 3, the fourth key pushes out the oldest.
    for (let i = 0; i < 4; i++) await answered(`k-cap-${i}`, later + 10 + i, "{}");
    await reserve("k-cap-last", later + 20, { keepPerContributor: 3 });
    expect((await reserve("k-cap-0", later + 21, { fingerprint: "x" })).kind).toBe("reserved");
    expect((await reserve("k-cap-3", later + 21)).kind).toBe("replay");
  });
});
