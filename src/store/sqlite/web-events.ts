// Daily counters of the public page's events (no address, no agent stored).
import { sql } from "drizzle-orm";
import type { BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import type { WebEventCount } from "../types.ts";
import type { GroupCommit } from "./group-commit.ts";
import type * as schema from "./schema.ts";
import { webEventCounts } from "./schema.ts";

export class SqliteWebEvents {
  private prepared?: ReturnType<SqliteWebEvents["prepare"]>;

  constructor(
    private readonly db: BunSQLiteDatabase<typeof schema>,
    private readonly commit: GroupCommit,
  ) {}

  private prepare() {
    return this.db
      .insert(webEventCounts)
      .values({ day: sql.placeholder("day"), event: sql.placeholder("event"), postId: sql.placeholder("postId"), count: 1 })
      .onConflictDoUpdate({
        target: [webEventCounts.day, webEventCounts.event, webEventCounts.postId],
        set: { count: sql`${webEventCounts.count} + 1` },
      })
      .prepare();
  }

  async count(day: string, event: string, postId: string | null): Promise<void> {
    const statement = (this.prepared ??= this.prepare());
    // The empty string stands for "no note" (the key's columns are NOT NULL).
    await this.commit.write(() => statement.run({ day, event, postId: postId ?? "" }));
  }

  all(): WebEventCount[] {
    return this.db
      .select()
      .from(webEventCounts)
      .orderBy(webEventCounts.day, webEventCounts.event, webEventCounts.postId)
      .all()
      .map((row) => ({ ...row, postId: row.postId === "" ? null : row.postId }));
  }
}
