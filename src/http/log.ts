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
  /** One line per HTTP request (info level), buffered. */
  request(fields: Record<string, unknown>): void;
  flush(): void;
}

export function createLogger(level: Level | "silent", write: (text: string) => void = (text) => process.stdout.write(text)): Logger {
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
  const line = (at: Level, msg: string, fields: Record<string, unknown>) =>
    JSON.stringify({ time: new Date().toISOString(), level: at, msg, ...fields }) + "\n";
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
    request(fields) {
      if (ORDER.info < ORDER[level]) return;
      buffer += line("info", "request", fields);
      if (buffer.length >= FLUSH_BYTES) flush();
      else timer ??= setTimeout(flush, FLUSH_MS);
    },
    flush,
  };
}
