// The key-change signal: a counter in a shared mapping that other processes
// see at once, created 0600, and off (never trusted) when it cannot be mapped.
import { describe, expect, test } from "bun:test";
import { mkdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ChangeSignal } from "../../src/store/sqlite/change-signal.ts";
import { tempDir } from "../helpers/server.ts";

const bumpInAnotherProcess = (dir: string, times: number) =>
  Bun.spawnSync([
    process.execPath,
    "-e",
    `const { ChangeSignal } = await import(${JSON.stringify(join(import.meta.dir, "../../src/store/sqlite/change-signal.ts"))});
     const s = ChangeSignal.open(${JSON.stringify(dir)}); for (let i = 0; i < ${times}; i++) s.bump();`,
  ]);

describe("ChangeSignal", () => {
  test("a bump in another process is seen here without reopening; the file is 0600", () => {
    const dir = tempDir();
    const signal = ChangeSignal.open(dir);
    expect(signal.unavailableReason).toBeNull();
    expect(statSync(join(dir, "key-generation")).mode & 0o777).toBe(0o600);
    const before = signal.read();
    expect(bumpInAnotherProcess(dir, 1).exitCode).toBe(0);
    expect(signal.read()).not.toBe(before);
  });

  test("concurrent bumps from several processes are all counted (atomic across processes)", async () => {
    const dir = tempDir();
    const signal = ChangeSignal.open(dir);
    const before = signal.read();
    const script = `const { ChangeSignal } = await import(${JSON.stringify(join(import.meta.dir, "../../src/store/sqlite/change-signal.ts"))});
      const s = ChangeSignal.open(${JSON.stringify(dir)}); for (let i = 0; i < 20000; i++) s.bump();`;
    const children = [0, 1, 2].map(() => Bun.spawn([process.execPath, "-e", script]));
    for (const child of children) expect(await child.exited).toBe(0);
    expect(signal.read() - before).toBe(60_000);
  });

  test("two handles in one process share the counter", () => {
    const dir = tempDir();
    const a = ChangeSignal.open(dir);
    const b = ChangeSignal.open(dir);
    const before = a.read();
    b.bump();
    expect(a.read()).toBe(before + 1);
  });

  test("a short file or a directory in its place turns the signal off, and off never reads equal", () => {
    const short = tempDir();
    writeFileSync(join(short, "key-generation"), "");
    const fromShort = ChangeSignal.open(short);
    expect(fromShort.unavailableReason).toContain("shorter than");
    expect(fromShort.read() === fromShort.read()).toBe(false);
    // Never rewritten: a mapped file must not change size under another process.
    expect(statSync(join(short, "key-generation")).size).toBe(0);

    const blocked = tempDir();
    mkdirSync(join(blocked, "key-generation"));
    const fromDir = ChangeSignal.open(blocked);
    expect(fromDir.unavailableReason).not.toBeNull();
    fromDir.bump(); // a no-op, not a crash
  });

  test("replaced() notices the file removed or swapped for another; created says who made it", () => {
    const dir = tempDir();
    const first = ChangeSignal.open(dir);
    expect(first.created).toBe(true);
    expect(ChangeSignal.open(dir).created).toBe(false);
    expect(first.replaced()).toBe(false);
    expect(first.bump()).toBe(0);
    expect(first.bump()).toBe(1);
    rmSync(join(dir, "key-generation"));
    expect(first.replaced()).toBe(true);
    const second = ChangeSignal.open(dir);
    expect(second.created).toBe(true);
    expect(second.read()).toBe(0);
    writeFileSync(join(dir, "key-generation.new"), new Uint8Array(8));
    renameSync(join(dir, "key-generation.new"), join(dir, "key-generation"));
    expect(second.replaced()).toBe(true);
    expect(ChangeSignal.open(dir).replaced()).toBe(false);
  });
});
