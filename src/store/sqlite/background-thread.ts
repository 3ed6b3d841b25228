// The engine's worker threads (the fold thread, the search thread) ask
// Linux's scheduler to treat them as background batch work (SCHED_BATCH). A
// thread that sleeps between messages is otherwise favoured when a message
// wakes it: on a busy 2-core host the search thread, woken by each write
// batch's message, took the core of the thread serving requests at once, so
// that thread's postMessage took ~17 µs a note of its time instead of ~6
// (docs/benchmarks.md, "Tenth round"; docs/design.md, "The search thread").
// Batch threads get the same share of the CPU, only without preempting a
// running thread when woken. Elsewhere than Linux, or when libc cannot be
// opened, nothing changes.
import { dlopen, FFIType, ptr } from "bun:ffi";

/** Linux's SCHED_BATCH policy (sched.h). */
const SCHED_BATCH = 3;

/** The calling thread's id (Linux), and why it is not a batch thread (null: it is). */
export interface ThreadScheduling {
  thread: number | null;
  notBatch: string | null;
}

/** Makes the calling thread a batch thread. */
export function runAsBatchThread(): ThreadScheduling {
  if (process.platform !== "linux") return { thread: null, notBatch: `no batch scheduling on ${process.platform}` };
  try {
    const libc = dlopen("libc.so.6", {
      sched_setscheduler: { args: [FFIType.i32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
      gettid: { args: [], returns: FFIType.i32 },
    });
    try {
      // pid 0: the calling thread; struct sched_param { int sched_priority = 0 }.
      const parameters = new Int32Array(1);
      const done = libc.symbols.sched_setscheduler(0, SCHED_BATCH, ptr(parameters)) === 0;
      return { thread: libc.symbols.gettid(), notBatch: done ? null : "sched_setscheduler refused" };
    } finally {
      libc.close();
    }
  } catch (error) {
    return { thread: null, notBatch: `libc not opened: ${(error as Error).message}` };
  }
}
