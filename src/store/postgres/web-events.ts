// Daily counters of the public page's events (no address, no agent stored).
import { sql } from "drizzle-orm";
import type { WebEventCount } from "../types.ts";
import type { Db } from "./connection.ts";
import { webEventCounts } from "./schema.ts";

export class PostgresWebEvents {
  constructor(private readonly db: Db) {}

  async count(day: string, event: string, postId: string | null): Promise<void> {
    await this.db
      .insert(webEventCounts)
      .values({ day, event, postId: postId ?? "", count: 1 })
      .onConflictDoUpdate({
        target: [webEventCounts.day, webEventCounts.event, webEventCounts.postId],
        set: { count: sql`${webEventCounts.count} + 1` },
      });
  }

  async all(): Promise<WebEventCount[]> {
    // Code point order, as SQLite lists them, whatever the database's collation.
    const rows = await this.db
      .select()
      .from(webEventCounts)
      .orderBy(sql`${webEventCounts.day} COLLATE "C"`, sql`${webEventCounts.event} COLLATE "C"`, sql`${webEventCounts.postId} COLLATE "C"`);
    return rows.map((row) => ({ ...row, count: Number(row.count), postId: row.postId === "" ? null : row.postId }));
  }
}
