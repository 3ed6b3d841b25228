// Text helpers that count and cut by Unicode code points, never splitting a
// surrogate pair: a "character" in every limit of the contract is a code point.

export function codePointLength(text: string): number {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    length++;
  }
  return length;
}

/** The first `count` code points of `text`, as a UTF-16 index. */
export function codePointIndex(text: string, count: number): number {
  let index = 0;
  for (let seen = 0; seen < count && index < text.length; seen++) {
    const unit = text.charCodeAt(index);
    const pair = unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length;
    index += pair && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  return index;
}

// Scripts written without spaces between words (the analyzer reads them as
// character pairs, core/search/analyzer.ts): beside one of their characters
// is a word boundary.
const SPACELESS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/** The code point that starts at UTF-16 index `at` (the whole pair when `at` is its high half). */
const pointAt = (text: string, at: number) => String.fromCodePoint(text.codePointAt(at)!);

/**
 * The last word boundary at or before UTF-16 index `end` (itself a code point
 * boundary), above 0: before whitespace, or beside a character of a script
 * written without spaces. 0 when there is none.
 */
function lastBoundary(text: string, end: number): number {
  for (let i = end; i > 0; i--) {
    // Inside a surrogate pair: not a boundary.
    if ((text.charCodeAt(i) & 0xfc00) === 0xdc00 && (text.charCodeAt(i - 1) & 0xfc00) === 0xd800) continue;
    const after = i < text.length ? pointAt(text, i) : "";
    if (/\s/.test(after) || SPACELESS.test(after)) return i;
    const before = (text.charCodeAt(i - 1) & 0xfc00) === 0xdc00 && i >= 2 ? pointAt(text, i - 2) : text[i - 1];
    if (SPACELESS.test(before)) return i;
  }
  return 0;
}

/**
 * Cut `text` to at most `max` code points at a word boundary: whitespace, or
 * beside a Chinese or Japanese character (a long CJK run is cut at the
 * budget even after an early space, which would otherwise leave only the text
 * before it). A single word longer than the budget is cut hard.
 */
export function snip(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max || codePointLength(text) <= max) return { text, truncated: false };
  const hardEnd = codePointIndex(text, max);
  const head = text.slice(0, hardEnd);
  const boundary = lastBoundary(text, hardEnd);
  const cut = boundary > 0 ? head.slice(0, boundary).trimEnd() : head;
  return { text: cut.length > 0 ? cut : head, truncated: true };
}
