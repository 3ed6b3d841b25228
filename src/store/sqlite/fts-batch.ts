// The FTS5 changes of a write batch (group-commit.ts), made together just
// before its COMMIT. FTS5 writes the terms it holds in memory out as a new
// index segment at every savepoint (and every statement that opens one), and
// each write of a batch runs in its own savepoint: made in place, every note
// would become a segment of its own, to be merged again later, which was a
// third of a ~2 KB note's write (docs/benchmarks.md). Made at the end of the
// batch, a batch is one segment. Nothing reads the FTS5 index inside a batch.
// Outside a batch (catch-up at start, bulk tools) changes are made at once.

/** A row to insert (its columns) or to delete (null). */
interface Change {
  pk: number;
  columns: string[] | null;
}

export class FtsBatch {
  /** Changes of the write running now, then of the batch's writes that succeeded. */
  private ofWrite: Change[] = [];
  private ofBatch: Change[] = [];
  private inWrite = false;

  constructor(
    private readonly insert: (pk: number, columns: string[]) => void,
    private readonly remove: (pk: number) => void,
  ) {}

  add(pk: number, columns: string[]): void {
    if (this.inWrite) this.ofWrite.push({ pk, columns });
    else this.insert(pk, columns);
  }

  delete(pk: number): void {
    if (this.inWrite) this.ofWrite.push({ pk, columns: null });
    else this.remove(pk);
  }

  writeStarted(): void {
    this.inWrite = true;
  }

  /** A write that failed was rolled back: its changes are dropped. */
  writeEnded(ok: boolean): void {
    this.inWrite = false;
    if (ok) this.ofBatch.push(...this.ofWrite);
    this.ofWrite = [];
  }

  /**
   * Makes the batch's changes: a row inserted and deleted within the batch
   * never reaches FTS5; deletes of rows from before the batch go first (a
   * deleted note's key can be taken by a new note in the same batch).
   */
  beforeCommit(): void {
    const inserts = new Map<number, string[]>();
    const deletes: number[] = [];
    for (const { pk, columns } of this.ofBatch) {
      if (columns !== null) inserts.set(pk, columns);
      else if (inserts.has(pk)) inserts.delete(pk);
      else deletes.push(pk);
    }
    this.ofBatch = [];
    for (const pk of deletes) this.remove(pk);
    for (const [pk, columns] of inserts) this.insert(pk, columns);
  }

  /** The batch failed: nothing of it is stored. */
  failed(): void {
    this.ofWrite = [];
    this.ofBatch = [];
    this.inWrite = false;
  }
}
