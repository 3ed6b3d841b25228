// What `cairn admin copy` moves (copy.ts): the tables in foreign-key order with
// their keys, a row as both engines must read it (the checksum), and a row in
// PostgreSQL's COPY text format (what the target is fed).
import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { SQL } from "bun";
import { decodeText, encodeText } from "./postgres/schema.ts";

export type Row = Record<string, unknown>;

type ColumnType = "int" | "bigint" | "text" | "boolean" | "bytea" | "text[]";

export interface TableSpec {
  name: string;
  /** The table's key: the order rows are read and compared in, and the keyset pages' cursor. */
  key: string[];
  /** Columns as SQLite names them (the PostgreSQL schema uses the same names). */
  columns: string[];
  /** The PostgreSQL column types. */
  types: ColumnType[];
  /** Identity column whose sequence continues after the copied rows. */
  identity?: string;
}

export const TABLES: TableSpec[] = [
  {
    name: "contributors",
    key: ["contributor_no"],
    columns: ["contributor_no", "email", "key_prefix", "key_digest", "active", "created_at"],
    types: ["int", "text", "text", "bytea", "boolean", "bigint"],
    identity: "contributor_no",
  },
  {
    name: "posts",
    key: ["pk"],
    columns: ["pk", "id", "contributor_no", "title", "body", "tags", "score", "comment_count", "created_at", "supersedes", "superseded_by"],
    types: ["bigint", "text", "int", "text", "text", "text[]", "int", "int", "bigint", "text", "text"],
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

/** Columns the PostgreSQL engine stores with NUL escaped (schema.ts, anyText). */
const ESCAPED = new Set(["email", "title", "body", "recipient"]);

/** A row as both engines must read it: text as sent, numbers as numbers, digests as hex, tags as an array, active as a boolean. */
export function canonical(spec: TableSpec, row: Row, engine: "sqlite" | "postgres"): unknown[] {
  return spec.columns.map((column, i) => {
    const value = row[column];
    if (value === null || value === undefined) return null;
    switch (spec.types[i]) {
      case "bytea":
        return Buffer.from(value as Uint8Array).toString("hex");
      case "boolean":
        return Boolean(value);
      case "text[]":
        return engine === "sqlite" ? JSON.parse(value as string) : value;
      case "int":
      case "bigint":
        return Number(value); // PostgreSQL answers bigint as a string
    }
    return engine === "postgres" && ESCAPED.has(column) ? decodeText(value as string) : value;
  });
}

/** Backslash, tab, newline and carriage return escaped as COPY's text format wants them. */
export function copyText(value: string): string {
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r")) : value;
}

/** An array literal of text elements, every element quoted. */
function arrayLiteral(items: string[]): string {
  return `{${items.map((item) => `"${item.replace(/["\\]/g, (c) => `\\${c}`)}"`).join(",")}}`;
}

/** A SQLite row as one line of `COPY … FROM STDIN` (text format), NUL escaped as the PostgreSQL engine stores it. */
export function copyLine(spec: TableSpec, row: Row): string {
  const fields = spec.columns.map((column, i) => {
    const value = row[column];
    if (value === null || value === undefined) return "\\N";
    switch (spec.types[i]) {
      case "bytea":
        return `\\\\x${Buffer.from(value as Uint8Array).toString("hex")}`;
      case "boolean":
        return value ? "t" : "f";
      case "text[]":
        return copyText(arrayLiteral(JSON.parse(value as string) as string[])); // tags: no NUL (TAG_PATTERN)
      case "int":
      case "bigint":
        return String(value);
    }
    return copyText(ESCAPED.has(column) ? encodeText(String(value)) : String(value));
  });
  return fields.join("\t") + "\n";
}

/**
 * The rows of `table` in key order, `pageRows` at a time: each page is one
 * indexed range read after the previous page's last key (keyset paging), so
 * memory stays bounded by the page whatever the table's size. Run inside the
 * caller's read transaction: every page comes from one snapshot.
 */
export function* keysetPages(sqlite: Database, table: string, key: string[], columns: string[], pageRows: number): Generator<Row[]> {
  const select = `SELECT ${columns.join(", ")} FROM ${table}`;
  const order = `ORDER BY ${key.join(", ")} LIMIT ${pageRows}`;
  const first = sqlite.query(`${select} ${order}`);
  const next = sqlite.query(`${select} WHERE (${key.join(", ")}) > (${key.map(() => "?").join(", ")}) ${order}`);
  let page = first.all() as Row[];
  while (page.length > 0) {
    yield page;
    if (page.length < pageRows) return;
    const last = page[page.length - 1];
    page = next.all(...(key.map((column) => last[column]) as SQLQueryBindings[])) as Row[];
  }
}

/**
 * Streams `chunks` (lines of COPY's text format) into `table` with one
 * `COPY … FROM STDIN (FREEZE)` on the caller's transaction, which must have
 * emptied the table with TRUNCATE (FREEZE's condition); each write waits
 * while the server is behind (backpressure). Answers the rows stored.
 */
export async function copyInto(tx: SQL, table: string, columns: string[], chunks: Iterable<string>): Promise<number> {
  const query = tx.unsafe(`COPY ${table} (${columns.join(", ")}) FROM STDIN (FREEZE)`);
  const writer = query.writable().getWriter();
  try {
    for (const chunk of chunks) if (chunk.length > 0) await writer.write(chunk);
    await writer.close();
  } catch (error) {
    await writer.abort(error).catch(() => {});
    throw error;
  }
  return Number((await query).count ?? 0);
}
