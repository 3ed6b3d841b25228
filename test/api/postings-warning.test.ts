// A server says once when its in-memory postings stop serving after they had
// (docs/operations.md, "Logs"): here they outgrow SEARCH_MEMORY_MB as notes
// of many distinct words arrive. Search keeps answering, from the engine's
// own index. Looped over both engines.
import { expect, test } from "bun:test";
import { call, createNote, register } from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";
import { startServer } from "../helpers/server.ts";

const WARNING = "search stays on the database index";

forEachEngine((engine) => {
  test("postings that outgrow SEARCH_MEMORY_MB: one warning with the reason, and search still answers", async () => {
    const server = await startServer({ engine, env: { SEARCH_MEMORY_MB: "1", POSTS_PER_HOUR: "0", SEARCHES_PER_HOUR: "0", SIMILAR_NOTES: "0" } });
    try {
      const author = await register(server.url);
      const search = async (query: string) => {
        const res = await call(server.url, "POST", "/v1/search", { key: author.key, json: { query } });
        expect(res.status).toBe(200);
        return (res.data.results as { title: string }[]).map((note) => note.title);
      };
      await createNote(server.url, author.key, { title: "Cairn of stones", body: "a small cairn" });
      expect(await search("cairn")).toEqual(["Cairn of stones"]);
      // The server checks every second: let it see the postings serving first.
      await Bun.sleep(1_500);
      expect(server.logs()).not.toContain(WARNING);
      // ~9,000 distinct terms: over 1 MB by the postings' own count.
      for (let i = 0; i < 6; i++) {
        const body = Array.from({ length: 1_500 }, (_, j) => `w${i}x${j}`).join(" ");
        await createNote(server.url, author.key, { title: `Word list ${i}`, body });
      }
      expect(await search("w5x1499")).toEqual(["Word list 5"]);
      expect(await search("cairn")).toEqual(["Cairn of stones"]);
      const deadline = Date.now() + 5_000;
      while (!server.logs().includes(WARNING) && Date.now() < deadline) await Bun.sleep(50);
      const lines = server.logs().split("\n").filter((line) => line.includes(WARNING));
      expect(lines.length).toBe(1);
      expect(lines[0]).toMatch(/over SEARCH_MEMORY_MB/);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
