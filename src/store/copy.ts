// `cairn admin copy --to postgres://…`: moves a whole SQLite instance (DATA_DIR)
// into an empty PostgreSQL database. Contributors keep their numbers and key
// digests (so every key keeps working), notes their ids and pks, and comments,
// votes, web event counters and the e-mail outbox come along; each note's term
// vector is written as the engine writes it per note (src/store/postgres/search.ts),
// and replicas build their in-memory postings from those. The source is read in one read transaction
// (a consistent snapshot; writes after it are not copied, so stop the server
// or keep it read-only), the target is written in one transaction, and then
// every table's rows are counted and checksummed on both sides.
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { decodeText, encodeText } from "./postgres/schema.ts";
import { noteVector } from "./postgres/search.ts";
import { PostgresStore } from "./postgres/store.ts";
import { SqliteStore } from "./sqlite/store.ts";

export class CopyRefused extends Error {}

export interface CopyReport {
  /** Per table: rows copied and the SHA-256 of its rows, the same on both sides. */
  tables: Record<string, { rows: number; sha256: string }>;
  searchIndexed: number;
  ms: number;
}

const BATCH = 2_000;

/** The tables copied, in foreign-key order, with their key and how a row reads the same on both engines. */
interface TableSpec {
  name: string;
  key: string[];
  /** Columns as SQLite names them (the PostgreSQL schema uses the same names). */
  columns: string[];
  /** jsonb_to_recordset column types on PostgreSQL. */
  types: string[];
  /** Identity column whose sequence continues after the copied rows. */
  identity?: string;
}

const TABLES: TableSpec[] = [
  {
    name: "contributors",
    key: ["contributor_no"],
    columns: ["contributor_no", "email", "key_prefix", "key_digest", "active", "created_at"],
    types: ["int", "text", "text", "text", "boolean", "bigint"],
    identity: "contributor_no",
  },
  {
    name: "posts",
    key: ["pk"],
    columns: ["pk", "id", "contributor_no", "title", "body", "tags", "score", "comment_count", "created_at", "supersedes", "superseded_by"],
    types: ["bigint", "text", "int", "text", "text", "jsonb", "int", "int", "bigint", "text", "text"],
    identity: "pk",
  },
  {
    name: "comments",
    key: ["pk"],
    columns: ["pk", "post_pk", "contributor_no", "body", "created_at"],
    types: ["bigint", "bigint", "int", "text", "bigint"],
    identity: "pk",
  },
  {
    name: "votes",
    key: ["post_pk", "contributor_no"],
    columns: ["post_pk", "contributor_no", "value", "created_at"],
    types: ["bigint", "int", "int", "bigint"],
  },
  {
    name: "web_event_counts",
    key: ["day", "event", "post_id"],
    columns: ["day", "event", "post_id", "count"],
    types: ["text", "text", "text", "bigint"],
  },
  {
    name: "email_outbox",
    key: ["id"],
    columns: ["id", "contributor_no", "recipient", "kind", "created_at", "attempts", "next_attempt_at", "leased_until", "last_error", "sent_at", "gave_up_at"],
    types: ["bigint", "int", "text", "text", "bigint", "int", "bigint", "bigint", "text", "bigint", "bigint"],
    identity: "id",
  },
  // Issue 19: a retry just after the move still finds its first answer.
  {
    name: "idempotency_keys",
    key: ["contributor_no", "key"],
    columns: ["contributor_no", "key", "fingerprint", "token", "status", "response", "note_id", "created_at", "expires_at", "leased_until"],
    types: ["int", "text", "text", "text", "int", "text", "text", "bigint", "bigint", "bigint"],
  },
];

const SEARCH_TABLES = ["search_vectors", "search_log", "search_log_trim", "note_tags"];
const CAIRN_TABLES = new Set([...TABLES.map((t) => t.name), ...SEARCH_TABLES, "__drizzle_migrations"]);

type Row = Record<string, unknown>;

/** Columns the PostgreSQL engine stores with NUL escaped (schema.ts, anyText). */
const ESCAPED = new Set(["email", "title", "body", "recipient"]);

/** A row as both engines must read it: text as sent, numbers as numbers, digests as hex, tags as an array, active as a boolean. */
function canonical(table: string, row: Row, engine: "sqlite" | "postgres"): unknown[] {
  const spec = TABLES.find((t) => t.name === table)!;
  return spec.columns.map((column, i) => {
    const value = row[column];
    if (value === null || value === undefined) return null;
    if (column === "key_digest") return Buffer.from(value as Uint8Array).toString("hex");
    if (column === "active") return Boolean(value);
    if (column === "tags") return engine === "sqlite" ? JSON.parse(value as string) : value;
    if (spec.types[i] === "int" || spec.types[i] === "bigint") return Number(value); // PostgreSQL answers bigint as a string
    return engine === "postgres" && ESCAPED.has(column) ? decodeText(value as string) : value;
  });
}

/** A row as the target stores it, for jsonb_to_recordset (NUL escaped as the PostgreSQL engine stores it). */
function forTarget(table: string, row: Row): Row {
  const out: Row = {};
  for (const column of TABLES.find((t) => t.name === table)!.columns) {
    const value = row[column];
    if (column === "key_digest") out[column] = Buffer.from(value as Uint8Array).toString("hex");
    else if (column === "active") out[column] = Boolean(value);
    else if (column === "tags") out[column] = JSON.parse(value as string);
    else if (typeof value === "string" && ESCAPED.has(column)) out[column] = encodeText(value);
    else out[column] = value;
  }
  return out;
}

function insertStatement(spec: TableSpec): string {
  const select = spec.columns.map((column) => {
    if (column === "key_digest") return "decode(x.key_digest, 'hex')";
    if (column === "tags") return "ARRAY(SELECT jsonb_array_elements_text(x.tags))";
    return `x.${column}`;
  });
  const overriding = spec.identity ? " OVERRIDING SYSTEM VALUE" : "";
  return `INSERT INTO ${spec.name} (${spec.columns.join(", ")})${overriding}
          SELECT ${select.join(", ")} FROM jsonb_to_recordset($1::text::jsonb) AS x(${spec.columns.map((c, i) => `${c} ${spec.types[i]}`).join(", ")})`;
}

/**
 * Copies the SQLite instance in `dataDir` into the empty PostgreSQL database
 * at `url`. Throws CopyRefused when the target is not empty. When anything
 * fails before COMMIT no row is written (Cairn's empty tables may have been
 * created by the migrations, which a retry accepts).
 */
export async function copySqliteToPostgres(dataDir: string, url: string): Promise<CopyReport> {
  const started = performance.now();
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

    const hashes: Record<string, { hasher: Bun.CryptoHasher; rows: number }> = {};
    let indexed = 0;
    sqlite.exec("BEGIN"); // one snapshot of the source for the whole copy
    const sequences = new Map(
      (sqlite.query("SELECT name, seq FROM sqlite_sequence").all() as { name: string; seq: number }[]).map((row) => [row.name, row.seq]),
    );
    await pg.begin(async (tx) => {
      await tx.unsafe(`LOCK TABLE ${[...TABLES.map((t) => t.name), ...SEARCH_TABLES].join(", ")} IN EXCLUSIVE MODE`);
      for (const spec of TABLES) {
        const [{ n }] = (await tx.unsafe(`SELECT count(*)::int AS n FROM ${spec.name}`)) as { n: number }[];
        if (n > 0) throw new CopyRefused(`the target database already holds Cairn data (${n} rows in ${spec.name}); copy into a new, empty database`);
      }
      for (const spec of TABLES) {
        const hash = (hashes[spec.name] = { hasher: new Bun.CryptoHasher("sha256"), rows: 0 });
        const insert = insertStatement(spec);
        const rows = sqlite.query(`SELECT ${spec.columns.join(", ")} FROM ${spec.name} ORDER BY ${spec.key.join(", ")}`).iterate() as IterableIterator<Row>;
        let batch: Row[] = [];
        const flush = async () => {
          if (batch.length === 0) return;
          await tx.unsafe(insert, [JSON.stringify(batch.map((row) => forTarget(spec.name, row)))]);
          if (spec.name === "posts") indexed += await indexBatch(tx, batch);
          batch = [];
        };
        for (const row of rows) {
          hash.hasher.update(JSON.stringify(canonical(spec.name, row, "sqlite")) + "\n");
          hash.rows++;
          batch.push(row);
          if (batch.length === BATCH) await flush();
        }
        await flush();
        if (spec.identity) {
          // The next number continues after the highest ever handed out (sqlite_sequence remembers deleted ones).
          const [{ max }] = (await tx.unsafe(`SELECT coalesce(max(${spec.identity}), 0)::bigint AS max FROM ${spec.name}`)) as { max: string }[];
          const next = Math.max(Number(max), sequences.get(spec.name) ?? 0);
          await tx.unsafe(`SELECT setval(pg_get_serial_sequence('${spec.name}', '${spec.identity}'), $1::bigint, $2::boolean)`, [Math.max(next, 1), next > 0]);
        }
      }
      // The copied notes are not in the search log: a replica already running on this database builds its postings again.
      await tx.unsafe("UPDATE search_log_trim SET upto = pg_current_xact_id()");
      // The tags of the searchable notes (superseded ones are kept out, as the engine keeps them).
      await tx.unsafe(
        "INSERT INTO note_tags (tag, post_pk, score, created_at) SELECT DISTINCT t.tag, p.pk, p.score, p.created_at FROM posts p, unnest(p.tags) AS t(tag) WHERE p.superseded_by IS NULL",
      );
    });
    sqlite.exec("COMMIT");
    // Fresh statistics and visibility map: without them the planner guesses on
    // the new tables, and the postings are read from the heap instead of
    // index-only (search several times slower until autovacuum comes by).
    await pg.unsafe("VACUUM (ANALYZE)");

    // Verify: the target's rows, read back, count and hash as the source's did.
    const report: CopyReport = { tables: {}, searchIndexed: indexed, ms: 0 };
    for (const spec of TABLES) {
      const hasher = new Bun.CryptoHasher("sha256");
      let rows = 0;
      let after: unknown[] | null = null;
      for (;;) {
        const keyOrder = spec.key.join(", ");
        const where = after ? `WHERE (${keyOrder}) > (${spec.key.map((_, i) => `$${i + 1}`).join(", ")})` : "";
        const page = (await pg.unsafe(
          `SELECT ${spec.columns.join(", ")} FROM ${spec.name} ${where} ORDER BY ${keyOrder} LIMIT ${BATCH}`,
          after ?? [],
        )) as Row[];
        for (const row of page) hasher.update(JSON.stringify(canonical(spec.name, row, "postgres")) + "\n");
        rows += page.length;
        if (page.length < BATCH) break;
        const last = page[page.length - 1];
        after = spec.key.map((column) => last[column]);
      }
      const sha256 = hasher.digest("hex");
      const expected = hashes[spec.name];
      const expectedSha = expected.hasher.digest("hex");
      if (rows !== expected.rows || sha256 !== expectedSha) {
        throw new Error(
          `verification failed for ${spec.name}: ${expected.rows} rows (${expectedSha}) in SQLite, ${rows} (${sha256}) in PostgreSQL; ` +
            "the target holds a copy that does not match: drop that database and copy again with the server stopped",
        );
      }
      report.tables[spec.name] = { rows, sha256 };
    }
    report.ms = Math.round(performance.now() - started);
    return report;
  } finally {
    if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
    sqlite.close();
    await pg.close();
    await target.close();
  }
}

/** Writes the term vectors of a batch of copied notes (as the engine does per note); superseded notes stay out of the search index (docs/design.md, "Superseding"). */
async function indexBatch(tx: SQL, batch: Row[]): Promise<number> {
  const vectors = batch
    .filter((row) => row.superseded_by === null || row.superseded_by === undefined)
    .map((row) => [Number(row.pk), noteVector(row.title as string, JSON.parse(row.tags as string) as string[], row.body as string)]);
  if (vectors.length === 0) return 0;
  await tx.unsafe("INSERT INTO search_vectors (pk, vector) SELECT (e ->> 0)::bigint, e ->> 1 FROM jsonb_array_elements($1::text::jsonb) e", [JSON.stringify(vectors)]);
  return vectors.length;
}
