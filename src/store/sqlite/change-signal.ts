// A counter shared through a small memory-mapped file in the data directory.
// Two of them: `key-generation` (Store.keyGeneration(): every process that
// changes a key's standing, `cairn admin revoke` and `activate`, bumps it after
// its COMMIT) and `note-generation` (every server that changes a note bumps it
// after its COMMIT, so other servers on the directory drop their note caches).
// Reading one costs a memory load (~3 ns), where asking SQLite whether
// anything changed costs a read transaction: two fcntl locks and an fstat,
// 10-20 µs under load. That is what lets a server remember keys and notes and
// still see another process's change on the very next request.
//
// The mapping follows the file it opened, not its name: a file removed or
// replaced while a server runs would leave the server and `cairn admin` on two
// different counters, and a revoke would go unseen. replaced() compares the
// file at the path with the one mapped (device and inode); the server checks
// it every second and maps the new file, and `cairn admin` checks it on each
// write (see src/admin/main.ts).
import { closeSync, existsSync, linkSync, openSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

export const KEY_SIGNAL_FILE = "key-generation";
export const NOTE_SIGNAL_FILE = "note-generation";
const SIZE = 8;
/** How often a server checks that its signal files are still the ones at their paths. */
export const SIGNAL_CHECK_MS = 1_000;

export class ChangeSignal {
  private constructor(
    private readonly cell: Int32Array | null,
    /** Why the signal is off (the file could not be mapped); null when it works. */
    readonly unavailableReason: string | null,
    readonly path: string,
    /** "device:inode" of the mapped file; null when nothing is mapped. */
    private readonly identity: string | null,
    /** True when this process made the file (it was missing). */
    readonly created: boolean,
    /**
     * When the mapped file was made (ms): its birth time, or where the file
     * system keeps none, its status-change time (then also when it was last
     * written: a bump a moment ago reads as a file just made).
     */
    readonly madeAtMs: number = 0,
  ) {}

  /**
   * Maps DATA_DIR/`file`, creating it (0600) when missing. A file that
   * cannot be mapped leaves the signal off, and callers then read SQLite every
   * time instead of trusting memory: slower, never stale.
   */
  static open(dataDir: string, file = KEY_SIGNAL_FILE): ChangeSignal {
    const path = join(dataDir, file);
    let created = false;
    try {
      if (!existsSync(path)) created = createAtomically(path);
      // Never truncate or rewrite an existing file: another process may have it mapped.
      const stat = statSync(path);
      if (stat.size < SIZE) return new ChangeSignal(null, `${path} is shorter than ${SIZE} bytes`, path, null, created);
      const mapped = Bun.mmap(path, { shared: true, size: SIZE });
      return new ChangeSignal(new Int32Array(mapped.buffer, mapped.byteOffset, 1), null, path, identityOf(stat), created, stat.birthtimeMs > 0 ? stat.birthtimeMs : stat.ctimeMs);
    } catch (error) {
      return new ChangeSignal(null, `${path}: ${(error as Error).message}`, path, null, created);
    }
  }

  /** The current generation; with the signal off, a value that never repeats (so nothing is trusted). */
  read(): number {
    return this.cell ? Atomics.load(this.cell, 0) : NaN;
  }

  /** Announce a committed change to every process; atomic across processes. Returns the value before (NaN when off). */
  bump(): number {
    return this.cell ? Atomics.add(this.cell, 0, 1) : NaN;
  }

  /** True when the path no longer names the mapped file (removed, or replaced by another file). */
  replaced(): boolean {
    if (this.identity === null) return false;
    try {
      return identityOf(statSync(this.path)) !== this.identity;
    } catch {
      return true;
    }
  }
}

const identityOf = (stat: { dev: number; ino: number }) => `${stat.dev}:${stat.ino}`;

/** Writes the zeroed file beside its final name, then links it in: no process ever maps a short file. True when this call made it. */
function createAtomically(path: string): boolean {
  const temporary = `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, "w", 0o600);
  try {
    writeSync(fd, new Uint8Array(SIZE));
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return false;
  } finally {
    unlinkSync(temporary);
  }
}
