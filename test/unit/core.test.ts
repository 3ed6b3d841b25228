import { describe, expect, test } from "bun:test";
import { defaultSearchMemoryMb, loadConfig } from "../../src/config.ts";
import { Breakers } from "../../src/core/breakers.ts";
import { AppError } from "../../src/core/errors.ts";
import { uuidv7 } from "../../src/core/ids.ts";
import { bearerToken, digestKey, digestsEqual, keyPrefix, looksLikeKey, mintKey } from "../../src/core/keys.ts";
import { normaliseComment, normaliseEmail, normaliseNote, normaliseQuery, normaliseTags, parseNoteId } from "../../src/core/limits.ts";
import { queryWords, searchRequest } from "../../src/core/search/query.ts";
import { codePointLength, snip } from "../../src/core/text.ts";
import { voteDirection, voteValue } from "../../src/core/votes.ts";

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as AppError).code;
  }
  return "ok";
};

describe("keys", () => {
  test("minted keys have the marker, 43 base62 characters, prefix and digest", () => {
    const minted = mintKey();
    expect(minted.key).toMatch(/^cairn_[0-9A-Za-z]{43}$/);
    expect(minted.prefix).toBe(minted.key.slice(0, 12));
    expect(keyPrefix(minted.key)).toBe(minted.prefix);
    expect(Buffer.from(minted.digest).toString("hex")).toBe(new Bun.CryptoHasher("sha256").update(minted.key).digest("hex"));
    expect(looksLikeKey(minted.key)).toBe(true);
  });

  test("keys do not repeat and use the whole alphabet", () => {
    const keys = new Set(Array.from({ length: 2000 }, () => mintKey().key));
    expect(keys.size).toBe(2000);
    const chars = new Set([...keys].flatMap((key) => [...key.slice(6)]));
    expect(chars.size).toBe(62);
  });

  test("digest comparison", () => {
    const a = digestKey("cairn_a");
    expect(digestsEqual(a, digestKey("cairn_a"))).toBe(true);
    expect(digestsEqual(a, digestKey("cairn_b"))).toBe(false);
    expect(digestsEqual(a, new Uint8Array(3))).toBe(false);
  });

  test("bearer parsing and key shape", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("bearer   abc ")).toBe("abc");
    expect(bearerToken("Basic abc")).toBeNull();
    expect(bearerToken("Bearer a b")).toBeNull();
    expect(bearerToken(undefined)).toBeNull();
    expect(looksLikeKey("cairn_short")).toBe(false);
    expect(looksLikeKey("other_" + "a".repeat(43))).toBe(false);
  });
});

describe("limits", () => {
  test("email", () => {
    expect(normaliseEmail("  a@b ")).toBe("a@b");
    expect(code(() => normaliseEmail("ab"))).toBe("invalid_request");
    expect(code(() => normaliseEmail("abc"))).toBe("invalid_request"); // no @
    expect(code(() => normaliseEmail("a".repeat(250) + "@b.cd"))).toBe("invalid_request");
    expect(normaliseEmail("a".repeat(249) + "@b.cd")).toHaveLength(254);
  });

  test("title and body are trimmed and bounded in code points", () => {
    expect(normaliseNote({ title: "  t  ", body: " b " })).toEqual({ title: "t", body: "b", tags: [] });
    expect(code(() => normaliseNote({ title: "   ", body: "b" }))).toBe("invalid_request");
    expect(normaliseNote({ title: "😀".repeat(200), body: "b" }).title).toHaveLength(400);
    expect(code(() => normaliseNote({ title: "😀".repeat(201), body: "b" }))).toBe("invalid_request");
    expect(code(() => normaliseNote({ title: "t", body: "x".repeat(20_001) }))).toBe("invalid_request");
    expect(normaliseNote({ title: "t", body: "x".repeat(20_000) }).body).toHaveLength(20_000);
  });

  test("tags: lower-cased, deduplicated in order, pattern, count and length", () => {
    expect(normaliseTags(["Go", "c++", "go", "C#", "a.b_c-d"])).toEqual(["go", "c++", "c#", "a.b_c-d"]);
    expect(code(() => normaliseTags(["-x"]))).toBe("invalid_request");
    expect(code(() => normaliseTags(["a b"]))).toBe("invalid_request");
    expect(code(() => normaliseTags([""]))).toBe("invalid_request");
    expect(normaliseTags(["a".repeat(32)])).toHaveLength(1);
    expect(code(() => normaliseTags(["a".repeat(33)]))).toBe("invalid_request");
    expect(normaliseTags(["a", "b", "c", "d", "e", "f", "g", "h", "A"])).toHaveLength(8);
    expect(code(() => normaliseTags(["a", "b", "c", "d", "e", "f", "g", "h", "i"]))).toBe("invalid_request");
  });

  test("comment and query", () => {
    expect(normaliseComment(" hi ")).toBe("hi");
    expect(code(() => normaliseComment("x".repeat(5001)))).toBe("invalid_request");
    expect(code(() => normaliseQuery(" "))).toBe("invalid_request");
    expect(code(() => normaliseQuery("q".repeat(501)))).toBe("invalid_request");
  });

  test("note ids", () => {
    const id = uuidv7();
    expect(parseNoteId(id.toUpperCase())).toBe(id);
    expect(code(() => parseNoteId("nope"))).toBe("invalid_request");
  });
});

describe("uuid v7", () => {
  test("version, variant and order", () => {
    const ids = Array.from({ length: 5000 }, () => uuidv7());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("text", () => {
  test("code points", () => {
    expect(codePointLength("a😀b")).toBe(3);
  });

  test("snip cuts at a word boundary within the budget", () => {
    expect(snip("short body", 400)).toEqual({ text: "short body", truncated: false });
    const long = "word ".repeat(200);
    const cut = snip(long, 400);
    expect(cut.truncated).toBe(true);
    expect(codePointLength(cut.text)).toBeLessThanOrEqual(400);
    expect(cut.text.endsWith("word")).toBe(true);
    expect(snip("abc defgh", 6)).toEqual({ text: "abc", truncated: true });
    expect(snip("abcdef ghi", 6)).toEqual({ text: "abcdef", truncated: true });
    expect(snip("x".repeat(500), 400).text).toHaveLength(400);
    const emoji = snip("😀".repeat(500), 400).text;
    expect(codePointLength(emoji)).toBe(400);
    expect(emoji).toBe("😀".repeat(400));
  });

  test("snip: beside a Chinese or Japanese character is a word boundary, so an early space does not empty the snip", () => {
    // Cut back to the last space, these gave "注意:" and "ERROR 2024-05-01" of a 400-character budget.
    const chinese = "注意: " + "这是一个很长的中文段落".repeat(60);
    expect(snip(chinese, 400)).toEqual({ text: chinese.slice(0, 400), truncated: true });
    const japanese = "ERROR 2024-05-01 " + "データベースの接続".repeat(60);
    expect(snip(japanese, 400)).toEqual({ text: japanese.slice(0, 400), truncated: true });
    // An identifier glued to CJK text is cut before it, not inside it; a space still wins when it is later.
    expect(snip("日本語useMemo", 6)).toEqual({ text: "日本語", truncated: true });
    expect(snip("日本語 abc defgh", 10)).toEqual({ text: "日本語 abc", truncated: true });
    // Characters outside the BMP (CJK Extension B) are never split.
    expect(snip("ab " + "𠀀".repeat(500), 400)).toEqual({ text: "ab " + "𠀀".repeat(397), truncated: true });
  });
});

describe("search syntax", () => {
  test("operators become quoted words", () => {
    expect(queryWords('deadlock AND "wal" NEAR(x) *:-')).toEqual(["deadlock", "and", "wal", "near", "x"]);
    expect(searchRequest('say "hi" AND', 10).words).toEqual(["say", "hi", "and"]);
    expect(searchRequest("***", 10).words).toEqual([]);
    expect(searchRequest("AND", 10).words).toEqual(["and"]);
  });
});

describe("votes", () => {
  test("directions map to values and back", () => {
    for (const direction of ["up", "down", "none"] as const) expect(voteDirection(voteValue(direction))).toBe(direction);
  });
});

describe("breakers", () => {
  test("trip past the limit with seconds to the next hour, then reset", () => {
    let now = Date.UTC(2026, 10, 22, 10, 59, 0);
    const breakers = new Breakers({ posts: 2, comments: 0, votes: 1, searches: 1, registrations: 1, webEvents: 1 }, () => now);
    breakers.hit("posts", 1);
    breakers.hit("posts", 1);
    breakers.hit("posts", 2);
    let error: AppError | undefined;
    try {
      breakers.hit("posts", 1);
    } catch (e) {
      error = e as AppError;
    }
    expect(error?.code).toBe("rate_limited");
    expect(error?.retryAfter).toBe(60);
    expect(breakers.tripped("posts", 1)).toBe(true);
    for (let i = 0; i < 1000; i++) breakers.hit("comments", 1); // 0 = off
    now += 60_000;
    breakers.hit("posts", 1);
    expect(breakers.tripped("posts", 1)).toBe(false);
  });

  test("the message and resetsAt name the hour's end exactly, not now plus whole seconds", () => {
    const now = Date.UTC(2026, 10, 22, 10, 15, 0) + 351;
    const breakers = new Breakers({ posts: 1, comments: 0, votes: 1, searches: 1, registrations: 1, webEvents: 1 }, () => now);
    breakers.hit("posts", 1);
    let error: AppError | undefined;
    try {
      breakers.hit("posts", 1);
    } catch (e) {
      error = e as AppError;
    }
    expect(error?.retryAfter).toBe(2700);
    expect(error?.message).toContain("(at 2026-11-22T11:00:00.000Z)");
    expect(breakers.resetsAt().toISOString()).toBe("2026-11-22T11:00:00.000Z");
  });
});

describe("search memory budget", () => {
  test("SEARCH_MEMORY_MB defaults to a quarter of the machine's memory, within 256–4096 MB; set, it wins; 0 turns postings off", () => {
    const GiB = 1024 ** 3;
    expect(defaultSearchMemoryMb(24 * GiB)).toBe(4096);
    expect(defaultSearchMemoryMb(8 * GiB)).toBe(2048);
    expect(defaultSearchMemoryMb(2 * GiB)).toBe(512);
    expect(defaultSearchMemoryMb(512 * 1024 ** 2)).toBe(256);
    expect(loadConfig({ DATA_DIR: "x" }).searchMemoryBytes).toBe(defaultSearchMemoryMb() * 1024 * 1024);
    expect(loadConfig({ DATA_DIR: "x", SEARCH_MEMORY_MB: "300" }).searchMemoryBytes).toBe(300 * 1024 * 1024);
    expect(loadConfig({ DATA_DIR: "x", SEARCH_MEMORY_MB: "0" }).searchMemoryBytes).toBe(0);
  });
});
