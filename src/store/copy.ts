// `cairn admin copy --to postgres://…`: moves a whole SQLite instance (DATA_DIR)
// into an empty PostgreSQL database. Contributors keep their numbers and key
// digests (so every key keeps working, and revoked keys stay revoked), notes
// their ids and pks, and comments, votes, web event counters and the e-mail
// outbox come along. The source is read in one read transaction (a consistent
// snapshot; writes after it are not copied, so stop the server or keep it
// read-only), table by table in keyset pages (memory bounded by a page), and
// each table is streamed into the target with one `COPY … FROM STDIN`, all in
// one transaction: a failure leaves no row behind (foreign keys are checked
// once per table at the end, still inside it). Then every table's rows are
// counted and checksummed on both sides. Progress goes to `onProgress`.
// Figures: docs/benchmarks.md, "Moving to PostgreSQL".
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { writeSearchTables } from "./copy-search-tables.ts";
import { canonical, copyInto, copyLine, keysetPages, TABLES, type Row, type TableSpec } from "./copy-tables.ts";
import { getTableName, is } from "drizzle-orm";
import { PgTable } from "drizzle-orm/pg-core";
import * as schema from "./postgres/schema.ts";
import { PostgresStore } from "./postgres/store.ts";
import { SqliteStore } from "./sqlite/store.ts";

export class CopyRefused extends Error {}

export interface CopyReport {
  /** Per table: rows copied and the SHA-256 of its rows, the same on both sides. */
  tables: Record<string, { rows: number; sha256: string }>;
  searchIndexed: number;
  ms: number;
  /** Another connection (a server still running) committed to the source while it was copied: those writes are not in the target. */
  sourceChanged: boolean;
}

/** Where a copy stands: `step` is a table, "note tags", "search index", "foreign keys", "analyze" or "verify". */
export interface CopyProgress {
  step: string;
  /** Rows done in this step, and how many it has. */
  rows: number;
  of: number;
  /** Rows done over the whole copy (each table written, indexed, read back), and how many in all. */
  done: number;
  total: number;
  /** Since the copy began, and since this step began. */
  elapsedMs: number;
  stepMs: number;
  /** The step's last report. */
  finished: boolean;
}

export interface CopyOptions {
  /** Rows per keyset page (read) and per COPY write. */
  pageRows?: number;
  /** Build the engine's search tables (copy-search-tables.ts); only benchmarks turn it off. */
  searchTables?: boolean;
  onProgress?: (progress: CopyProgress) => void;
}

export const DEFAULT_PAGE_ROWS = 5_000;

/** Every table of the PostgreSQL engine (schema.ts): what the migrations create in the target. */
const ENGINE_TABLES = Object.values(schema)
  .filter((value) => is(value, PgTable))
  .map((table) => getTableName(table as PgTable));
const CAIRN_TABLES = new Set([...ENGINE_TABLES, "__drizzle_migrations"]);

/**
 * Copies the SQLite instance in `dataDir` into the empty PostgreSQL database
 * at `url`. Throws CopyRefused when the target is not empty. When anything
 * fails before COMMIT no row is written (Cairn's empty tables may have been
 * created by the migrations, which a retry accepts).
 */
export async function copySqliteToPostgres(dataDir: string, url: string, options: CopyOptions = {}): Promise<CopyReport> {
  const started = performance.now();
  const pageRows = options.pageRows ?? DEFAULT_PAGE_ROWS;
  const searchTables = options.searchTables ?? true;
  // Opened through the engine first: it brings an older file's schema up to date.
  const source = new SqliteStore({ dataDir });
  await source.migrate();
  await source.close();
  const sqlite = new Database(`${dataDir}/cairn.db`, { readonly: true });
  const target = new PostgresStore({ url, poolSize: 2 });
  const pg = new SQL(url, { max: 1 });
  try {
    const foreign = (await pg.unsafe("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")) as { table_name: string }[];
    const others = foreign.map((t) => t.table_name).filter((name) => !CAIRN_TABLES.has(name));
    if (others.length > 0) throw new CopyRefused(`the target database is not empty (it holds ${others.slice(0, 5).join(", ")}); copy into a new, empty database`);
    await target.migrate();

    sqlite.exec("BEGIN"); // one snapshot of the source for the whole copy
    const sizes = new Map(TABLES.map((spec) => [spec.name, (sqlite.query(`SELECT count(*) AS n FROM ${spec.name}`).get() as { n: number }).n]));
    // Changes when another connection commits (PRAGMA data_version): read again at the end.
    const dataVersion = () => (sqlite.query("PRAGMA data_version").get() as { data_version: number }).data_version;
    const versionAtSnapshot = dataVersion();
    const tableRows = [...sizes.values()].reduce((sum, n) => sum + n, 0);
    const progress = new Progress(started, 2 * tableRows + (searchTables ? sizes.get("posts")! : 0), options.onProgress);
    const sequences = new Map(
      (sqlite.query("SELECT name, seq FROM sqlite_sequence").all() as { name: string; seq: number }[]).map((row) => [row.name, row.seq]),
    );
    const hashes = new Map<string, { sha256: string; rows: number }>();
    let indexed = 0;
    await pg.begin(async (tx) => {
      await tx.unsafe(`LOCK TABLE ${ENGINE_TABLES.join(", ")} IN EXCLUSIVE MODE`);
      for (const table of ENGINE_TABLES) {
        if (table === "search_log_trim") continue; // one row from its migration, data or not
        const [{ n }] = (await tx.unsafe(`SELECT count(*)::int AS n FROM ${table}`)) as { n: number }[];
        if (n > 0) throw new CopyRefused(`the target database already holds Cairn data (${n} rows in ${table}); copy into a new, empty database`);
      }
      // Emptied in this transaction, the tables take COPY … FREEZE: rows written
      // frozen and pages marked all-visible, so no VACUUM has to visit them after.
      await tx.unsafe(`TRUNCATE ${ENGINE_TABLES.join(", ")}`);
      // The copied notes are not in the search log: a replica already running on this database builds its postings again.
      await tx.unsafe("INSERT INTO search_log_trim (upto) VALUES (pg_current_xact_id())");
      const foreignKeys = await dropForeignKeys(tx);
      for (const spec of TABLES) {
        hashes.set(spec.name, await copyTable(tx, sqlite, spec, pageRows, progress.step(spec.name, sizes.get(spec.name)!)));
        if (spec.identity) await continueIdentity(tx, spec, sequences.get(spec.name) ?? 0);
      }
      // The tags of the searchable notes (superseded ones are kept out, as the engine keeps them).
      // Its own step, so its time is not reported as the last table's.
      progress.step("note tags", 0)(0);
      await tx.unsafe(
        "INSERT INTO note_tags (tag, post_pk, score, created_at) SELECT DISTINCT t.tag, p.pk, p.score, p.created_at FROM posts p, unnest(p.tags) AS t(tag) WHERE p.superseded_by IS NULL",
      );
      if (searchTables) indexed = await writeSearchTables(tx, sqlite, pageRows, progress.step("search index", sizes.get("posts")!));
      progress.step("foreign keys", 0)(0);
      await addForeignKeys(tx, foreignKeys);
    });
    sqlite.exec("COMMIT");
    // Fresh statistics: without them the planner guesses on the new tables.
    progress.step("analyze", 0)(0);
    await pg.unsafe("ANALYZE");

    // Verify: the target's rows, read back, count and hash as the source's did.
    const report: CopyReport = { tables: {}, searchIndexed: indexed, ms: 0, sourceChanged: false };
    const verified = progress.step("verify", tableRows);
    for (const spec of TABLES) {
      const { rows, sha256 } = await hashTarget(pg, spec, pageRows, verified);
      const expected = hashes.get(spec.name)!;
      if (rows !== expected.rows || sha256 !== expected.sha256) {
        throw new Error(
          `verification failed for ${spec.name}: ${expected.rows} rows (${expected.sha256}) in SQLite, ${rows} (${sha256}) in PostgreSQL; ` +
            "the target holds a copy that does not match: drop that database and copy again with the server stopped",
        );
      }
      report.tables[spec.name] = { rows, sha256 };
    }
    progress.end();
    report.sourceChanged = dataVersion() !== versionAtSnapshot;
    report.ms = Math.round(performance.now() - started);
    return report;
  } finally {
    if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
    sqlite.close();
    await pg.close();
    await target.close();
  }
}

/** One table: the source's keyset pages, hashed as read, streamed into one COPY. */
async function copyTable(tx: SQL, sqlite: Database, spec: TableSpec, pageRows: number, onPage: (rows: number) => void) {
  const hasher = new Bun.CryptoHasher("sha256");
  let rows = 0;
  function* chunks(): Generator<string> {
    for (const page of keysetPages(sqlite, spec.name, spec.key, spec.columns, pageRows)) {
      let text = "";
      for (const row of page) {
        hasher.update(JSON.stringify(canonical(spec, row, "sqlite")) + "\n");
        text += copyLine(spec, row);
      }
      rows += page.length;
      onPage(page.length);
      yield text;
    }
  }
  const stored = await copyInto(tx, spec.name, spec.columns, chunks());
  if (stored !== rows) throw new Error(`${spec.name}: ${rows} rows read, ${stored} stored`);
  return { rows, sha256: hasher.digest("hex") };
}

interface ForeignKey {
  table: string;
  name: string;
  definition: string;
}

/**
 * Drops the engine's foreign keys for the load: checked row by row they cost a
 * lookup per copied row; added back afterwards (addForeignKeys), each is
 * checked once over the whole table, in the same transaction, so nothing that
 * breaks one can commit.
 */
async function dropForeignKeys(tx: SQL): Promise<ForeignKey[]> {
  const keys = (await tx.unsafe(`
    SELECT c.conrelid::regclass::text AS table, c.conname AS name, pg_get_constraintdef(c.oid) AS definition
      FROM pg_constraint c
     WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace
     ORDER BY c.conname`)) as ForeignKey[];
  for (const key of keys) await tx.unsafe(`ALTER TABLE ${key.table} DROP CONSTRAINT "${key.name}"`);
  return keys;
}

async function addForeignKeys(tx: SQL, keys: ForeignKey[]): Promise<void> {
  for (const key of keys) await tx.unsafe(`ALTER TABLE ${key.table} ADD CONSTRAINT "${key.name}" ${key.definition}`);
}

/** The next number continues after the highest ever handed out (sqlite_sequence remembers deleted ones). */
async function continueIdentity(tx: SQL, spec: TableSpec, sequence: number): Promise<void> {
  const column = spec.identity!;
  const [{ max }] = (await tx.unsafe(`SELECT coalesce(max(${column}), 0)::bigint AS max FROM ${spec.name}`)) as { max: string }[];
  const next = Math.max(Number(max), sequence);
  await tx.unsafe(`SELECT setval(pg_get_serial_sequence('${spec.name}', '${column}'), $1::bigint, $2::boolean)`, [Math.max(next, 1), next > 0]);
}

/** The target's rows of one table in key order (keyset pages), counted and hashed as canonical() reads them. */
async function hashTarget(pg: SQL, spec: TableSpec, pageRows: number, onPage: (rows: number) => void) {
  const hasher = new Bun.CryptoHasher("sha256");
  // Text keys in code point order, as SQLite orders them, whatever the database's collation.
  const keyOrder = spec.key.map((column) => (spec.types[spec.columns.indexOf(column)] === "text" ? `${column} COLLATE "C"` : column)).join(", ");
  let rows = 0;
  let after: unknown[] | null = null;
  for (;;) {
    const where = after ? `WHERE (${keyOrder}) > (${spec.key.map((_, i) => `$${i + 1}`).join(", ")})` : "";
    const page = (await pg.unsafe(`SELECT ${spec.columns.join(", ")} FROM ${spec.name} ${where} ORDER BY ${keyOrder} LIMIT ${pageRows}`, after ?? [])) as Row[];
    for (const row of page) hasher.update(JSON.stringify(canonical(spec, row, "postgres")) + "\n");
    rows += page.length;
    onPage(page.length);
    if (page.length < pageRows) break;
    const last = page[page.length - 1];
    after = spec.key.map((column) => last[column]);
  }
  return { rows, sha256: hasher.digest("hex") };
}

/** Counts rows per step and over the whole copy, and tells `report` after each page and when a step ends. */
class Progress {
  private done = 0;
  private current: { step: string; rows: number; of: number; started: number } | null = null;
  constructor(
    private readonly started: number,
    private readonly total: number,
    private readonly report?: (progress: CopyProgress) => void,
  ) {}

  /** Starts a step (ending the previous one); answers the per-page counter. */
  step(step: string, of: number): (rows: number) => void {
    this.end();
    this.current = { step, rows: 0, of, started: performance.now() };
    return (rows) => {
      this.current!.rows += rows;
      this.done += rows;
      this.emit(false);
    };
  }

  /** Ends the current step. */
  end(): void {
    if (this.current) this.emit(true);
    this.current = null;
  }

  private emit(finished: boolean): void {
    const { step, rows, of, started } = this.current!;
    const now = performance.now();
    this.report?.({ step, rows, of, done: this.done, total: this.total, elapsedMs: now - this.started, stepMs: now - started, finished });
  }
}
