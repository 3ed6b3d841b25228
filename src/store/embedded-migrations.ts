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
