// Key verification with prefix collisions, on a real SqliteStore: the lookup is
// by the 12-character prefix, and every candidate sharing it is compared by
// SHA-256 digest in constant time (src/core/service.ts `authenticate`, which
// loops over all candidates with crypto.timingSafeEqual and never returns early).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync } from "node:fs";
import { loadConfig } from "../../src/config.ts";
import { AppError } from "../../src/core/errors.ts";
import { digestKey, KEY_PREFIX_LENGTH, mintKey } from "../../src/core/keys.ts";
import { KnownKeys } from "../../src/core/known-keys.ts";
import { Cairn } from "../../src/core/service.ts";
import { SqliteStore } from "../../src/store/sqlite/store.ts";
import type { KeyCandidate, Store } from "../../src/store/types.ts";
import { tempDir } from "../helpers/server.ts";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const randomTail = (length: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(length)), (byte) => BASE62[byte % 62]).join("");

let dir: string;
let store: SqliteStore;
let cairn: Cairn;
let prefix: string;
let keyA: string;
let keyB: string;
let keyC: string;
let noA: number;
let noB: number;
let noC: number;
/** Digest reads of key candidates, counted through a wrapping store. */
let digestReads = 0;

/** Inserts a contributor row directly, with the prefix and digest we choose. */
function insertRow(email: string, keyPrefix: string, key: string): number {
  const row = store.sqlite
    .query<{ contributor_no: number }, [string, string, Uint8Array, number]>(
      "INSERT INTO contributors (email, key_prefix, key_digest, created_at) VALUES (?, ?, ?, ?) RETURNING contributor_no",
    )
    .get(email, keyPrefix, digestKey(key), Date.now());
  return row!.contributor_no;
}

beforeAll(async () => {
  dir = tempDir("cairn-auth-unit-");
  store = new SqliteStore({ dataDir: dir });
  await store.migrate();
  // A wrapper that counts how many candidates' digests authenticate reads.
  const counting: Store = Object.create(store);
  counting.keyCandidates = async (p: string) =>
    (await store.keyCandidates(p)).map((candidate): KeyCandidate => ({
      contributorNo: candidate.contributorNo,
      active: candidate.active,
      get keyDigest() {
        digestReads++;
        return candidate.keyDigest;
      },
    }));
  cairn = new Cairn(counting, loadConfig({ DATA_DIR: dir }));

  keyA = mintKey().key;
  prefix = keyA.slice(0, KEY_PREFIX_LENGTH);
  // Two more keys forced to share A's prefix (a collision the random keys make unlikely, not impossible).
  keyB = prefix + randomTail(keyA.length - KEY_PREFIX_LENGTH);
  keyC = prefix + randomTail(keyA.length - KEY_PREFIX_LENGTH);
  noA = insertRow("a@example.org", prefix, keyA);
  noB = insertRow("b@example.org", prefix, keyB);
  noC = insertRow("c@example.org", prefix, keyC);
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function outcome(token: string): Promise<number | string> {
  try {
    return await cairn.authenticate(`Bearer ${token}`);
  } catch (error) {
    return error instanceof AppError ? error.code : `threw ${String(error)}`;
  }
}

describe("authenticate with contributors sharing a key prefix", () => {
  test("the rows really share the prefix", async () => {
    expect(new Set([keyA, keyB, keyC].map((k) => k.slice(0, KEY_PREFIX_LENGTH))).size).toBe(1);
    expect(new Set([keyA, keyB, keyC]).size).toBe(3);
    expect((await store.keyCandidates(prefix)).map((c) => c.contributorNo).sort()).toEqual([noA, noB, noC].sort());
  });

  test("each key authenticates to its own contributor", async () => {
    expect(await outcome(keyA)).toBe(noA);
    expect(await outcome(keyB)).toBe(noB);
    expect(await outcome(keyC)).toBe(noC);
  });

  test("a fourth key with the same prefix fails, as do near misses", async () => {
    expect(await outcome(prefix + randomTail(keyA.length - KEY_PREFIX_LENGTH))).toBe("unauthorized");
    const last = keyA.at(-1) === "a" ? "b" : "a";
    expect(await outcome(keyA.slice(0, -1) + last)).toBe("unauthorized");
    expect(await outcome(keyA + "x")).toBe("unauthorized");
  });

  test("no early exit: every candidate's digest is compared, whichever one matches", async () => {
    for (const [token, expected] of [
      [keyA, noA],
      [keyB, noB],
      [keyC, noC],
      [prefix + randomTail(keyA.length - KEY_PREFIX_LENGTH), "unauthorized"],
    ] as const) {
      // Move the key generation so nothing is remembered: this test is about the full check.
      await store.setActive(noA, true);
      digestReads = 0;
      expect(await outcome(token)).toBe(expected);
      expect(digestReads).toBe(3);
    }
  });

  test("a key found valid is remembered by digest until the generation moves", async () => {
    await store.setActive(noA, true);
    digestReads = 0;
    expect(await outcome(keyB)).toBe(noB);
    expect(digestReads).toBe(3);
    expect(await outcome(keyB)).toBe(noB);
    expect(digestReads).toBe(3); // remembered: the store was not asked
    // A failure is never remembered: every try is checked in full.
    const wrong = prefix + randomTail(keyA.length - KEY_PREFIX_LENGTH);
    expect(await outcome(wrong)).toBe("unauthorized");
    expect(await outcome(wrong)).toBe("unauthorized");
    expect(digestReads).toBe(9);
    await store.setActive(noC, true); // any standing change, even a no-op, forgets everything
    expect(await outcome(keyB)).toBe(noB);
    expect(digestReads).toBe(12);
  });

  test("a revoked colliding key is refused on the next call; the others still work", async () => {
    await store.setActive(noB, false);
    expect(await outcome(keyB)).toBe("unauthorized");
    expect(await outcome(keyA)).toBe(noA);
    expect(await outcome(keyC)).toBe(noC);
    await store.setActive(noB, true);
    expect(await outcome(keyB)).toBe(noB);
  });

  test("malformed headers never reach the store", async () => {
    digestReads = 0;
    for (const header of [null, "", "Bearer", `Basic ${keyA}`, `Bearer ${keyA} extra`, `Bearer ${prefix}`, `Bearer ${keyA}\u0000`]) {
      await expect(cairn.authenticate(header)).rejects.toMatchObject({ code: "unauthorized" });
    }
    expect(digestReads).toBe(0);
  });
});

describe("remembered keys (src/core/known-keys.ts, src/store/sqlite/change-signal.ts)", () => {
  test("a new key sharing an already cached prefix is accepted at once", async () => {
    expect(await outcome(keyA)).toBe(noA); // the prefix's candidates are now cached
    const keyD = prefix + randomTail(keyA.length - KEY_PREFIX_LENGTH);
    const created = await store.createContributor({ email: "d@example.org", keyPrefix: prefix, keyDigest: digestKey(keyD), createdAt: Date.now() });
    expect(await outcome(keyD)).toBe(created.contributorNo);
    expect(await outcome(keyA)).toBe(noA);
  });

  test("the cache is real: a change behind the store's back is unseen until a key change is announced", async () => {
    expect(await outcome(keyC)).toBe(noC);
    store.sqlite.query("UPDATE contributors SET active = 0 WHERE contributor_no = ?").run(noC);
    expect(await outcome(keyC)).toBe(noC); // served from memory
    // Any key change through a store (here: re-activating A, a no-op) announces itself.
    await store.setActive(noA, true);
    expect(await outcome(keyC)).toBe("unauthorized");
    await store.setActive(noC, true);
    expect(await outcome(keyC)).toBe(noC);
  });

  test("rememberedContributor answers only for keys already found valid in this generation", async () => {
    const keyE = prefix + randomTail(keyA.length - KEY_PREFIX_LENGTH);
    const created = await store.createContributor({ email: "e@example.org", keyPrefix: prefix, keyDigest: digestKey(keyE), createdAt: Date.now() });
    expect(cairn.rememberedContributor(`Bearer ${keyE}`)).toBeUndefined(); // not checked yet
    expect(await outcome(keyE)).toBe(created.contributorNo);
    expect(cairn.rememberedContributor(`Bearer ${keyE}`)).toBe(created.contributorNo);
    expect(cairn.rememberedContributor(`bearer  ${keyE} `)).toBe(created.contributorNo); // the same header rules as authenticate
    for (const header of [null, "", `Basic ${keyE}`, `Bearer ${keyE}x`, `Bearer ${keyE} extra`]) {
      expect(cairn.rememberedContributor(header)).toBeUndefined();
    }
    await store.setActive(created.contributorNo, false); // a key change forgets everything
    expect(cairn.rememberedContributor(`Bearer ${keyE}`)).toBeUndefined();
    expect(await outcome(keyE)).toBe("unauthorized");
    expect(cairn.rememberedContributor(`Bearer ${keyE}`)).toBeUndefined(); // failures are never remembered
  });

  test("contributorFor: a remembered key at once (a number, no promise), any other as authenticate answers", async () => {
    const keyF = prefix + randomTail(keyA.length - KEY_PREFIX_LENGTH);
    const created = await store.createContributor({ email: "f@example.org", keyPrefix: prefix, keyDigest: digestKey(keyF), createdAt: Date.now() });
    const first = cairn.contributorFor(`Bearer ${keyF}`);
    expect(first).toBeInstanceOf(Promise); // not checked yet
    expect(await first).toBe(created.contributorNo);
    expect(cairn.contributorFor(`Bearer ${keyF}`)).toBe(created.contributorNo);
    for (const header of [null, "", `Basic ${keyF}`, `Bearer ${keyF}x`]) {
      await expect(Promise.resolve(cairn.contributorFor(header))).rejects.toMatchObject({ code: "unauthorized" });
    }
    await store.setActive(created.contributorNo, false);
    await expect(Promise.resolve(cairn.contributorFor(`Bearer ${keyF}`))).rejects.toMatchObject({ code: "unauthorized" });
  });

  test("a revoke committed by another process is seen on the next call", async () => {
    expect(await outcome(keyB)).toBe(noB);
    const storeModule = JSON.stringify(`${import.meta.dir}/../../src/store/sqlite/store.ts`);
    const revoke = (active: boolean) =>
      Bun.spawnSync([
        process.execPath,
        "-e",
        `const { SqliteStore } = await import(${storeModule});
         const s = new SqliteStore({ dataDir: ${JSON.stringify(dir)} });
         if (!(await s.setActive(${noB}, ${active}))) process.exit(3);
         await s.close();`,
      ]).exitCode;
    expect(revoke(false)).toBe(0);
    expect(await outcome(keyB)).toBe("unauthorized");
    expect(revoke(true)).toBe(0);
    expect(await outcome(keyB)).toBe(noB);
  });
});

test("with the signal off (key-generation unusable), nothing is remembered: every check reads SQLite", async () => {
  const offDir = tempDir("cairn-auth-off-");
  mkdirSync(`${offDir}/key-generation`);
  const offStore = new SqliteStore({ dataDir: offDir });
  await offStore.migrate();
  expect(offStore.keySignalOffReason).toContain("key-generation");
  const minted = mintKey();
  const created = await offStore.createContributor({ email: "off@example.org", keyPrefix: minted.prefix, keyDigest: minted.digest, createdAt: Date.now() });
  expect(Number.isNaN(offStore.keyGeneration())).toBe(true);
  const offCairn = new Cairn(offStore, loadConfig({ DATA_DIR: offDir }));
  expect(await offCairn.authenticate(`Bearer ${minted.key}`)).toBe(created.contributorNo);
  offStore.sqlite.query("UPDATE contributors SET active = 0 WHERE contributor_no = ?").run(created.contributorNo);
  await expect(offCairn.authenticate(`Bearer ${minted.key}`)).rejects.toMatchObject({ code: "unauthorized" });
  await offStore.close();
  rmSync(offDir, { recursive: true, force: true });
});

test("KnownKeys: while the generation is unknown (NaN) nothing is trusted or learnt, and the keys come back with an unchanged generation, never with a moved one", () => {
  const known = new KnownKeys();
  expect(known.lookup("d1", 5)).toBeUndefined();
  known.remember("d1", 1, 5);
  expect(known.lookup("d1", 5)).toBe(1);
  // A lapse (a PostgreSQL replica outside its lease): not trusted, not learnt, not forgotten.
  expect(known.lookup("d1", NaN)).toBeUndefined();
  known.remember("d2", 2, NaN);
  expect(known.lookup("d1", 5)).toBe(1);
  expect(known.lookup("d2", 5)).toBeUndefined();
  // The generation moved (a key changed): everything is forgotten, also if the old number is seen again.
  expect(known.lookup("d1", 6)).toBeUndefined();
  expect(known.lookup("d1", 6)).toBeUndefined();
  known.remember("d3", 3, 5); // read under a generation that is no longer current: not kept
  expect(known.lookup("d3", 6)).toBeUndefined();
  expect(known.lookup("d1", 5)).toBeUndefined();
});
