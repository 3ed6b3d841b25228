// Tag words in POST /v1/search (shared/API.md, "Extensions, round 3", "Tags
// in the query"): `tag:NAME` restricts to notes carrying the tag, several must
// all hold, tag words alone list the best-scored notes (net score, then
// newest), any other `:` is a plain word, and the request stays {"query"}.
// Looped over every engine, and on SQLite over both search paths.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type Engine, type RunningServer } from "../helpers/server.ts";
import { NO_BREAKERS, SEARCH_RESULT_KEYS, call, createNote, expectError, expectStatus, keysOf, register, unique, type Contributor } from "../helpers/api.ts";
import { testEngines } from "../helpers/engines.ts";

type Variant = { engine: Engine; name: string; env: Record<string, string> };
const variants: Variant[] = testEngines().flatMap((engine): Variant[] =>
  engine === "sqlite"
    ? [
        { engine, name: "sqlite", env: {} },
        { engine, name: "sqlite, FTS5 index alone (SEARCH_MEMORY_MB=0)", env: { SEARCH_MEMORY_MB: "0" } },
      ]
    : [{ engine, name: engine, env: {} }],
);

for (const variant of variants) describe(variant.name, () => {
  let server: RunningServer;
  let base: string;
  let author: Contributor;
  let voters: Contributor[];

  beforeAll(async () => {
    server = await startServer({ engine: variant.engine, env: { ...NO_BREAKERS, ...variant.env } });
    base = server.url;
    author = await register(base);
    voters = [await register(base), await register(base), await register(base)];
  });

  afterAll(async () => {
    await server?.stop();
  });

  const search = async (query: string) => {
    const res = await call(base, "POST", "/v1/search", { key: voters[0].key, json: { query } });
    expectStatus(res, 200);
    return res.data.results as { id: string; score: number }[];
  };
  const ids = async (query: string) => (await search(query)).map((r) => r.id);
  const note = (fields: { title?: string; body?: string; tags?: string[] }) => createNote(base, author.key, fields);
  const vote = async (id: string, value: "up" | "down" | "none", voter = 0) =>
    expectStatus(await call(base, "POST", `/v1/posts/${id}/vote`, { key: voters[voter].key, json: { vote: value } }), 200);

  test("`tag:NAME` restricts the results to notes carrying that tag", async () => {
    const word = unique("w");
    const tag = unique("t");
    const tagged = await note({ title: `Tagged ${word}`, tags: [tag, "other"] });
    const untagged = await note({ title: `Untagged ${word} ${word}` });
    expect((await ids(word)).sort()).toEqual([tagged.id, untagged.id].sort());
    expect(await ids(`${word} tag:${tag}`)).toEqual([tagged.id]);
    expect(await ids(`tag:${tag} ${word}`)).toEqual([tagged.id]);
  });

  test("NAME in any case (and `tag:` in any case) names the same tag", async () => {
    const word = unique("w");
    const tag = unique("t");
    const tagged = await note({ title: `Cased ${word}`, tags: [tag] });
    await note({ title: `Cased ${word} too` });
    for (const query of [`${word} tag:${tag.toUpperCase()}`, `${word} TAG:${tag}`, `${word} Tag:${tag[0].toUpperCase()}${tag.slice(1)}`]) {
      expect(await ids(query)).toEqual([tagged.id]);
    }
  });

  test("tags with the pattern's punctuation work: c++, node.js, c#", async () => {
    const word = unique("w");
    const cpp = await note({ title: `Punct ${word}`, tags: ["c++", "node.js"] });
    const sharp = await note({ title: `Punct ${word} sharp`, tags: ["c#"] });
    expect(await ids(`${word} tag:c++`)).toEqual([cpp.id]);
    expect(await ids(`${word} tag:node.js tag:C++`)).toEqual([cpp.id]);
    expect(await ids(`${word} tag:c#`)).toEqual([sharp.id]);
  });

  test("several tag words must all hold", async () => {
    const word = unique("w");
    const [a, b] = [unique("a"), unique("b")];
    const both = await note({ title: `Both ${word}`, tags: [a, b] });
    const onlyA = await note({ title: `Only a ${word}`, tags: [a] });
    const onlyB = await note({ title: `Only b ${word}`, tags: [b] });
    expect(await ids(`${word} tag:${a} tag:${b}`)).toEqual([both.id]);
    expect((await ids(`${word} tag:${a}`)).sort()).toEqual([both.id, onlyA.id].sort());
    expect((await ids(`tag:${b}`)).sort()).toEqual([both.id, onlyB.id].sort());
    expect(await ids(`tag:${a} tag:${b}`)).toEqual([both.id]);
    expect(await ids(`tag:${a} tag:${b} tag:${unique("none")}`)).toEqual([]);
  });

  test("ranking among the tagged notes is the search's: the title match first, whatever the order of writing", async () => {
    const word = unique("w");
    const tag = unique("t");
    const inBody = await note({ title: "Something else", body: `Mentions ${word} once among many other words here.`, tags: [tag] });
    const inTitle = await note({ title: `${word} guide`, body: "All about it.", tags: [tag] });
    await note({ title: `${word} ${word} untagged`, body: `${word}` });
    expect(await ids(`${word} tag:${tag}`)).toEqual([inTitle.id, inBody.id]);
  });

  test("tag words alone: the notes carrying the tags, best net score first, then newest", async () => {
    const tag = unique("t");
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await note({ title: `Listed ${i} ${unique()}`, tags: [tag] }));
    // Scores: made[1] +3, made[3] +1, made[4] -1, the others 0 (made[2] newer than made[0]).
    for (const voter of [0, 1, 2]) await vote(made[1].id, "up", voter);
    await vote(made[3].id, "up");
    await vote(made[4].id, "down");
    const results = await search(`tag:${tag}`);
    expect(results.map((r) => r.id)).toEqual([made[1].id, made[3].id, made[2].id, made[0].id, made[4].id]);
    expect(results.map((r) => r.score)).toEqual([3, 1, 0, 0, -1]);
    expect(keysOf(results[0])).toEqual(SEARCH_RESULT_KEYS);
    // A vote moves a note in that order at once.
    await vote(made[4].id, "up");
    await vote(made[4].id, "up", 1);
    await vote(made[4].id, "up", 2);
    await vote(made[4].id, "up", 0);
    expect((await ids(`tag:${tag}`))[0]).toBe(made[4].id);
    await vote(made[1].id, "none", 0);
    expect((await search(`tag:${tag}`)).map((r) => r.score)).toEqual([3, 2, 1, 0, 0]);
  });

  test("tag words alone: at most the server's result count (10), and the text of a tag is not searched as a word", async () => {
    const tag = unique("t");
    for (let i = 0; i < 12; i++) await note({ title: `Many ${i} ${unique()}`, tags: [tag] });
    const wordOnly = await note({ title: `Mentions ${tag} in its title` });
    const results = await ids(`tag:${tag}`);
    expect(results).toHaveLength(10);
    expect(results).not.toContain(wordOnly.id);
    // The plain word still finds its text (and the tagged notes: tags are searched as words too).
    expect(await ids(tag)).toContain(wordOnly.id);
  });

  test("more than 8 distinct tag words (a note carries at most 8) match nothing", async () => {
    const tags = Array.from({ length: 8 }, () => unique("t"));
    const full = await note({ title: `Eight tags ${unique()}`, tags });
    expect(await ids(tags.map((tag) => `tag:${tag}`).join(" "))).toEqual([full.id]);
    expect(await ids([...tags, unique("ninth")].map((tag) => `tag:${tag}`).join(" "))).toEqual([]);
  });

  test("a tag no note carries: 200 with no results", async () => {
    expect(await ids(`tag:${unique("none")}`)).toEqual([]);
    expect(await ids(`${unique("w")} tag:${unique("none")}`)).toEqual([]);
  });

  test("any other use of `:` is a plain word: title:x, tag: alone, an invalid NAME, a glued prefix", async () => {
    const word = unique("w");
    const plain = await note({ title: `Colon ${word}`, body: "The word tag appears here, and title too." });
    expect((await ids(`title:${word}`))[0]).toBe(plain.id);
    expect(await ids(`${word}:${word}`)).toEqual([plain.id]);
    // Not valid tags: searched as the words "tag" and the name.
    expect(await ids(`tag:-${word}`)).toContain(plain.id);
    expect(await ids(`tag:${word}/x`)).toContain(plain.id);
    expect(await ids(`xtag:${word}`)).toContain(plain.id);
    expect(await ids(`(tag:${word})`)).toContain(plain.id);
    expect(await ids(`tag: ${word}`)).toContain(plain.id);
  });

  test("the request stays exactly {query}: any other field (tags included) is 400", async () => {
    const res = await call(base, "POST", "/v1/search", { key: voters[0].key, json: { query: "tag:x", tags: ["x"] } });
    expect(expectError(res, 400, "invalid_request")).toContain("only a `query`");
  });

  test("superseded notes are never listed, by tag words alone or with words; deleting the newer note lists the older again", async () => {
    const word = unique("w");
    const tag = unique("t");
    const older = await note({ title: `Older ${word}`, tags: [tag] });
    await vote(older.id, "up");
    const res = await call(base, "POST", "/v1/posts", { key: author.key, json: { title: `Newer ${word}`, body: "b", tags: [tag], supersedes: older.id } });
    expectStatus(res, 201);
    const newer = res.data;
    expect(await ids(`tag:${tag}`)).toEqual([newer.id]);
    expect(await ids(`${word} tag:${tag}`)).toEqual([newer.id]);
    // A vote on the superseded note does not bring it back.
    await vote(older.id, "none");
    await vote(older.id, "up", 1);
    expect(await ids(`tag:${tag}`)).toEqual([newer.id]);
    expectStatus(await call(base, "DELETE", `/v1/posts/${newer.id}`, { key: author.key }), 200);
    const back = await search(`tag:${tag}`);
    expect(back.map((r) => r.id)).toEqual([older.id]);
    expect(back[0].score).toBe(1);
    expect(await ids(`${word} tag:${tag}`)).toEqual([older.id]);
  });

  test("the OpenAPI document's query field describes tag words", async () => {
    const doc = (await call(base, "GET", "/v1/openapi.json")).data;
    const query = doc.paths["/v1/search"].post.requestBody.content["application/json"].schema.properties.query;
    expect(query.description).toContain("tag:NAME");
  });

  test("a deleted note is no longer listed by its tag", async () => {
    const tag = unique("t");
    const kept = await note({ title: `Kept ${unique()}`, tags: [tag] });
    const gone = await note({ title: `Gone ${unique()}`, tags: [tag] });
    expectStatus(await call(base, "DELETE", `/v1/posts/${gone.id}`, { key: author.key }), 200);
    expect(await ids(`tag:${tag}`)).toEqual([kept.id]);
  });
});
