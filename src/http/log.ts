// JSON-lines logger on stdout. Callers never pass keys, Authorization headers
// or e-mail addresses; fields are chosen at each call site for that reason.
// Request lines are buffered and flushed every 100 ms (or at 64 KiB) so a
// busy server does not make one write per request; other lines flush the
// buffer first, so order is kept.
export type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level | "silent", number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
const FLUSH_MS = 100;
const FLUSH_BYTES = 64 * 1024;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** Start-up and shutdown milestones: written at every level but silent. */
  notice(msg: string, fields?: Record<string, unknown>): void;
  /** Whether request lines are written (info level or lower). */
  readonly logsRequests: boolean;
  /** One line per HTTP request (info level), buffered. */
  request(fields: RequestLine): void;
  flush(): void;
}

/** A request line's fields, in the order they are written. */
export interface RequestLine {
  requestId: string;
  method: string;
  route: string;
  status: number;
  ms: number;
}

const PLAIN = /^[\w./:() -]*$/;
/** A JSON string; request ids, methods and route patterns are plain, so they skip the escaper. */
const quoted = (text: string) => (PLAIN.test(text) ? `"${text}"` : JSON.stringify(text));

/**
 * Writes to stdout until it fails. A closed pipe (`cairn serve | tee …` whose
 * reader went away, a log relay restarting) must not take the server down:
 * the write's EPIPE is caught, and lines are dropped from then on (they have
 * nowhere to go; docs/operations.md, "Logs").
 */
function stdoutWriter(): (text: string) => void {
  let closed = false;
  process.stdout.on("error", () => {
    closed = true;
  });
  return (text) => {
    if (closed) return;
    try {
      process.stdout.write(text);
    } catch {
      closed = true;
    }
  };
}

export function createLogger(level: Level | "silent", write: (text: string) => void = stdoutWriter()): Logger {
  let buffer = "";
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (buffer) {
      const text = buffer;
      buffer = "";
      write(text);
    }
  };
  // Under load many lines share a millisecond: the timestamp is formatted once per millisecond.
  let stampedAt = NaN;
  let stamp = "";
  const now = () => {
    const ms = Date.now();
    if (ms !== stampedAt) {
      stampedAt = ms;
      stamp = new Date(ms).toISOString();
    }
    return stamp;
  };
  const line = (at: Level, msg: string, fields: Record<string, unknown>) =>
    JSON.stringify({ time: now(), level: at, msg, ...fields }) + "\n";
  const logsRequests = ORDER.info >= ORDER[level];
  const emit = (at: Level) => (msg: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[at] < ORDER[level]) return;
    buffer += line(at, msg, fields);
    flush();
  };
  return {
    debug: emit("debug"),
    info: emit("info"),
    warn: emit("warn"),
    error: emit("error"),
    notice(msg, fields = {}) {
      if (level === "silent") return;
      buffer += line("info", msg, fields);
      flush();
    },
    logsRequests,
    // Written field by field: with the generic line (an object spread, then
    // JSON.stringify, toISOString per line) a keyed GET cost 32% more CPU at
    // info than at warn; now 13% (docs/benchmarks.md).
    request({ requestId, method, route, status, ms }) {
      if (!logsRequests) return;
      buffer += `{"time":"${now()}","level":"info","msg":"request","requestId":${quoted(requestId)},"method":${quoted(method)},"route":${quoted(route)},"status":${status},"ms":${Number.isFinite(ms) ? ms : null}}\n`;
      if (buffer.length >= FLUSH_BYTES) flush();
      else timer ??= setTimeout(flush, FLUSH_MS);
    },
    flush,
  };
}
