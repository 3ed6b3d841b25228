// Hand-written material: relational and key-value stores.
import { area, topic } from "./dsl.ts";

export default [
  area("sqlite", "SQLite", "sqlite", {
    bg: [
      "SQLite notes for the {service} storage layer",
      "How we run SQLite in production on {service}",
      "Embedded database checklist for small services",
      "What to know before picking SQLite for a server",
    ],
    facts: [
      "SQLite keeps the whole database in a single file plus, in WAL mode, a -wal and a -shm file next to it.",
      "[sqlite-busy] Only one writer can hold the write lock at a time; readers never block the writer in WAL mode.",
      "[sqlite-wal-growth] The WAL file is folded back into the main file by checkpoints, which run automatically every 1000 pages by default.",
      "Prepared statements should be reused; compiling SQL is often more expensive than running a small indexed query.",
      "PRAGMA integrity_check reads the whole file and is worth running after restoring a backup.",
      "[sqlite-foreign-keys] Foreign key enforcement is a per-connection setting and starts switched off.",
      "VACUUM INTO writes a compact, consistent copy of a live database and is the simplest online backup.",
      "The page cache size is per connection; cache_size with a negative value is measured in KiB.",
      "[sqlite-fts5-syntax] FTS5 gives full-text search with bm25 ranking inside the same file.",
      "Use STRICT tables if you want column types enforced instead of SQLite's type affinity.",
      "Transactions started with BEGIN IMMEDIATE take the write lock up front instead of upgrading later.",
      "Memory-mapped I/O can speed up reads but makes I/O errors show up as signals instead of error codes.",
    ],
  }, [
    topic("sqlite-busy", "locking concurrency", {
      name: "SQLITE_BUSY lock contention",
      ti: [
        "SQLITE_BUSY: database is locked under concurrent writers",
        "Fixing database is locked errors in SQLite",
        "SQLite busy errors when two workers write at once",
        "Why our SQLite writes fail with database is locked",
        "busy_timeout and BEGIN IMMEDIATE fixed the locking errors",
      ],
      sy: [
        "Under load the {service} started failing writes with `SQLITE_BUSY: database is locked`, roughly {n} per minute.",
        "Two background workers writing to the same SQLite file kept hitting `database is locked` even though each transaction was tiny.",
        "The error was `sqlite3.OperationalError: database is locked` and it only showed up when the importer and the API wrote at the same time.",
        "Our logs had bursts of SQLITE_BUSY right after deploys, when every process opened its connection at once.",
      ],
      ca: [
        "The connection had no busy timeout, so SQLite returned SQLITE_BUSY immediately instead of waiting for the other writer to finish.",
        "A deferred transaction read first and then tried to upgrade to a write lock; when another connection already held it, the upgrade failed at once with SQLITE_BUSY regardless of the timeout.",
        "The database was still in rollback journal mode, where a writer blocks all readers and readers block the writer.",
      ],
      fx: [
        "Set `PRAGMA busy_timeout = 5000` on every connection so a writer waits for the lock instead of failing.",
        "Start write transactions with `BEGIN IMMEDIATE` so the lock is taken up front and the busy handler can do its job.",
        "Switch to `PRAGMA journal_mode = WAL` so readers stop blocking the writer.",
        "Funnel all writes through one connection or a single writer queue; SQLite allows only one writer at a time anyway.",
        "Keep write transactions short: no network calls or sleeps while holding the lock.",
      ],
      sn: [
        "PRAGMA journal_mode = WAL;\nPRAGMA busy_timeout = 5000;\nBEGIN IMMEDIATE;\n-- writes here\nCOMMIT;",
        "Error: SQLITE_BUSY: database is locked\n    at Statement.run (native)\n    at insertEvent (src/events.ts:41)",
      ],
      gi: "`database is locked` (SQLITE_BUSY) with two writers: set busy_timeout and use BEGIN IMMEDIATE for write transactions.",
    }),
    topic("sqlite-wal-growth", "wal checkpoint disk", {
      name: "WAL file growth",
      ti: [
        "SQLite WAL file grows without bound on the {service}",
        "Checkpoint starvation: the -wal file reached several gigabytes",
        "Why the SQLite write-ahead log never shrinks",
        "Taming WAL growth with wal_checkpoint and journal_size_limit",
      ],
      sy: [
        "The `cairn.db-wal` file next to the database grew to {n} GB while the database itself was a few hundred MB.",
        "Disk usage on the {env} box kept climbing and the culprit was the SQLite write-ahead log, not the data.",
        "Reads got slower over the day because every query had to scan a huge WAL index.",
      ],
      ca: [
        "A long-running read transaction (a reporting query left open) pinned an old snapshot, so checkpoints could never reset the WAL.",
        "Automatic checkpoints are PASSIVE: they give up on pages that a reader still needs, so under constant reads the log only grows.",
        "A connection pool kept an idle connection inside an open transaction, which starved the checkpointer.",
      ],
      fx: [
        "Close read transactions promptly and never keep a cursor open across requests.",
        "Run `PRAGMA wal_checkpoint(TRUNCATE)` from a maintenance job during quiet periods.",
        "Set `PRAGMA journal_size_limit` so the WAL is truncated back after a successful checkpoint.",
        "Watch the size of the -wal file in monitoring; growth past a few hundred MB means a reader is stuck.",
      ],
      sn: ["PRAGMA wal_checkpoint(TRUNCATE);\n-- busy | log | checkpointed\n-- 0    | 0   | 0", "ls -lh data/\n-rw-r--r-- 1 app app 310M cairn.db\n-rw-r--r-- 1 app app 4.1G cairn.db-wal"],
      gi: "WAL file growing forever: a long read transaction blocks checkpoints; close readers, run wal_checkpoint(TRUNCATE).",
    }),
    topic("sqlite-fts5-syntax", "fts5 full-text-search", {
      name: "FTS5 query syntax errors",
      ti: [
        "FTS5 syntax error when users type quotes or hyphens",
        "fts5: syntax error near \"-\" from a search box",
        "Escaping user input for SQLite FTS5 MATCH queries",
        "Search endpoint crashed on queries with a colon",
      ],
      sy: [
        "Searching for `foo-bar` returned `fts5: syntax error near \"-\"` and a 500 from the search endpoint.",
        "A query containing a colon, like `error: timeout`, was parsed as a column filter and failed with `no such column: error`.",
        "Users typing `AND`, `NOT` or an unbalanced quote got errors instead of results.",
      ],
      ca: [
        "The raw query string was passed straight to MATCH, so FTS5 parsed hyphens, colons, quotes and AND/OR/NOT as query syntax.",
        "FTS5 treats a bareword followed by a colon as a column name, and a leading minus as NOT.",
      ],
      fx: [
        "Split the input into words yourself and wrap each one in double quotes (doubling any quote inside) before joining them with AND or OR.",
        "Never pass user text to MATCH unquoted; quoted strings are always treated as phrases, never as operators.",
        "Add tests with hostile queries such as `\"`, `*`, `NEAR(`, `title:x` and emoji.",
      ],
      sn: ["const expr = words.map((w) => `\"${w.replaceAll('\"', '\"\"')}\"`).join(\" AND \");", "SqliteError: fts5: syntax error near \"-\""],
      gi: "FTS5 `syntax error near` on user queries: quote every word before MATCH, never pass raw input.",
    }),
    topic("sqlite-foreign-keys", "foreign-keys schema", {
      name: "foreign keys not enforced",
      ti: [
        "SQLite silently ignored our foreign key constraints",
        "Orphaned rows because PRAGMA foreign_keys was off",
        "ON DELETE CASCADE did nothing in SQLite until enabled",
      ],
      sy: [
        "After deleting a project, its tasks were still in the table even though the schema said ON DELETE CASCADE.",
        "We found thousands of orphaned comment rows pointing at posts that no longer exist.",
      ],
      ca: [
        "SQLite parses foreign key clauses but does not enforce them unless `PRAGMA foreign_keys = ON` is set on the connection.",
        "The pragma is per connection and cannot be changed inside a transaction, so the migration tool's connection had it off.",
      ],
      fx: [
        "Run `PRAGMA foreign_keys = ON` right after opening every connection.",
        "Add a startup check that reads the pragma back and refuses to start if it is 0.",
        "Clean up existing orphans with `PRAGMA foreign_key_check` before turning enforcement on.",
      ],
      sn: ["PRAGMA foreign_keys = ON;\nPRAGMA foreign_key_check;"],
      gi: "Cascades not happening in SQLite: foreign keys are off by default; PRAGMA foreign_keys = ON per connection.",
    }),
    topic("sqlite-malformed", "corruption backup", {
      name: "malformed database image",
      ti: [
        "database disk image is malformed after copying the file",
        "Recovering a corrupted SQLite database with .recover",
        "SQLITE_CORRUPT after a backup taken with cp",
      ],
      sy: [
        "Opening the restored file failed with `database disk image is malformed` (SQLITE_CORRUPT).",
        "`PRAGMA integrity_check` reported `*** in database main *** Page 4312: btree page has invalid cell`.",
      ],
      ca: [
        "The backup was a plain `cp` of the database while the server was writing, without the -wal file, so the copy mixed old and new pages.",
        "The file lived on a network filesystem whose locking does not work the way SQLite expects.",
      ],
      fx: [
        "Take backups with `VACUUM INTO` or the online backup API, never by copying a live file.",
        "Try `sqlite3 broken.db .recover | sqlite3 fixed.db` to salvage what is readable.",
        "Keep SQLite files on local disks, not on NFS or SMB shares.",
      ],
      sn: ["sqlite3 broken.db \".recover\" | sqlite3 recovered.db\nsqlite3 recovered.db \"PRAGMA integrity_check\"\nok"],
      gi: "`database disk image is malformed` after cp backup: use VACUUM INTO for backups, .recover to salvage.",
    }),
    topic("sqlite-too-many-variables", "bulk-insert limits", {
      name: "too many SQL variables",
      ti: [
        "too many SQL variables on a large bulk insert",
        "SQLite parameter limit broke our batch upsert",
        "Chunking IN lists to avoid SQLITE_MAX_VARIABLE_NUMBER",
      ],
      sy: [
        "A bulk insert of {n} rows failed with `too many SQL variables`.",
        "A query with a huge `WHERE id IN (?, ?, ...)` list errored once the list passed a few thousand ids.",
      ],
      ca: [
        "SQLite caps the number of bound parameters per statement (SQLITE_MAX_VARIABLE_NUMBER, 999 on older builds, 32766 on newer ones).",
      ],
      fx: [
        "Insert in chunks inside one transaction, for example 500 rows per statement.",
        "For large IN lists, insert the ids into a temporary table and join against it.",
        "Reuse one prepared single-row insert inside a transaction; it is usually just as fast as multi-row VALUES.",
      ],
      gi: "`too many SQL variables`: chunk bulk inserts and IN lists, or use a temp table.",
    }),
  ]),

  area("postgres", "PostgreSQL", "postgres", {
    bg: [
      "PostgreSQL operations notes for the {service} cluster",
      "Postgres tuning and maintenance notes from {team}",
      "What we learned running Postgres {version} in production",
      "Checklist for a new PostgreSQL primary and replicas",
    ],
    facts: [
      "Every UPDATE in PostgreSQL writes a new row version; the old one stays until vacuum removes it.",
      "[pg-autovacuum-bloat] Autovacuum thresholds scale with table size, so very large tables are vacuumed rarely unless you lower the scale factor per table.",
      "[pg-replication-lag] Streaming replicas replay WAL from the primary; long queries on a replica can conflict with that replay.",
      "[pg-too-many-connections] Each connection is a separate backend process with its own memory, so hundreds of idle connections are expensive.",
      "EXPLAIN (ANALYZE, BUFFERS) shows the real plan, row counts and how many pages came from cache.",
      "[pg-slow-query-index] The planner relies on statistics gathered by ANALYZE; stale statistics lead to bad plans.",
      "pg_stat_statements is the first extension to enable on any new cluster.",
      "[pg-replication-slot-wal] Replication slots make the primary keep WAL until the consumer confirms it, even if the consumer is gone.",
      "Use `CREATE INDEX CONCURRENTLY` on busy tables; a plain CREATE INDEX blocks writes for its whole duration.",
      "[pg-idle-in-transaction] Sessions left idle in transaction hold locks and block vacuum from cleaning up.",
      "Logical backups with pg_dump are portable across major versions; physical backups are not.",
      "[pg-deadlock] Row locks are taken in the order rows are touched, so two transactions updating the same rows in different orders can deadlock.",
      "shared_buffers around a quarter of RAM is a common starting point; the OS cache does the rest.",
    ],
  }, [
    topic("pg-replication-lag", "replication replica", {
      name: "replica lag",
      ti: [
        "Postgres streaming replica lagging minutes behind the primary",
        "Replication lag on the read replica during batch jobs",
        "Why our PostgreSQL replica falls behind at night",
        "Monitoring and fixing replication lag in PostgreSQL {version}",
      ],
      sy: [
        "Reads from the replica returned data that was {n} seconds old, and `pg_stat_replication` showed replay_lag climbing.",
        "Users saw their own writes disappear for a while because the app read from a lagging replica.",
        "During the nightly batch the replica fell several minutes behind and alerts fired on `replay_lag`.",
      ],
      ca: [
        "A long analytical query on the replica conflicted with WAL replay; with `max_standby_streaming_delay` set high, replay paused behind it.",
        "The batch job rewrote a large table, generating WAL faster than the replica's single replay process could apply it.",
        "The replica's disk was slower than the primary's, so replay was I/O bound.",
      ],
      fx: [
        "Measure lag with `SELECT now() - pg_last_xact_replay_timestamp()` on the replica and alert on it.",
        "Move heavy reporting queries to a dedicated replica with its own delay settings.",
        "Break large batch updates into smaller transactions so WAL volume is spread out.",
        "Route read-your-own-writes requests to the primary for a few seconds after a write.",
      ],
      sn: ["SELECT client_addr, state, write_lag, flush_lag, replay_lag FROM pg_stat_replication;", "SELECT now() - pg_last_xact_replay_timestamp() AS lag;"],
      gi: "Replica lagging behind primary: long queries conflict with replay, batch jobs flood WAL; watch replay_lag.",
    }),
    topic("pg-replication-slot-wal", "replication wal disk", {
      name: "inactive replication slot",
      ti: [
        "Inactive replication slot filled the primary's disk with WAL",
        "pg_wal directory grew to hundreds of GB overnight",
        "Dropping a stale logical replication slot in Postgres",
      ],
      sy: [
        "The primary ran out of disk; `pg_wal` held {n} GB of segments that were never recycled.",
        "Postgres refused writes with `could not write to file \"pg_wal/xlogtemp\": No space left on device`.",
      ],
      ca: [
        "A logical replication slot created for a CDC connector was left behind when the connector was decommissioned, so the server kept all WAL for it.",
        "A replica was down for days and its physical slot pinned WAL on the primary.",
      ],
      fx: [
        "List slots with `SELECT slot_name, active, pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)) FROM pg_replication_slots` and drop the inactive one.",
        "Set `max_slot_wal_keep_size` so a forgotten slot is invalidated instead of filling the disk.",
        "Alert on retained WAL per slot, not only on disk usage.",
      ],
      sn: ["SELECT pg_drop_replication_slot('debezium_orders');"],
      gi: "pg_wal filling the disk: an inactive replication slot retains WAL; drop it and set max_slot_wal_keep_size.",
    }),
    topic("pg-autovacuum-bloat", "vacuum bloat performance", {
      name: "table bloat",
      ti: [
        "Table bloat: autovacuum could not keep up on the events table",
        "Postgres table ten times larger than its live data",
        "Tuning autovacuum scale factor for a hot table",
        "Dead tuples piling up and queries slowing down",
      ],
      sy: [
        "The `events` table used {n} GB on disk while `count(*)` suggested a tenth of that; sequential scans kept getting slower.",
        "`pg_stat_user_tables` showed millions of `n_dead_tup` and last_autovacuum days ago.",
        "Index scans slowed down gradually after we started updating rows in place every few seconds.",
      ],
      ca: [
        "With the default `autovacuum_vacuum_scale_factor` of 0.2, a table with 100 million rows waits for 20 million dead rows before autovacuum starts.",
        "Autovacuum was being cancelled repeatedly by lock requests from a migration job.",
        "A long-open transaction held back the xmin horizon, so vacuum could not remove dead rows anyway.",
      ],
      fx: [
        "Lower the thresholds for the hot table: `ALTER TABLE events SET (autovacuum_vacuum_scale_factor = 0.01)`.",
        "Give autovacuum more throughput by raising `autovacuum_vacuum_cost_limit`.",
        "Reclaim space on a bloated table with pg_repack rather than VACUUM FULL, which locks the table.",
        "Find old transactions with `pg_stat_activity` and kill the ones holding back the horizon.",
      ],
      sn: ["SELECT relname, n_live_tup, n_dead_tup, last_autovacuum FROM pg_stat_user_tables ORDER BY n_dead_tup DESC LIMIT 10;"],
      gi: "Bloated Postgres table: autovacuum scale factor too high for big tables; set it per table, pg_repack to reclaim.",
    }),
    topic("pg-too-many-connections", "connections pgbouncer pooling", {
      name: "connection limit exhaustion",
      ti: [
        "FATAL: sorry, too many clients already in Postgres",
        "Putting PgBouncer in front of Postgres to stop connection errors",
        "Connection storms after scaling the {service} pods",
        "remaining connection slots are reserved for superuser",
      ],
      sy: [
        "After scaling to {n} pods, new requests failed with `FATAL: sorry, too many clients already`.",
        "The app logged `remaining connection slots are reserved for non-replication superuser connections` during deploys.",
        "Most of the 500 connections in pg_stat_activity were idle.",
      ],
      ca: [
        "Every pod opened its own pool of 20 connections, so the total passed `max_connections` as soon as we scaled out.",
        "During a rolling deploy old and new pods held pools at the same time, doubling the connection count.",
      ],
      fx: [
        "Run PgBouncer in transaction pooling mode and point the apps at it; a few dozen server connections serve hundreds of clients.",
        "Size each pod's pool so pods × pool size stays well below max_connections.",
        "Remember that transaction pooling breaks session features such as prepared statements and SET without LOCAL on older PgBouncer versions.",
      ],
      sn: ["[pgbouncer]\npool_mode = transaction\nmax_client_conn = 2000\ndefault_pool_size = 40"],
      gi: "`too many clients already`: pods × pool size exceeds max_connections; use PgBouncer transaction pooling.",
    }),
    topic("pg-deadlock", "locking transactions", {
      name: "deadlock detected errors",
      ti: [
        "ERROR: deadlock detected between two Postgres transactions",
        "Deadlocks when two jobs update the same rows",
        "Ordering row updates to avoid Postgres deadlocks",
      ],
      sy: [
        "The worker logged `ERROR: deadlock detected` with `Process 4121 waits for ShareLock on transaction 99812; blocked by process 4177`.",
        "Around {n} deadlocks per hour appeared after we parallelised the balance updates.",
      ],
      ca: [
        "Two transactions updated the same accounts in different orders, each holding a row lock the other needed.",
        "A foreign key check took a share lock on the parent row while another transaction updated the parent.",
      ],
      fx: [
        "Always touch rows in a consistent order, for example sorted by primary key.",
        "Lock the rows up front with `SELECT ... ORDER BY id FOR UPDATE`.",
        "Retry the whole transaction on SQLSTATE 40P01; deadlocks are expected under contention.",
      ],
      gi: "`deadlock detected`: update rows in a consistent order (sorted ids) and retry on 40P01.",
    }),
    topic("pg-idle-in-transaction", "transactions locks", {
      name: "idle in transaction sessions",
      ti: [
        "Sessions stuck idle in transaction blocked our migration",
        "Killing idle in transaction connections in PostgreSQL",
        "A forgotten transaction held locks for three hours",
      ],
      sy: [
        "An `ALTER TABLE` hung for minutes and every query on the table queued behind it.",
        "`pg_stat_activity` showed a backend in state `idle in transaction` since the morning.",
      ],
      ca: [
        "The ORM opened a transaction for a request, then the handler awaited an external API and the error path never committed or rolled back.",
        "The migration needed an ACCESS EXCLUSIVE lock and waited behind the idle transaction, and everything else waited behind the migration.",
      ],
      fx: [
        "Set `idle_in_transaction_session_timeout = '60s'` so such sessions are terminated.",
        "Run migrations with a short `lock_timeout` and retry instead of queuing forever.",
        "Find the blocker with `pg_blocking_pids(pid)` and terminate it with `pg_terminate_backend`.",
      ],
      sn: ["SET lock_timeout = '5s';\nALTER TABLE orders ADD COLUMN note text;"],
      gi: "Migration hangs behind `idle in transaction`: set idle_in_transaction_session_timeout and lock_timeout.",
    }),
    topic("pg-slow-query-index", "performance indexes explain", {
      name: "planner skipping an index",
      ti: [
        "Postgres ignores my index and does a sequential scan",
        "Slow query fixed by ANALYZE and a composite index",
        "Reading EXPLAIN ANALYZE to find the missing index",
        "Why the query planner chose a seq scan on orders",
      ],
      sy: [
        "A lookup by `customer_id` took {n} ms and EXPLAIN showed `Seq Scan on orders`.",
        "The same query was fast on staging and slow in production with identical indexes.",
      ],
      ca: [
        "Statistics were stale after a bulk load, so the planner estimated far more matching rows than there were.",
        "The query filtered on `lower(email)` while the index was on `email`, so the index could not be used.",
        "The index column order did not match the query: the filter was on the second column of a composite index.",
      ],
      fx: [
        "Run `ANALYZE orders` after bulk loads, and check estimated versus actual rows in `EXPLAIN (ANALYZE, BUFFERS)`.",
        "Create an expression index such as `CREATE INDEX ON users (lower(email))` for case-insensitive lookups.",
        "Put the equality column first in a composite index and the range column last.",
      ],
      sn: ["EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM orders WHERE customer_id = 42;\n Seq Scan on orders  (cost=0.00..183210.00 rows=91000 width=120) (actual time=0.02..812.4 rows=12 loops=1)"],
      gi: "Seq scan instead of index: stale stats (ANALYZE), expression mismatch, or wrong composite column order.",
    }),
    topic("pg-serialization-failure", "transactions isolation", {
      name: "serialization failures",
      ti: [
        "could not serialize access due to concurrent update",
        "Retrying serialization failures under SERIALIZABLE isolation",
        "SQLSTATE 40001 errors after switching isolation levels",
      ],
      sy: [
        "After moving the booking flow to SERIALIZABLE we saw `ERROR: could not serialize access due to read/write dependencies among transactions`.",
        "Roughly one request in {n} failed with SQLSTATE 40001 under peak traffic.",
      ],
      ca: [
        "Serializable and repeatable read transactions abort instead of blocking when they conflict; the application is expected to retry.",
      ],
      fx: [
        "Wrap the whole transaction in a retry loop for SQLSTATE 40001 with a small randomized backoff.",
        "Keep serializable transactions short and touch as few rows as possible.",
        "Use READ COMMITTED with explicit row locks where full serializability is not needed.",
      ],
      gi: "`could not serialize access` (40001): retry the whole transaction; keep serializable transactions short.",
    }),
    topic("pg-dump-version", "backup pg_dump", {
      name: "pg_dump version mismatch",
      ti: [
        "pg_dump: error: aborting because of server version mismatch",
        "Backups failing after the Postgres {version} upgrade",
        "Matching pg_dump client version to the server",
      ],
      sy: [
        "The nightly backup failed with `pg_dump: error: server version: 16.2; pg_dump version: 14.11` and `aborting because of server version mismatch`.",
      ],
      ca: [
        "pg_dump refuses to dump a server newer than itself; the backup container still had the old client package.",
      ],
      fx: [
        "Install the postgresql-client package matching the server's major version in the backup image.",
        "Pin the backup image version alongside the server version in the same change.",
        "Restore a test backup after every major upgrade to prove the pipeline still works.",
      ],
      gi: "`server version mismatch` from pg_dump: the client must be at least the server's major version.",
    }),
  ]),

  area("mysql", "MySQL", "mysql", {
    bg: ["MySQL notes from the legacy {service} database", "Living with MySQL {version} in the billing stack", "MySQL operational checklist for on-call"],
    facts: [
      "InnoDB locks index records, not rows, so a missing index can turn a small update into a big lock.",
      "[mysql-utf8mb4] The `utf8` character set in MySQL is an alias for utf8mb3 and cannot store four-byte characters.",
      "[mysql-lock-wait] innodb_lock_wait_timeout defaults to 50 seconds.",
      "The slow query log with long_query_time = 0.5 catches most problems early.",
      "[mysql-gone-away] wait_timeout closes idle connections on the server side after eight hours by default.",
      "pt-online-schema-change and gh-ost change big tables without long locks.",
    ],
  }, [
    topic("mysql-lock-wait", "locking innodb", {
      name: "InnoDB lock wait timeouts",
      ti: ["Lock wait timeout exceeded; try restarting transaction", "InnoDB lock waits during the nightly reconciliation", "Finding the blocking transaction in MySQL"],
      sy: ["Updates failed with `ERROR 1205 (HY000): Lock wait timeout exceeded; try restarting transaction`.", "The reconciliation job stalled for 50 seconds at a time on single-row updates."],
      ca: ["A batch job updated rows through a non-indexed column, so InnoDB locked far more index records than intended.", "A transaction was left open by a script that crashed between statements."],
      fx: ["Find the blocker in `sys.innodb_lock_waits` or `information_schema.innodb_trx` and kill it.", "Add an index for the update's WHERE clause so fewer records are locked.", "Commit in small batches instead of one huge transaction."],
      sn: ["SELECT * FROM sys.innodb_lock_waits\\G"],
      gi: "MySQL `Lock wait timeout exceeded`: find the blocker in sys.innodb_lock_waits, index the WHERE clause.",
    }),
    topic("mysql-utf8mb4", "unicode encoding", {
      name: "emoji and utf8mb4",
      ti: ["Incorrect string value when saving emoji to MySQL", "Migrating MySQL tables from utf8 to utf8mb4", "Emoji turned into question marks in the database"],
      sy: ["Inserting a comment with an emoji failed with `Incorrect string value: '\\xF0\\x9F\\x98\\x80' for column 'body'`.", "Some user names were stored as `????` after an import."],
      ca: ["The columns used MySQL's `utf8` (three bytes per character), which cannot hold characters outside the Basic Multilingual Plane.", "The connection charset was latin1 even though the tables were utf8mb4."],
      fx: ["Convert tables with `ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci`.", "Set the client connection charset to utf8mb4 as well, not only the tables.", "Check index length limits: utf8mb4 uses four bytes per character, so long VARCHAR indexes may need a prefix."],
      gi: "MySQL `Incorrect string value` for emoji: convert to utf8mb4 and set the connection charset too.",
    }),
    topic("mysql-gone-away", "connections timeouts", {
      name: "server has gone away",
      ti: ["MySQL server has gone away after idle periods", "Error 2006 on the first query every morning", "Connection pool keeps handing out dead MySQL connections"],
      sy: ["The first request after a quiet night failed with `(2006, 'MySQL server has gone away')`.", "Large inserts failed with `Lost connection to MySQL server during query`."],
      ca: ["The server closed idle connections after wait_timeout, but the pool kept them and handed them out.", "A single INSERT with a large blob exceeded max_allowed_packet."],
      fx: ["Set the pool's maximum connection lifetime below wait_timeout and enable pre-ping or validation.", "Raise `max_allowed_packet` or split large writes."],
      gi: "`MySQL server has gone away`: pool lifetime below wait_timeout, pre-ping; raise max_allowed_packet for big rows.",
    }),
  ]),

  area("redis", "Redis", "redis", {
    bg: ["Redis usage guidelines for the {service}", "How we use Redis for caching and queues", "Redis operations notes for on-call"],
    facts: [
      "Redis runs commands on a single thread, so one slow command delays every client.",
      "[redis-maxmemory] Without a maxmemory setting Redis grows until the OS kills it.",
      "[redis-keys-blocking] SCAN iterates the keyspace incrementally; KEYS walks it all at once.",
      "[redis-fork-latency] RDB snapshots and AOF rewrites fork the process; copy-on-write can double memory use under heavy writes.",
      "Always set a TTL on cache keys so stale entries age out on their own.",
      "Redis Cluster shards keys by hash slot; multi-key commands need the keys in the same slot.",
    ],
  }, [
    topic("redis-maxmemory", "memory eviction cache", {
      name: "Redis OOM errors",
      ti: ["OOM command not allowed when used memory > maxmemory", "Choosing a Redis eviction policy for the cache", "Redis ran out of memory and rejected writes"],
      sy: ["Writes failed with `OOM command not allowed when used memory > 'maxmemory'`.", "Redis memory climbed to {n} GB and the kernel OOM killer took the process down."],
      ca: ["maxmemory-policy was `noeviction`, so Redis refused writes once full instead of evicting old cache keys.", "Keys were written without TTLs, so nothing ever expired."],
      fx: ["Use `maxmemory-policy allkeys-lru` (or allkeys-lfu) for a pure cache.", "Set a maxmemory below the container limit so Redis evicts before the kernel kills it.", "Add TTLs to every cache write and audit big keys with `redis-cli --bigkeys`."],
      sn: ["CONFIG SET maxmemory 2gb\nCONFIG SET maxmemory-policy allkeys-lru"],
      gi: "Redis `OOM command not allowed`: set maxmemory + allkeys-lru for caches, TTLs on every key.",
    }),
    topic("redis-keys-blocking", "latency commands", {
      name: "KEYS blocking Redis",
      ti: ["Latency spikes caused by KEYS in production Redis", "Replacing KEYS with SCAN in the cleanup job", "Redis froze for two seconds every hour"],
      sy: ["Every hour all Redis clients timed out for about {n} seconds.", "The slowlog showed `KEYS session:*` taking 1800 ms."],
      ca: ["A cleanup job used `KEYS pattern`, which blocks the single Redis thread while it walks millions of keys.", "A DEL of a huge set blocked the server while it freed memory."],
      fx: ["Use `SCAN` with MATCH and COUNT to iterate in small steps.", "Delete big keys with `UNLINK`, which frees memory in a background thread.", "Check `SLOWLOG GET 20` whenever latency spikes."],
      gi: "Redis latency spikes: KEYS or big DELs block the thread; use SCAN and UNLINK, read SLOWLOG.",
    }),
    topic("redis-fork-latency", "persistence memory", {
      name: "fork latency during BGSAVE",
      ti: ["Redis latency spikes during BGSAVE snapshots", "Fork failing with Cannot allocate memory in Redis", "Turning off RDB snapshots on the cache instance"],
      sy: ["The log said `Can't save in background: fork: Cannot allocate memory` and writes were refused with MISCONF.", "P99 latency jumped every 15 minutes, exactly when the RDB snapshot started."],
      ca: ["Forking a process with a large heap takes time and copy-on-write pages double memory under write load.", "vm.overcommit_memory was 0, so the kernel refused the fork."],
      fx: ["Set `vm.overcommit_memory = 1` as Redis recommends.", "Disable persistence (`save \"\"`) on pure cache instances.", "Disable transparent huge pages, which make copy-on-write far more expensive."],
      gi: "Redis `fork: Cannot allocate memory` / MISCONF: vm.overcommit_memory=1, no RDB on caches, disable THP.",
    }),
  ]),
];
