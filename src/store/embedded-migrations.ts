// drizzle-kit's migration files as embedded in the executable (each engine
// imports its SQL files as text and passes them here with its journal).

export interface Migration {
  tag: string;
  statements: string[];
  /** drizzle-kit's `when`; stored as created_at in __drizzle_migrations. */
  createdAt: number;
  hash: string;
}

/** The journal's steps in order, each split at drizzle-kit's statement breakpoints; a step missing from `files` throws. */
export function embeddedMigrations(journal: { entries: { tag: string; when: number }[] }, files: Record<string, string>): Migration[] {
  return journal.entries.map((entry) => {
    const text = files[entry.tag];
    if (text === undefined) throw new Error(`migration ${entry.tag} is in the journal but not embedded`);
    return {
      tag: entry.tag,
      statements: text.split("--> statement-breakpoint").filter((s) => s.trim().length > 0),
      createdAt: entry.when,
      hash: new Bun.CryptoHasher("sha256").update(text).digest("hex"),
    };
  });
}

/**
 * A database whose migrations table holds a step this executable does not
 * know: a newer release migrated it. Refused at start (serve and admin), since
 * this executable's statements would meet tables it was not written for
 * (docs/operations.md, "Upgrades": downgrades).
 */
export class DatabaseFromNewerRelease extends Error {
  constructor(what: string, newestApplied: number, migrations: Migration[]) {
    const newest = migrations[migrations.length - 1];
    super(
      `${what} was migrated by a newer Cairn release (its newest migration step is dated ${new Date(newestApplied).toISOString()}; ` +
        `this executable knows steps up to ${newest.tag}, dated ${new Date(newest.createdAt).toISOString()}). ` +
        "Run the newer executable, or restore the backup taken before the upgrade to go back (docs/operations.md, \"Upgrades\").",
    );
  }
}

/**
 * A database this executable must not start on (said at start by serve and
 * admin, as DatabaseFromNewerRelease is): e.g. a new PostgreSQL database
 * whose encoding cannot hold every character a note may carry.
 */
export class UnsuitableDatabase extends Error {}

/** Throws DatabaseFromNewerRelease when `newestApplied` is past every step this executable embeds. */
export function refuseNewerDatabase(what: string, newestApplied: number | null, migrations: Migration[]): void {
  if (newestApplied !== null && newestApplied > migrations[migrations.length - 1].createdAt) {
    throw new DatabaseFromNewerRelease(what, newestApplied, migrations);
  }
}
