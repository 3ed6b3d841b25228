// storeContract(engine): what every Store engine must do, through the Store
// interface alone (no SQL), on a real database of that engine. Looped over the
// engines by contract.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { searchRequest as searchPlan } from "../../src/core/search/query.ts";
import type { NewNote, NoteRecord, Store } from "../../src/store/types.ts";
import { freshTestDatabase, type Engine, type TestDatabase } from "../helpers/engines.ts";

let serial = 0;
const note = (contributorNo: number, fields: Partial<NewNote> = {}): NewNote => {
  serial += 1;
  return {
    id: crypto.randomUUID(),
    contributorNo,
    title: `Title ${serial}`,
    body: `Body number ${serial}.`,
    tags: [],
    createdAt: 1_700_000_000_000 + serial,
    ...fields,
  };
};
const never = () => false;
const isNote = (made: object): made is NoteRecord => "id" in made;
const digest = (n: number) => new Uint8Array(32).fill(n % 256);

export function storeContract(engine: Engine) {
  describe(`Store contract on ${engine}`, () => {
    let db: TestDatabase;
    let a: Store;
    let b: Store; // a second handle on the same database: another process, another replica
    let prefixes = 0;

    const contributor = async (store: Store = a, mail?: { kind: "welcome" }) => {
      prefixes += 1;
      const prefix = `p${engine}${prefixes}`;
      const made = await store.createContributor({ email: `c${prefixes}@example.org`, keyPrefix: prefix, keyDigest: digest(prefixes), createdAt: 1_700_000_000_000 }, mail);
      return { ...made, prefix };
    };

    beforeAll(async () => {
      db = await freshTestDatabase(engine);
      a = db.open();
      b = db.open();
      await Promise.all([a.migrate(), b.migrate()]);
    });

    afterAll(async () => {
      await a?.close();
      await b?.close();
      db?.cleanup();
    });

    test("migrations run twice and from two handles at once leave a ready store", async () => {
      await Promise.all([a.migrate(), b.migrate()]);
      await a.migrate();
      expect(await a.readiness()).toEqual({ ready: true });
      expect(await b.readiness()).toEqual({ ready: true });
      expect(a.engine).toBe(engine);
      // Each step ran once: a third handle finds the same, working schema.
      const c = db.open();
      await c.migrate();
      expect((await c.counts()).notes).toBeGreaterThanOrEqual(0);
      await c.close();
    });

    test("contributors: numbers never repeat; keys are found by prefix with their digest and standing", async () => {
      const one = await contributor();
      const two = await contributor(b);
      expect(two.contributorNo).toBeGreaterThan(one.contributorNo);
      const candidates = await b.keyCandidates(one.prefix);
      expect(candidates).toHaveLength(1);
      expect(candidates[0].contributorNo).toBe(one.contributorNo);
      expect([...candidates[0].keyDigest]).toEqual([...digest(prefixes - 1)]);
      expect(candidates[0].active).toBe(true);
      expect(await a.keyCandidates("no-such-prefix")).toEqual([]);
    });

    test("a revoke through one handle is seen by the other, and the key generation moves (or is NaN)", async () => {
      const one = await contributor();
      const before = b.keyGeneration();
      expect(await a.setActive(one.contributorNo, false)).toBe(true);
      const after = b.keyGeneration();
      expect(Number.isNaN(before) || Number.isNaN(after) || after !== before).toBe(true);
      expect((await b.keyCandidates(one.prefix))[0].active).toBe(false);
      expect(await b.setActive(one.contributorNo, true)).toBe(true);
      expect((await a.keyCandidates(one.prefix))[0].active).toBe(true);
      expect(await a.setActive(999_999, false)).toBe(false);
    });

    test("notes: created, read through the other handle, summarised, and the duplicate check sees the latest", async () => {
      const author = await contributor();
      const first = await a.createNote(note(author.contributorNo, { title: "First", tags: ["x", "y"] }), never);
      if (!isNote(first)) throw new Error("unexpected duplicate");
      expect(first).toMatchObject({ contributorNo: author.contributorNo, title: "First", tags: ["x", "y"], score: 0, commentCount: 0 });
      expect(await b.getNote(first.id)).toEqual(first);
      const seen: unknown[] = [];
      const second = await b.createNote(note(author.contributorNo, { title: "Second" }), (latest) => {
        seen.push(latest);
        return false;
      });
      expect(seen).toEqual([{ title: "First", body: first.body, tags: ["x", "y"] }]);
      expect(await a.createNote(note(author.contributorNo), () => true)).toEqual({ duplicateOf: (second as NoteRecord).id });
      const summary = await b.contributorSummary(author.contributorNo, 5);
      expect(summary?.postCount).toBe(2);
      expect(summary?.recentPosts.map((p) => p.title)).toEqual(["Second", "First"]);
      expect(summary?.recentPosts.map((p) => p.id)).toEqual([(second as NoteRecord).id, first.id]);
      expect(await a.contributorSummary(999_999, 5)).toBeNull();
      expect(await a.getNote(crypto.randomUUID())).toBeNull();
      expect(isNote(second)).toBe(true);
    });

    test("every character is kept as sent: NUL, U+E000, lone surrogates' replacements, emoji", async () => {
      const odd = "a\u0000b \uE000 \uE0000 \uE000\uE000 \u0000\u0000 é 🦘";
      const author = await contributor();
      const made = (await a.createNote(note(author.contributorNo, { title: `t ${odd}`, body: `b ${odd}` }), never)) as NoteRecord;
      expect(made.title).toBe(`t ${odd}`);
      const read = await b.getNote(made.id);
      expect([read?.title, read?.body]).toEqual([`t ${odd}`, `b ${odd}`]);
      const seen: string[] = [];
      await a.createNote(note(author.contributorNo), (latest) => (seen.push(latest.body), false));
      expect(seen).toEqual([`b ${odd}`]);
      await a.addComment(made.id, { contributorNo: author.contributorNo, body: odd, createdAt: 1 });
      expect((await b.listComments(made.id, 10))?.comments[0].body).toBe(odd);
      const mailed = await a.createContributor({ email: `x${odd}@example.org`, keyPrefix: "pnul", keyDigest: digest(1), createdAt: 1 });
      expect((await b.contributorList(`x${odd}@example.org`)).map((c) => c.contributorNo)).toEqual([mailed.contributorNo]);
    });

    // On SQLite one writer commits in arrival order, so insertion order is time
    // order; PostgreSQL's replicas commit concurrently, so it lists by time.
    test.skipIf(engine === "sqlite")("comments list by time, whatever order they were written in", async () => {
      const author = await contributor();
      const n = (await a.createNote(note(author.contributorNo), never)) as NoteRecord;
      // Two replicas may commit a later comment first.
      await a.addComment(n.id, { contributorNo: author.contributorNo, body: "later", createdAt: 20 });
      await b.addComment(n.id, { contributorNo: author.contributorNo, body: "earlier", createdAt: 10 });
      expect((await a.listComments(n.id, 10))?.comments.map((c) => c.body)).toEqual(["earlier", "later"]);
      expect((await a.listComments(n.id, 1))?.comments.map((c) => c.body)).toEqual(["later"]);
    });

    test("comments count up exactly and list in order; a missing note gives null", async () => {
      const author = await contributor();
      const reader = await contributor();
      const n = (await a.createNote(note(author.contributorNo), never)) as NoteRecord;
      const first = await a.addComment(n.id, { contributorNo: reader.contributorNo, body: "one", createdAt: 1 });
      const second = await b.addComment(n.id, { contributorNo: author.contributorNo, body: "two", createdAt: 2 });
      expect(first?.commentCount).toBe(1);
      expect(second?.commentCount).toBe(2);
      expect(await b.listComments(n.id, 100)).toEqual({
        comments: [
          { contributorNo: reader.contributorNo, body: "one", createdAt: 1 },
          { contributorNo: author.contributorNo, body: "two", createdAt: 2 },
        ],
        total: 2,
      });
      // Capped: the newest `limit`, oldest first, with the true total.
      expect(await a.listComments(n.id, 1)).toEqual({ comments: [{ contributorNo: author.contributorNo, body: "two", createdAt: 2 }], total: 2 });
      expect((await a.getNote(n.id))?.commentCount).toBe(2);
      expect(await a.addComment(crypto.randomUUID(), { contributorNo: reader.contributorNo, body: "x", createdAt: 3 })).toBeNull();
      expect(await a.listComments(crypto.randomUUID(), 100)).toBeNull();
    });

    test("votes: up, again, down, withdrawn; never on one's own note or a missing one", async () => {
      const author = await contributor();
      const voter = await contributor();
      const n = (await a.createNote(note(author.contributorNo), never)) as { id: string };
      expect(await a.setVote(n.id, voter.contributorNo, 1, 1)).toEqual({ kind: "ok", score: 1, value: 1 });
      expect(await b.setVote(n.id, voter.contributorNo, 1, 2)).toEqual({ kind: "ok", score: 1, value: 1 });
      expect(await b.setVote(n.id, voter.contributorNo, -1, 3)).toEqual({ kind: "ok", score: -1, value: -1 });
      expect(await a.setVote(n.id, voter.contributorNo, 0, 4)).toEqual({ kind: "ok", score: 0, value: 0 });
      expect(await a.setVote(n.id, author.contributorNo, 1, 5)).toEqual({ kind: "own_note" });
      expect(await a.setVote(crypto.randomUUID(), voter.contributorNo, 1, 6)).toEqual({ kind: "missing" });
      expect((await b.getNote(n.id))?.score).toBe(0);
    });

    test("delete: only the author; comments and votes go with the note", async () => {
      const author = await contributor();
      const other = await contributor();
      const n = (await a.createNote(note(author.contributorNo, { title: "Ephemeral zanzibar" }), never)) as { id: string };
      await a.addComment(n.id, { contributorNo: other.contributorNo, body: "c", createdAt: 1 });
      await a.setVote(n.id, other.contributorNo, 1, 1);
      const before = await a.counts();
      expect(await b.deleteNote(n.id, other.contributorNo)).toBe("not_author");
      expect(await b.deleteNote(n.id, author.contributorNo)).toBe("deleted");
      expect(await a.deleteNote(n.id, author.contributorNo)).toBe("missing");
      expect(await a.getNote(n.id)).toBeNull();
      expect(await a.listComments(n.id, 100)).toBeNull();
      const after = await b.counts();
      expect(after.notes).toBe(before.notes - 1);
      expect(after.comments).toBe(before.comments - 1);
      expect(after.votes).toBe(before.votes - 1);
      expect(await a.search(searchPlan("zanzibar", 10))).toEqual([]);
    });

    test("admin listing: contributors oldest first with their post counts, filtered by e-mail without case", async () => {
      const one = await contributor();
      await a.createNote(note(one.contributorNo), never);
      const all = await b.contributorList();
      expect(all.map((c) => c.contributorNo)).toEqual([...all.map((c) => c.contributorNo)].sort((p, q) => p - q));
      const listed = await b.contributorList(`C${prefixes}@Example.ORG`);
      expect(listed).toEqual([{ contributorNo: one.contributorNo, email: `c${prefixes}@example.org`, active: true, createdAt: 1_700_000_000_000, postCount: 1 }]);
      expect(await a.contributorList("nobody@example.org")).toEqual([]);
    });

    test("counts and web event counters", async () => {
      const before = await a.counts();
      const one = await contributor(b);
      await b.setActive(one.contributorNo, false);
      const after = await a.counts();
      expect(after.contributors).toBe(before.contributors + 1);
      expect(after.activeContributors).toBe(before.activeContributors);
      await Promise.all([a.countWebEvent("2026-11-23", "page_view", null), b.countWebEvent("2026-11-23", "page_view", null)]);
      const n = (await a.createNote(note(one.contributorNo), never)) as { id: string };
      await a.countWebEvent("2026-11-23", "page_view", n.id);
      const rows = await b.webEventCounts();
      expect(rows).toContainEqual({ day: "2026-11-23", event: "page_view", postId: null, count: 2 });
      expect(rows).toContainEqual({ day: "2026-11-23", event: "page_view", postId: n.id, count: 1 });
    });

    test("outbox: a claim is a lease; one row is never held by two senders; sent rows never come back", async () => {
      const start = await a.outboxCounts();
      const mailed = await Promise.all(Array.from({ length: 6 }, () => contributor(a, { kind: "welcome" })));
      const now = 1_800_000_000_000;
      // Two senders (two handles) claim at once: disjoint rows, every row once.
      // A claim takes at most its limit.
      const one = await a.claimDueMail(now, 1, 60_000);
      expect(one).toHaveLength(1);
      await a.markMailFailed(one[0].id, "put back", now);
      const [x, y] = await Promise.all([a.claimDueMail(now, 4, 60_000), b.claimDueMail(now, 4, 60_000)]);
      const ids = [...x, ...y].map((m) => m.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(6);
      expect(x.length).toBeLessThanOrEqual(4);
      expect(y.length).toBeLessThanOrEqual(4);
      expect([...x, ...y].every((m) => m.attempts === (m.id === one[0].id ? 2 : 1) && m.kind === "welcome")).toBe(true);
      expect(new Set([...x, ...y].map((m) => m.contributorNo))).toEqual(new Set(mailed.map((m) => m.contributorNo)));
      // Leased: nobody else gets them before the lease runs out.
      expect(await b.claimDueMail(now + 1000, 10, 60_000)).toEqual([]);
      const [sent, failed, givenUp, ...rest] = ids.sort((p, q) => p - q);
      await a.markMailSent(sent, now);
      await b.markMailFailed(failed, "421 try later", now + 120_000);
      await a.markMailGivenUp(givenUp, "550 no such user", now);
      // After the lease: the others are claimed again (second attempt); the failed one when due.
      const again = await b.claimDueMail(now + 61_000, 10, 600_000);
      expect(again.map((m) => m.id).sort((p, q) => p - q)).toEqual(rest);
      expect(again.every((m) => m.attempts === 2)).toBe(true);
      const later = await a.claimDueMail(now + 121_000, 10, 60_000);
      expect(later.map((m) => m.id)).toEqual([failed]);
      const counts = await b.outboxCounts();
      expect(counts.sent - start.sent).toBe(1);
      expect(counts.gaveUp - start.gaveUp).toBe(1);
      expect(counts.pending - start.pending).toBe(4);
    });

    test("search: finds by stem, title above body, deleted notes gone, limit kept, hostile words harmless", async () => {
      const author = await contributor();
      const inTitle = (await a.createNote(note(author.contributorNo, { title: "Quokka replicas in production", body: "Nothing else here." }), never)) as { id: string };
      const inBody = (await b.createNote(note(author.contributorNo, { title: "Other things", body: "One quokka and its replica run together with plenty of other words around them." }), never)) as { id: string };
      // Notes holding one of the two words, in bodies of ordinary length (with b 0.9 for the
      // body, a two-word body holding one word can outscore a long body holding both).
      for (let i = 0; i < 4; i++) await a.createNote(note(author.contributorNo, { title: `Filler wombat ${i}`, body: `A note that names the quokka once among other words, number ${i}.` }), never);
      const hits = await b.search(searchPlan("quokka replica", 10));
      expect(hits[0].id).toBe(inTitle.id);
      expect(hits[1].id).toBe(inBody.id);
      expect(hits.length).toBe(6);
      expect(hits[0]).toMatchObject({ title: "Quokka replicas in production", contributorNo: author.contributorNo });
      expect((await a.search(searchPlan("quokka", 2))).length).toBe(2);
      expect(await a.search(searchPlan("unseenwordxyz", 10))).toEqual([]);
      for (const hostile of [`"quokka`, "quokka*", "quokka OR", "NEAR(quokka", "'; DROP TABLE posts; --", "a:* & !b | (c", "\\ ' \" : * ^"]) {
        const plan = searchPlan(hostile, 10);
        if (plan.words.length === 0) continue;
        const found = await a.search(plan);
        expect(Array.isArray(found)).toBe(true);
      }
      expect((await a.search(searchPlan("'; DROP TABLE posts; -- quokka", 10))).length).toBeGreaterThan(0);
      await a.deleteNote(inTitle.id, author.contributorNo);
      expect((await b.search(searchPlan("quokka replica", 10))).map((n) => n.id)).not.toContain(inTitle.id);
    });

    test("concurrency: parallel votes through two handles give the exact score", async () => {
      const author = await contributor();
      const voters = await Promise.all(Array.from({ length: 24 }, (_, i) => contributor(i % 2 ? a : b)));
      const n = (await a.createNote(note(author.contributorNo), never)) as { id: string };
      const outcomes = await Promise.all(
        voters.flatMap((v, i) => [
          (i % 2 ? a : b).setVote(n.id, v.contributorNo, i < 20 ? 1 : -1, 1),
          (i % 2 ? b : a).setVote(n.id, v.contributorNo, i < 20 ? 1 : -1, 2), // the same vote again, at once
        ]),
      );
      expect(outcomes.every((o) => o.kind === "ok")).toBe(true);
      expect((await b.getNote(n.id))?.score).toBe(20 - 4);
      expect((await a.counts()).votes).toBeGreaterThanOrEqual(24);
    });

    test("concurrency: identical posts racing through two handles make one note", async () => {
      const author = await contributor();
      const same = { title: "Racing twins", body: "Exactly the same body.", tags: ["race"] };
      const isDuplicate = (latest: { title: string; body: string; tags: string[] }) =>
        latest.title === same.title && latest.body === same.body && latest.tags.join() === same.tags.join();
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).createNote(note(author.contributorNo, same), isDuplicate)),
      );
      expect(outcomes.filter(isNote)).toHaveLength(1);
      expect((await a.contributorSummary(author.contributorNo, 5))?.postCount).toBe(1);
    });
  });
}
