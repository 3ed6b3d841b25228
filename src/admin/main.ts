// `cairn admin …`: operator verbs that work on the data directory directly,
// also while the server runs (SQLite WAL; BEGIN IMMEDIATE orders the writers).
// The server checks the active flag on every request, so a revoke takes effect
// on the next request without any signal to the server.
import { Database } from "bun:sqlite";
import { chmodSync, closeSync, copyFileSync, existsSync, fsyncSync, linkSync, lstatSync, mkdirSync, openSync, rmSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ConfigError, loadConfig } from "../config.ts";
import { AppError } from "../core/errors.ts";
import { Cairn } from "../core/service.ts";
import { copySqliteToPostgres, CopyRefused, DatabaseFromNewerRelease, openStore, type CopyProgress, SIGNAL_CHECK_MS, sqliteDatabasePath as databasePath, StoreNotFound, UnsuitableDatabase } from "../store/index.ts";
import type { Store } from "../store/types.ts";

const HELP = `cairn admin — operator verbs on the data directory (DATA_DIR, default ./data)

  cairn admin provision --email E   create a contributor and print its new key once (JSON)
  cairn admin revoke N              refuse contributor N's key from the next request on
  cairn admin activate N            allow contributor N's key again
  cairn admin contributors [--email E]
                                    list contributors (number, e-mail, active, created_at, post_count);
                                    with --email only that address (ASCII letters in any case)
  cairn admin stats                 counts of contributors, notes, comments, votes, queued e-mail and web events
  cairn admin backup FILE           online, consistent copy of the database into FILE (new file)
  cairn admin restore FILE          put a backup in place as DATA_DIR/cairn.db (DATA_DIR must hold no
                                    database yet: restore into a new directory, then point the server at it)
  cairn admin copy --to postgres://… [--batch ROWS]
                                    copy the SQLite instance in DATA_DIR into an empty PostgreSQL database
                                    (contributors and their keys, notes, comments, votes, counters, outbox),
                                    then verify rows and a SHA-256 per table; stop the server first
                                    (docs/operations.md, "Moving to PostgreSQL"); progress on stderr;
                                    --batch: rows read and sent at a time (default 5000)

With DATABASE_URL (or --database-url) set, the verbs work on that PostgreSQL database;
backup and restore are then pg_dump's and pg_restore's (docs/deploy.md).

Flags: --data-dir D (overrides DATA_DIR), --database-url URL (overrides DATABASE_URL). These verbs work while the server runs.
Exit codes: 0 done, 1 failed (e.g. no such contributor), 2 usage error.
`;

class UsageError extends Error {}

function parse(args: string[]) {
  const positional: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--help" || arg === "-h") flags.help = "1";
    else if (arg.startsWith("--")) {
      const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
      const value = inline ?? args[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      flags[name] = value;
    } else positional.push(arg);
  }
  return { positional, flags };
}

function contributorNumber(raw: string | undefined): number {
  if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < 1) throw new UsageError("give the contributor number, e.g. `cairn admin revoke 12`");
  return Number(raw);
}

const print = (value: unknown) => process.stdout.write(JSON.stringify(value, null, 2) + "\n");

export async function runAdmin(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parse(args);
  } catch (error) {
    console.error(`cairn admin: ${(error as Error).message}`);
    return 2;
  }
  const { positional, flags } = parsed;
  const [verb, ...rest] = positional;
  if (flags.help || verb === undefined || verb === "help") {
    (verb === undefined && !flags.help ? process.stderr : process.stdout).write(HELP);
    return verb === undefined && !flags.help ? 2 : 0;
  }
  let config;
  try {
    config = loadConfig({
      ...process.env,
      ...(flags["data-dir"] ? { DATA_DIR: flags["data-dir"] } : {}),
      ...(flags["database-url"] ? { DATABASE_URL: flags["database-url"] } : {}),
    });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`cairn admin: ${error.message}`);
      return 2;
    }
    throw error;
  }
  const known = ["provision", "revoke", "activate", "contributors", "stats", "backup", "restore", "copy"];
  if (!known.includes(verb)) {
    console.error(`cairn admin: unknown verb "${verb}"\n\n${HELP}`);
    return 2;
  }
  if ((verb === "restore" || verb === "backup") && config.databaseUrl !== null) {
    console.error(`cairn admin: on PostgreSQL, ${verb === "backup" ? "back up with pg_dump" : "restore with pg_restore"} (see docs/deploy.md)`);
    return 2;
  }
  if (verb === "restore") return restore(rest[0], config.dataDir);
  if (verb === "copy") return copy(flags.to, config.dataDir, flags.batch);
  let store: Store;
  try {
    // An admin verb never searches: no in-memory postings to build (their cost: docs/benchmarks.md, "Search latency").
    store = openStore({ ...config, searchMemoryBytes: 0 }, { mustExist: verb !== "provision" });
  } catch (error) {
    if (error instanceof StoreNotFound) {
      console.error(`cairn admin: ${error.message}`);
      return 1;
    }
    console.error(
      `cairn admin: cannot open the database in ${config.dataDir} (${(error as Error).message}); ` +
        "check --data-dir or DATA_DIR and that this user may write there",
    );
    return 1;
  }
  try {
    await store.migrate();
    switch (verb) {
      case "provision": {
        if (!flags.email) throw new UsageError("give the address: `cairn admin provision --email someone@example.org`");
        const cairn = new Cairn(store, config);
        print(await cairn.provision(flags.email));
        return 0;
      }
      case "revoke":
      case "activate": {
        const number = contributorNumber(rest[0]);
        const active = verb === "activate";
        if (!(await store.setActive(number, active))) {
          console.error(`cairn admin: no contributor ${number}`);
          return 1;
        }
        await waitIfSignalFileChanged(store);
        print({ contributor_no: number, active });
        warnIfUnsignalled(store);
        return 0;
      }
      case "backup": {
        const file = rest[0];
        if (!file) throw new UsageError("give the backup file: `cairn admin backup /var/backups/cairn-2026-11-22.db`");
        if (lexists(file)) throw new UsageError(`${file} exists already (a file or a link); backups never overwrite a file`);
        const dir = dirname(resolve(file));
        if (!existsSync(dir) || !statSync(dir).isDirectory()) {
          console.error(`cairn admin: the directory ${dir} does not exist; create it first (mkdir -p ${dir}) or give a path inside an existing directory`);
          return 1;
        }
        const started = performance.now();
        // Written as FILE.partial, synced, then given its name: a backup that is
        // killed (Ctrl-C, OOM, a reboot) leaves no file under the backup's name
        // that a listing, a "newest backup" check or a restore could take for one.
        const partial = `${resolve(file)}.partial`;
        try {
          // VACUUM INTO takes an empty file.
          createPrivateFile(partial);
        } catch (error) {
          const left = (error as NodeJS.ErrnoException).code === "EEXIST";
          console.error(
            left
              ? `cairn admin: ${partial} exists: a backup into ${resolve(file)} was interrupted, or one is running now; remove it when none runs, then back up again`
              : `cairn admin: cannot create ${partial} (${(error as Error).message}); check that this user may write in ${dir}`,
          );
          return 1;
        }
        try {
          await store.backup(partial);
          publishSynced(partial, file); // VACUUM INTO does not sync the file it writes
        } catch (error) {
          rmSync(partial, { force: true });
          rmSync(`${partial}-journal`, { force: true }); // VACUUM INTO's own, when it failed mid-way
          console.error(
            `cairn admin: the backup into ${resolve(file)} failed (${(error as Error).message}); check that this user may write in ${dir} and that the disk has room`,
          );
          return 1;
        }
        chmodSync(file, 0o600); // it holds e-mail addresses and key digests
        print({ backup: resolve(file), bytes: statSync(file).size, ms: Math.round(performance.now() - started) });
        return 0;
      }
      case "contributors": {
        if (rest.length > 0) throw new UsageError("contributors takes no argument; filter with --email E");
        print(
          (await store.contributorList(flags.email)).map((c) => ({
            contributor_no: c.contributorNo,
            email: c.email,
            active: c.active,
            created_at: new Date(c.createdAt).toISOString(),
            post_count: c.postCount,
          })),
        );
        return 0;
      }
      case "stats": {
        // Keys in snake_case, like every JSON the API answers.
        const counts = await store.counts();
        const outbox = await store.outboxCounts();
        print({
          engine: store.engine,
          contributors: counts.contributors,
          active_contributors: counts.activeContributors,
          notes: counts.notes,
          comments: counts.comments,
          votes: counts.votes,
          email_outbox: { pending: outbox.pending, sent: outbox.sent, gave_up: outbox.gaveUp },
          web_events: (await store.webEventCounts()).map((row) => ({ day: row.day, event: row.event, post_id: row.postId, count: row.count })),
        });
        return 0;
      }
    }
    return 2;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`cairn admin: ${error.message}`);
      return 2;
    }
    if (error instanceof AppError || error instanceof DatabaseFromNewerRelease || error instanceof UnsuitableDatabase) {
      console.error(`cairn admin: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await store.close();
  }
}

/** A running server remembers keys found valid and learns of revokes through DATA_DIR/key-generation. */
function warnIfUnsignalled(store: Store): void {
  if (store.keySignalOffReason === null) return;
  console.error(
    `cairn admin: the change is saved, but a running server was not told (${store.keySignalOffReason}); restart it to apply the change now`,
  );
}

/**
 * The key-generation file was missing when this command opened the store (it
 * or a server made a new one moments ago), or was replaced while it ran: a
 * running server may still map the old file and not see this bump. It maps
 * the new file within SIGNAL_CHECK_MS and then forgets every key it
 * remembered; waiting twice that keeps "revoked on the next request" true
 * once this command returns. (Where the file system keeps no birth time, a
 * file written in the last two seconds, by a revoke just before, looks just
 * made and costs the same short wait.)
 */
async function waitIfSignalFileChanged(store: Store): Promise<void> {
  if (!store.keySignalUnsettled) return;
  console.error(
    "cairn admin: DATA_DIR/key-generation was missing or replaced, or was just made (it must not be removed while a server runs); a running server maps the new file within a second, waiting for it",
  );
  await Bun.sleep(2 * SIGNAL_CHECK_MS);
}

/** `admin copy --to URL`: the SQLite instance of DATA_DIR into an empty PostgreSQL database. */
async function copy(to: string | undefined, dataDir: string, batch: string | undefined): Promise<number> {
  if (!to || !/^postgres(ql)?:\/\//.test(to)) {
    console.error("cairn admin: give the target: `cairn admin copy --to postgres://user@host/db` (an empty database)");
    return 2;
  }
  if (batch !== undefined && (!/^\d+$/.test(batch) || Number(batch) < 1 || Number(batch) > 1_000_000)) {
    console.error("cairn admin: --batch takes a number of rows from 1 to 1000000");
    return 2;
  }
  if (!existsSync(databasePath(dataDir))) {
    console.error(`cairn admin: no database at ${databasePath(dataDir)} to copy (set DATA_DIR or --data-dir)`);
    return 1;
  }
  try {
    const report = await copySqliteToPostgres(dataDir, to, { pageRows: batch ? Number(batch) : undefined, onProgress: copyProgressPrinter() });
    const url = new URL(to);
    print({ copied_to: `${url.hostname}${url.port ? `:${url.port}` : ""}${url.pathname}`, tables: report.tables, search_indexed: report.searchIndexed, ms: report.ms });
    if (report.sourceChanged) {
      console.error(
        "cairn admin: warning: the SQLite database took writes while it was copied (is the server still running?); " +
          "the copy holds what was committed when it began, and every later write is missing from PostgreSQL. " +
          "Stop the server, drop and re-create the target database, and copy again (docs/operations.md, \"Moving to PostgreSQL\")",
      );
    }
    return 0;
  } catch (error) {
    if (error instanceof CopyRefused) {
      console.error(`cairn admin: ${error.message}`);
      return 1;
    }
    // Never the URL: it may hold a password.
    console.error(`cairn admin: the copy failed (${(error as Error).message})`);
    return 1;
  }
}

const grouped = (n: number) => Math.round(n).toLocaleString("en-US");

/**
 * Progress of `admin copy` on stderr (stdout keeps the JSON report): a line
 * per step when it ends, and in between at most one a second.
 */
function copyProgressPrinter(): (progress: CopyProgress) => void {
  let lastLine = 0;
  return (p) => {
    const now = performance.now();
    if (!p.finished && now - lastLine < 1000) return;
    lastLine = now;
    const seconds = p.stepMs / 1000;
    const rate = seconds > 0 && p.rows > 0 ? ` (${grouped(p.rows / seconds)} rows/s)` : "";
    const whole = `whole copy ${p.total > 0 ? Math.floor((100 * p.done) / p.total) : 100}%, ${(p.elapsedMs / 1000).toFixed(1)} s`;
    const rows = p.of > 0 ? `${grouped(p.rows)} of ${grouped(p.of)} rows (${Math.floor((100 * p.rows) / p.of)}%)` : "";
    const took = p.finished ? ` in ${seconds.toFixed(1)} s` : "";
    console.error(`cairn admin copy: ${p.step}${p.finished ? " done" : ""}${rows ? `: ${rows}` : ""}${took}${rate}; ${whole}`);
  };
}

/**
 * Creates `path` empty and 0600, never through a link (O_EXCL), to be filled
 * after: a backup or a restored database holds e-mail addresses and key
 * digests, and no other user may open it in a moment before a chmod.
 */
function createPrivateFile(path: string): void {
  closeSync(openSync(path, "wx", 0o600));
}

/**
 * Gives a fully written `partial` its final name `path`, durably: the data
 * synced first, then linked (never over a file made meanwhile: EEXIST), the
 * partial name removed, and the directory synced so the new name survives a
 * power cut. On a throw `partial` is still there for the caller to remove.
 */
function publishSynced(partial: string, path: string): void {
  syncFile(partial);
  linkSync(partial, path);
  rmSync(partial);
  syncFile(dirname(resolve(path)));
}

/** fsync of a file or a directory (its entries), so that what was written survives a power cut. */
function syncFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** True when `path` names anything, a link whose target is missing included (existsSync follows links). */
function lexists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Copies a backup into an empty data directory after checking it is a sound Cairn database. */
function restore(file: string | undefined, dataDir: string): number {
  if (!file) {
    console.error("cairn admin: give the backup file: `cairn admin restore FILE --data-dir NEW_DIR`");
    return 2;
  }
  if (!existsSync(file)) {
    console.error(`cairn admin: no file ${file}`);
    return 1;
  }
  const target = databasePath(dataDir);
  if (lexists(target)) {
    console.error(`cairn admin: ${target} exists; restore into a new, empty data directory (never over a live database)`);
    return 1;
  }
  let check: Database;
  try {
    check = new Database(file, { readonly: true });
    check.query("SELECT count(*) FROM sqlite_master").get();
  } catch (error) {
    console.error(`cairn admin: ${file} is not an SQLite database (${(error as Error).message}); give a file made by \`cairn admin backup\``);
    return 1;
  }
  try {
    const integrity = check.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()?.integrity_check;
    const hasPosts = check.query("SELECT 1 FROM sqlite_master WHERE name = 'posts'").get();
    if (integrity !== "ok" || !hasPosts) {
      console.error(`cairn admin: ${file} is not a sound Cairn backup (integrity: ${integrity}, notes table: ${hasPosts ? "yes" : "no"})`);
      return 1;
    }
  } finally {
    check.close();
  }
  // Copied as cairn.db.partial, synced, then given its name: a copy that fails
  // (a full disk) or is killed leaves no half database where a server or a
  // retry of this verb would take it for the restored one.
  const partial = `${target}.partial`;
  let made = false;
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    rmSync(partial, { force: true }); // an earlier restore's, interrupted: no server reads it
    createPrivateFile(partial);
    made = true;
    copyFileSync(file, partial);
    chmodSync(partial, 0o600);
    publishSynced(partial, target);
  } catch (error) {
    if (made) rmSync(partial, { force: true });
    console.error(`cairn admin: cannot write ${target} (${(error as Error).message}); give a --data-dir this user may create and write, on a disk with room for the backup`);
    return 1;
  }
  for (const suffix of ["-wal", "-shm"]) rmSync(target + suffix, { force: true });
  print({ restored: resolve(target), from: resolve(file) });
  return 0;
}
