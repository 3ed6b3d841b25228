// The PostgreSQL side of search (docs/design.md, "Search"): the same index the
// SQLite engine keeps (src/store/sqlite/search.ts), in plain tables (schema.ts):
// search_postings which notes hold each term in which impact tier (what FTS5's
// tier columns hold on SQLite), search_vectors each note's term vector,
// search_terms how many notes hold each term per tier, search_totals the
// corpus sizes (sharded rows, summed on read). Terms come from
// src/core/search/analyzer.ts and tiers from src/core/search/ranking.ts, so
// both engines store the same index; all four tables change in the
// transaction that inserts or deletes the note, so the statistics are exact.
// Ranking itself is the shared src/core/search (exact BM25F top-k, MaxScore):
// this file only answers its SearchSource questions, all inside one
// REPEATABLE READ snapshot per search, so statistics and postings agree even
// while other replicas write.
import { sql, type SQL } from "drizzle-orm";
import { termVector } from "../../core/search/analyzer.ts";
import { resultOrder, searchNotes, type SearchRequest, type SearchSource } from "../../core/search/query.ts";
import { rankSimilar, type SimilarQuery } from "../../core/search/own-score.ts";
import { rankTopK, TIERS, tierOf, type CorpusStats, type TermAt } from "../../core/search/ranking.ts";
import { rankTagged } from "../../core/search/tagged.ts";
import { bestTagged, taggedNotes } from "./note-tags.ts";
import { encodeVector, readLengths } from "../../core/search/vector.ts";

/** Rows of search_totals: a write adds to the row of its note's pk % TOTALS_SHARDS. */
export const TOTALS_SHARDS = 16;

/** Runs one statement in the caller's transaction and answers its rows. */
export type Execute = <T extends Record<string, unknown>>(query: SQL) => Promise<T[]>;

interface IndexedNote {
  pk: number;
  title: string;
  tags: string[];
  body: string;
}

/** A JSON parameter: lists travel as one jsonb value (no driver-specific array binding). */
const json = (value: unknown) => sql`(${JSON.stringify(value)}::text)::jsonb`;

async function addTotals(execute: Execute, pk: number, notes: number, lengths: number[]): Promise<void> {
  await execute(sql`
    INSERT INTO search_totals (shard, notes, title_terms, tag_terms, body_terms)
    VALUES (${pk % TOTALS_SHARDS}, ${notes}, ${lengths[0]}, ${lengths[1]}, ${lengths[2]})
    ON CONFLICT (shard) DO UPDATE SET
      notes = search_totals.notes + excluded.notes,
      title_terms = search_totals.title_terms + excluded.title_terms,
      tag_terms = search_totals.tag_terms + excluded.tag_terms,
      body_terms = search_totals.body_terms + excluded.body_terms`);
}

/**
 * Indexes a note; call inside the transaction that inserts it. The term
 * counts are upserted in (term, tier) order, so concurrent writers lock the
 * shared rows in one order and never deadlock on them.
 */
export async function indexNote(execute: Execute, note: IndexedNote): Promise<void> {
  const vector = termVector(note.title, note.tags, note.body);
  const pairs: [string, number][] = [];
  for (const [term, counts] of vector.counts) pairs.push([term, tierOf(counts, vector.lengths)]);
  if (pairs.length > 0) {
    await execute(sql`
      INSERT INTO search_postings (term, tier, pk)
      SELECT e ->> 0, (e ->> 1)::smallint, ${note.pk}::bigint FROM jsonb_array_elements(${json(pairs)}) e`);
    await execute(sql`
      INSERT INTO search_terms (term, tier, notes)
      SELECT e ->> 0, (e ->> 1)::smallint, 1 FROM jsonb_array_elements(${json(pairs)}) e
       ORDER BY (e ->> 0) COLLATE "C", (e ->> 1)::smallint
      ON CONFLICT (term, tier) DO UPDATE SET notes = search_terms.notes + 1`);
  }
  await execute(sql`INSERT INTO search_vectors (pk, vector) VALUES (${note.pk}, ${encodeVector(vector)})`);
  await addTotals(execute, note.pk, 1, vector.lengths);
}

/** Removes a note from the index; call inside the transaction that deletes it. */
export async function unindexNote(execute: Execute, pk: number): Promise<void> {
  const [row] = await execute<{ vector: string }>(sql`DELETE FROM search_vectors WHERE pk = ${pk} RETURNING vector`);
  if (!row) return;
  const removed = await execute<{ term: string; tier: number }>(sql`DELETE FROM search_postings WHERE pk = ${pk} RETURNING term, tier`);
  if (removed.length > 0) {
    const pairs = json(removed.map((r) => [r.term, Number(r.tier)]));
    // Locked in (term, tier) order first, like indexNote, then counted down; rows at zero go.
    await execute(sql`
      WITH gone AS (SELECT e ->> 0 AS term, (e ->> 1)::smallint AS tier FROM jsonb_array_elements(${pairs}) e),
           locked AS (SELECT t.term, t.tier FROM search_terms t JOIN gone USING (term, tier) ORDER BY t.term, t.tier FOR UPDATE OF t)
      UPDATE search_terms t SET notes = t.notes - 1 FROM locked WHERE t.term = locked.term AND t.tier = locked.tier`);
    await execute(sql`
      DELETE FROM search_terms t USING (SELECT e ->> 0 AS term, (e ->> 1)::smallint AS tier FROM jsonb_array_elements(${pairs}) e) gone
       WHERE t.term = gone.term AND t.tier = gone.tier AND t.notes <= 0`);
  }
  const lengths = readLengths(row.vector);
  await addTotals(execute, pk, -1, lengths.map((n) => -n));
}

/** `q` holds one of these terms (at their tiers): an SQL condition on search_postings q. */
function holdsAny(terms: TermAt[]): SQL {
  const each = terms.map(({ term, tiers }) =>
    tiers === null ? sql`q.term = ${term}` : sql`(q.term = ${term} AND q.tier IN (${sql.join(tiers.map((t) => sql`${t}`), sql`, `)}))`,
  );
  return sql`EXISTS (SELECT 1 FROM search_postings q WHERE q.pk = p.pk AND (${sql.join(each, sql` OR `)}))`;
}

/** The index as the shared ranking asks it, read through one transaction (one snapshot). */
export class PostgresSearchSource implements SearchSource {
  constructor(private readonly execute: Execute) {}

  async corpus(): Promise<CorpusStats> {
    const [t] = await this.execute<{ notes: number; title: number; tags: number; body: number }>(sql`
      SELECT coalesce(sum(notes), 0)::float8 AS notes, coalesce(sum(title_terms), 0)::float8 AS title,
             coalesce(sum(tag_terms), 0)::float8 AS tags, coalesce(sum(body_terms), 0)::float8 AS body
        FROM search_totals`);
    return { notes: Number(t.notes), lengthSums: [Number(t.title), Number(t.tags), Number(t.body)] };
  }

  /** Counts already read in this search's snapshot: the ranking asks again for the terms the query step looked up. */
  private readonly known = new Map<string, number[]>();

  async tierCounts(terms: string[]): Promise<number[][]> {
    const missing = [...new Set(terms.filter((term) => !this.known.has(term)))];
    if (missing.length > 0) {
      for (const term of missing) this.known.set(term, new Array<number>(TIERS).fill(0));
      const rows = await this.execute<{ term: string; tier: number; notes: number }>(sql`
        SELECT term, tier::int AS tier, notes FROM search_terms
         WHERE term = ANY (ARRAY(SELECT jsonb_array_elements_text(${json(missing)})))`);
      for (const row of rows) this.known.get(row.term)![Number(row.tier)] = Number(row.notes);
    }
    return terms.map((term) => [...this.known.get(term)!]);
  }

  async notesWith(term: TermAt, without: TermAt[], anyOf: TermAt[] | null, limit = -1): Promise<number[]> {
    const conditions: SQL[] = [sql`p.term = ${term.term}`];
    if (term.tiers !== null) conditions.push(sql`p.tier IN (${sql.join(term.tiers.map((t) => sql`${t}`), sql`, `)})`);
    if (without.length > 0) conditions.push(sql`NOT ${holdsAny(without)}`);
    if (anyOf && anyOf.length > 0) conditions.push(holdsAny(anyOf));
    const matching = sql`SELECT p.pk FROM search_postings p WHERE ${sql.join(conditions, sql` AND `)}`;
    // With a limit, the first notes by key, as FTS5 answers them on SQLite.
    // OFFSET 0 fences the filter in: otherwise PostgreSQL may walk the whole
    // (pk, term) index in key order looking for the term (30-80 ms at 20k notes).
    const rows = await this.execute<{ pk: number }>(limit >= 0 ? sql`SELECT pk FROM (${matching} OFFSET 0) m ORDER BY pk LIMIT ${limit}` : matching);
    return rows.map((row) => Number(row.pk));
  }

  async vectors(keys: number[]): Promise<{ key: number; vector: string }[]> {
    if (keys.length === 0) return [];
    const rows = await this.execute<{ pk: number; vector: string }>(sql`
      SELECT pk, vector FROM search_vectors WHERE pk IN (SELECT (jsonb_array_elements_text(${json(keys)}))::bigint)`);
    return rows.map((row) => ({ key: Number(row.pk), vector: row.vector }));
  }

  async vocabulary(from: string, to: string): Promise<{ term: string; doc: number }[]> {
    const rows = await this.execute<{ term: string; doc: number }>(sql`
      SELECT term, sum(notes)::float8 AS doc FROM search_terms WHERE term >= ${from} AND term < ${to} GROUP BY term`);
    return rows.map((row) => ({ term: row.term, doc: Number(row.doc) }));
  }

  /** The pks of the notes for a request with their order keys, best first (core/search/query.ts gives the order). */
  async search<T extends { pk: number; score: number; createdAt: number }>(
    request: SearchRequest,
    rowsOf: (pks: number[]) => Promise<T[]>,
  ): Promise<T[]> {
    if (request.tags.length > 0 && request.words.length === 0) {
      // Tag words only: the best-scored notes carrying every tag (net score, then newest).
      const pks = await bestTagged(this.execute, request.tags, request.limit);
      const rows = new Map((pks.length > 0 ? await rowsOf(pks) : []).map((row) => [Number(row.pk), row]));
      return pks.flatMap((pk) => rows.get(pk) ?? []);
    }
    const ranked =
      request.tags.length > 0
        ? await rankTagged(
            { terms: this, vectors: this, rankFiltered: (terms, k, accept) => rankTopK(this, terms, k, accept), directCost: 1 },
            request.words,
            await taggedNotes(this.execute, request.tags),
            request.limit,
          )
        : await searchNotes(this, request);
    if (ranked.length === 0) return [];
    return resultOrder(ranked, await rowsOf(ranked.map((r) => r.key)), request.limit);
  }

  /**
   * The similar-notes lookup (SqliteSearch.similar says what it answers), in
   * this search's snapshot: the statistics, the candidates and their vectors
   * from the database index, then `rowsOf` the notes listed.
   */
  async similar<T extends { pk: number; score: number; createdAt: number }>(
    query: SimilarQuery,
    rowsOf: (pks: number[]) => Promise<T[]>,
  ): Promise<{ row: T; share: number }[]> {
    const { own, ranked } = await rankSimilar(this, query);
    if (ranked.length === 0) return [];
    const shares = new Map(ranked.map((r) => [r.key, r.score / own]));
    return resultOrder(ranked, await rowsOf(ranked.map((r) => r.key)), query.limit).map((row) => ({ row, share: shares.get(row.pk)! }));
  }
}
