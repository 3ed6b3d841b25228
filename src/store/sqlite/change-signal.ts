// A counter shared through a small memory-mapped file in the data directory:
// the SQLite engine's Store.keyGeneration(). Every process that changes a
// key's standing (`cairn admin revoke` and `activate`) bumps it after its
// COMMIT; the server reads it on every keyed request for the price of a memory
// load (~3 ns), where asking SQLite whether anything changed costs a read
// transaction: two fcntl locks and an fstat, 10-20 µs under load. That is what
// lets the server remember keys and still see a revoke on the very next request.
import { closeSync, existsSync, linkSync, openSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

const FILE = "key-generation";
const SIZE = 8;

export class ChangeSignal {
  private constructor(
    private readonly cell: Int32Array | null,
    /** Why the signal is off (the file could not be mapped); null when it works. */
    readonly unavailableReason: string | null,
  ) {}

  /**
   * Maps DATA_DIR/key-generation, creating it (0600) when missing. A file that
   * cannot be mapped leaves the signal off, and callers then read SQLite every
   * time instead of trusting memory: slower, never stale.
   */
  static open(dataDir: string): ChangeSignal {
    const path = join(dataDir, FILE);
    try {
      if (!existsSync(path)) createAtomically(path);
      // Never truncate or rewrite an existing file: another process may have it mapped.
      if (statSync(path).size < SIZE) return new ChangeSignal(null, `${path} is shorter than ${SIZE} bytes`);
      const mapped = Bun.mmap(path, { shared: true, size: SIZE });
      return new ChangeSignal(new Int32Array(mapped.buffer, mapped.byteOffset, 1), null);
    } catch (error) {
      return new ChangeSignal(null, `${path}: ${(error as Error).message}`);
    }
  }

  /** The current generation; with the signal off, a value that never repeats (so nothing is trusted). */
  read(): number {
    return this.cell ? Atomics.load(this.cell, 0) : NaN;
  }

  /** Announce a committed change to every process; atomic across processes. */
  bump(): void {
    if (this.cell) Atomics.add(this.cell, 0, 1);
  }
}

/** Writes the zeroed file beside its final name, then links it in: no process ever maps a short file. */
function createAtomically(path: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, "w", 0o600);
  try {
    writeSync(fd, new Uint8Array(SIZE));
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    unlinkSync(temporary);
  }
}
