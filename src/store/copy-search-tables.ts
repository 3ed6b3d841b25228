// The search data `cairn admin copy` writes for the PostgreSQL engine: each
// searchable note's term vector in search_vectors, as the engine writes it per
// note (src/store/postgres/search.ts); replicas build their in-memory postings
// from those (docs/design.md, "Search"). Superseded notes get none, as on the
// engine itself.
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { copyInto, copyText, keysetPages } from "./copy-tables.ts";
import { noteVector } from "./postgres/search.ts";

/** Writes the vectors of every searchable note of the source (keyset pages, as the copy reads it), in the copy's transaction; answers the notes indexed. */
export async function writeSearchTables(tx: SQL, sqlite: Database, pageRows: number, onPage: (notes: number) => void): Promise<number> {
  let indexed = 0;
  for (const page of keysetPages(sqlite, "posts", ["pk"], ["pk", "title", "tags", "body", "superseded_by"], pageRows)) {
    const vectors: string[] = [];
    for (const row of page) {
      if (row.superseded_by !== null) continue;
      indexed++;
      vectors.push(`${Number(row.pk)}\t${copyText(noteVector(row.title as string, JSON.parse(row.tags as string) as string[], row.body as string))}\n`);
    }
    if (vectors.length > 0) await copyInto(tx, "search_vectors", ["pk", "vector"], [vectors.join("")]);
    onPage(page.length);
  }
  return indexed;
}
