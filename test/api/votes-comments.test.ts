// Votes and comments: score arithmetic, flips, withdrawals, own-note refusal,
// comment limits and counts, cascade on delete, and concurrency.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../helpers/server.ts";
import {
  NEVER_SEEN_ID,
  NO_BREAKERS,
  TIMESTAMP,
  call,
  codePoints,
  createNote,
  expectError,
  expectStatus,
  keysOf,
  register,
  stats,
  type Contributor,
} from "../helpers/api.ts";
import { forEachEngine } from "../helpers/engines.ts";

forEachEngine((engine) => {

  let server: RunningServer;
  let base: string;
  let author: Contributor;
  let b: Contributor;
  let c: Contributor;
  let d: Contributor;

  beforeAll(async () => {
    server = await startServer({ engine, env: NO_BREAKERS });
    base = server.url;
    [author, b, c, d] = [await register(base), await register(base), await register(base), await register(base)];
  });

  afterAll(async () => {
    await server?.stop();
  });

  const vote = (who: Contributor, id: string, value: unknown) =>
    call(base, "POST", `/v1/posts/${id}/vote`, { key: who.key, json: { vote: value } });
  const comment = (who: Contributor, id: string, body: unknown) =>
    call(base, "POST", `/v1/posts/${id}/comments`, { key: who.key, json: { body } });
  const getNote = async (id: string) => (await call(base, "GET", `/v1/posts/${id}`, { key: b.key })).data;

  describe("POST /v1/posts/{id}/vote", () => {
    test("up, down, none with three voters: the fresh score every time", async () => {
      const note = await createNote(base, author.key);
      const steps: [Contributor, string, string, number][] = [
        // voter, vote, expected your_vote, expected score
        [b, "up", "up", 1],
        [c, "up", "up", 2],
        [d, "down", "down", 1],
        [b, "down", "down", -1], // flip: 1 - 2
        [b, "none", "none", 0], // withdraw
        [b, "up", "up", 1],
        [c, "down", "down", -1], // flip: -2
        [d, "up", "up", 1], // flip: +2
        [c, "none", "none", 2],
        [d, "none", "none", 1],
        [b, "none", "none", 0],
      ];
      for (const [who, value, yours, score] of steps) {
        const res = await vote(who, note.id, value);
        expectStatus(res, 200);
        expect(keysOf(res.data)).toEqual(["post_id", "score", "your_vote"]);
        expect(res.data).toEqual({ post_id: note.id, your_vote: yours, score });
        expect((await getNote(note.id)).score).toBe(score);
      }
    });

    test("the same value twice changes nothing", async () => {
      const note = await createNote(base, author.key);
      expect((await vote(b, note.id, "up")).data).toEqual({ post_id: note.id, your_vote: "up", score: 1 });
      expect((await vote(b, note.id, "up")).data).toEqual({ post_id: note.id, your_vote: "up", score: 1 });
      expect((await vote(c, note.id, "down")).data).toEqual({ post_id: note.id, your_vote: "down", score: 0 });
      expect((await vote(c, note.id, "down")).data).toEqual({ post_id: note.id, your_vote: "down", score: 0 });
      expect((await vote(d, note.id, "none")).data).toEqual({ post_id: note.id, your_vote: "none", score: 0 });
      expect((await vote(d, note.id, "none")).data).toEqual({ post_id: note.id, your_vote: "none", score: 0 });
      expect((await getNote(note.id)).score).toBe(0);
      // Exactly two vote rows exist for this note (none is no row).
      const before = await stats(server);
      expectStatus(await call(base, "DELETE", `/v1/posts/${note.id}`, { key: author.key }), 200);
      const after = await stats(server);
      expect(before.votes - after.votes).toBe(2);
    });

    test("voting on one's own note is 403 forbidden and changes nothing", async () => {
      const note = await createNote(base, author.key);
      await vote(b, note.id, "up");
      for (const value of ["up", "down", "none"]) {
        const message = expectError(await vote(author, note.id, value), 403, "forbidden");
        expect(message.toLowerCase()).toContain("own note");
      }
      expect((await getNote(note.id)).score).toBe(1);
    });

    test("an invalid vote value is 400 naming the field", async () => {
      const note = await createNote(base, author.key);
      for (const value of ["sideways", "UP", "Up", "", "1", 1, -1, 0, true, null, ["up"], { up: true }]) {
        const message = expectError(await vote(b, note.id, value), 400, "invalid_request");
        expect(message).toContain("vote");
      }
      expect(expectError(await call(base, "POST", `/v1/posts/${note.id}/vote`, { key: b.key, json: {} }), 400, "invalid_request")).toContain("vote");
      expect((await getNote(note.id)).score).toBe(0);
    });

    test("unknown request fields are ignored", async () => {
      const note = await createNote(base, author.key);
      const res = await call(base, "POST", `/v1/posts/${note.id}/vote`, { key: b.key, json: { vote: "up", weight: 10, reason: "x" } });
      expectStatus(res, 200);
      expect(res.data).toEqual({ post_id: note.id, your_vote: "up", score: 1 });
    });

    test("an unknown note is 404; a malformed id is 400", async () => {
      expectError(await vote(b, NEVER_SEEN_ID, "up"), 404, "not_found");
      expectError(await vote(b, "nope", "up"), 400, "invalid_request");
    });
  });

  describe("comments", () => {
    test("POST returns exactly the comment with the note's fresh comment_count; GET lists oldest first", async () => {
      const note = await createNote(base, author.key);
      const bodies = ["First!", "Second, from c.", "Third, by the author."];
      const who = [b, c, author];
      const created = [];
      for (let i = 0; i < 3; i++) {
        const res = await comment(who[i], note.id, bodies[i]);
        expectStatus(res, 201);
        expect(keysOf(res.data)).toEqual(["body", "comment_count", "contributor_no", "created_at", "post_id"]);
        expect(res.data.post_id).toBe(note.id);
        expect(res.data.contributor_no).toBe(who[i].no);
        expect(res.data.body).toBe(bodies[i]);
        expect(res.data.created_at).toMatch(TIMESTAMP);
        expect(res.data.comment_count).toBe(i + 1);
        expect((await getNote(note.id)).comment_count).toBe(i + 1);
        created.push(res.data);
      }
      const list = await call(base, "GET", `/v1/posts/${note.id}/comments`, { key: d.key });
      expectStatus(list, 200);
      expect(keysOf(list.data)).toEqual(["comments", "count", "post_id"]);
      expect(list.data.post_id).toBe(note.id);
      expect(list.data.count).toBe(3);
      expect(list.data.comments).toEqual(
        created.map((x) => ({ contributor_no: x.contributor_no, body: x.body, created_at: x.created_at })),
      );
      for (const item of list.data.comments) expect(keysOf(item)).toEqual(["body", "contributor_no", "created_at"]);
    });

    test("a note without comments lists none", async () => {
      const note = await createNote(base, author.key);
      const list = await call(base, "GET", `/v1/posts/${note.id}/comments`, { key: b.key });
      expectStatus(list, 200);
      expect(list.data).toEqual({ post_id: note.id, count: 0, comments: [] });
    });

    test("comment body: trimmed; empty or whitespace-only is 400", async () => {
      const note = await createNote(base, author.key);
      const res = await comment(b, note.id, "   padded comment \n ");
      expectStatus(res, 201);
      expect(res.data.body).toBe("padded comment");
      expect(expectError(await comment(b, note.id, ""), 400, "invalid_request")).toContain("body");
      expect(expectError(await comment(b, note.id, " \n\t "), 400, "invalid_request")).toContain("body");
      expect(expectError(await comment(b, note.id, 5), 400, "invalid_request")).toContain("body");
      expect(expectError(await comment(b, note.id, null), 400, "invalid_request")).toContain("body");
      expect(expectError(await call(base, "POST", `/v1/posts/${note.id}/comments`, { key: b.key, json: {} }), 400, "invalid_request")).toContain("body");
      expect((await getNote(note.id)).comment_count).toBe(1);
    });

    test("comment body: 1 and 5,000 characters accepted, 5,001 refused", async () => {
      const note = await createNote(base, author.key);
      expectStatus(await comment(b, note.id, "k"), 201);
      const at5000 = "c".repeat(5000);
      const ok = await comment(b, note.id, at5000);
      expectStatus(ok, 201);
      expect(ok.data.body).toBe(at5000);
      const message = expectError(await comment(b, note.id, at5000 + "c"), 400, "invalid_request");
      expect(message).toContain("body");
      expect(message).toContain("5000");
      // After trimming: 5,000 plus padding is fine.
      expectStatus(await comment(b, note.id, `   ${at5000}\n\n`), 201);
      expect((await getNote(note.id)).comment_count).toBe(3);
    });

    test("comment body: characters are code points (5,000 emoji accepted, 5,001 refused)", async () => {
      const note = await createNote(base, author.key);
      const at5000 = "🌲".repeat(5000);
      expect(codePoints(at5000)).toBe(5000);
      const ok = await comment(b, note.id, at5000);
      expectStatus(ok, 201);
      expect(ok.data.body).toBe(at5000);
      expectError(await comment(b, note.id, at5000 + "🌲"), 400, "invalid_request");
    });

    test("unknown request fields are ignored", async () => {
      const note = await createNote(base, author.key);
      const res = await call(base, "POST", `/v1/posts/${note.id}/comments`, {
        key: b.key,
        json: { body: "hello", reply_to: 3, format: "markdown" },
      });
      expectStatus(res, 201);
      expect(res.data.body).toBe("hello");
      expect(res.text).not.toContain("markdown");
    });

    test("unknown note 404, malformed id 400", async () => {
      expectError(await comment(b, NEVER_SEEN_ID, "hi"), 404, "not_found");
      expectError(await call(base, "GET", `/v1/posts/${NEVER_SEEN_ID}/comments`, { key: b.key }), 404, "not_found");
      expectError(await comment(b, "123", "hi"), 400, "invalid_request");
      expectError(await call(base, "GET", "/v1/posts/123/comments", { key: b.key }), 400, "invalid_request");
    });
  });

  describe("hard delete takes comments and votes with it", () => {
    test("admin stats counts drop by exactly the note's comments and votes", async () => {
      const note = await createNote(base, author.key);
      const other = await createNote(base, author.key);
      const s0 = await stats(server);
      await comment(b, note.id, "one");
      await comment(c, note.id, "two");
      await comment(author, note.id, "three");
      await vote(b, note.id, "up");
      await vote(c, note.id, "down");
      // Activity on another note must survive.
      await comment(d, other.id, "stays");
      await vote(d, other.id, "up");
      const s1 = await stats(server);
      expect(s1.notes).toBe(s0.notes);
      expect(s1.comments - s0.comments).toBe(4);
      expect(s1.votes - s0.votes).toBe(3);

      expectStatus(await call(base, "DELETE", `/v1/posts/${note.id}`, { key: author.key }), 200);
      const s2 = await stats(server);
      expect(s1.notes - s2.notes).toBe(1);
      expect(s1.comments - s2.comments).toBe(3);
      expect(s1.votes - s2.votes).toBe(2);
      expect(keysOf(s2)).toEqual(expect.arrayContaining(["notes", "comments", "votes"]));

      const kept = await getNote(other.id);
      expect(kept.comment_count).toBe(1);
      expect(kept.score).toBe(1);
      expectError(await call(base, "GET", `/v1/posts/${note.id}/comments`, { key: b.key }), 404, "not_found");
    });
  });

  describe("concurrency", () => {
    let crowd: Contributor[];

    beforeAll(async () => {
      crowd = [];
      for (let i = 0; i < 50; i++) crowd.push(await register(base));
    });

    test("50 concurrent up-votes from distinct voters: score 50, each answer a distinct fresh score", async () => {
      const note = await createNote(base, author.key);
      const answers = await Promise.all(crowd.map((who) => vote(who, note.id, "up")));
      for (const res of answers) expectStatus(res, 200);
      expect(answers.map((res) => res.data.score).sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      expect((await getNote(note.id)).score).toBe(50);

      // All 50 flip to down at once: -50.
      const flipped = await Promise.all(crowd.map((who) => vote(who, note.id, "down")));
      for (const res of flipped) expect(res.data.your_vote).toBe("down");
      expect((await getNote(note.id)).score).toBe(-50);

      // Half withdraw, half flip back up, all at once: 25 up, 25 none = 25.
      const mixed = await Promise.all(crowd.map((who, i) => vote(who, note.id, i % 2 === 0 ? "up" : "none")));
      for (const res of mixed) expectStatus(res, 200);
      expect((await getNote(note.id)).score).toBe(25);
    });

    test("50 concurrent comments: comment_count 50, each answer a distinct fresh count", async () => {
      const note = await createNote(base, author.key);
      const answers = await Promise.all(crowd.map((who, i) => comment(who, note.id, `comment number ${i}`)));
      for (const res of answers) expectStatus(res, 201);
      expect(answers.map((res) => res.data.comment_count).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 50 }, (_, i) => i + 1),
      );
      expect((await getNote(note.id)).comment_count).toBe(50);
      const list = await call(base, "GET", `/v1/posts/${note.id}/comments`, { key: b.key });
      expect(list.data.count).toBe(50);
      expect(list.data.comments.length).toBe(50);
      expect(new Set(list.data.comments.map((x: any) => x.body)).size).toBe(50);
      // Oldest first: created_at never decreases.
      const times = list.data.comments.map((x: any) => x.created_at);
      expect([...times].sort()).toEqual(times);
    });

    test("50 concurrent votes by one voter end in one vote row", async () => {
      const note = await createNote(base, author.key);
      const before = await stats(server);
      const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => vote(b, note.id, i % 2 === 0 ? "up" : "down")));
      for (const res of answers) expectStatus(res, 200);
      const after = await stats(server);
      expect(after.votes - before.votes).toBe(1);
      expect([1, -1]).toContain((await getNote(note.id)).score);
    });
  });
});
