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

/**
 * Cut `text` to at most `max` code points at a word boundary. Whitespace is the
 * boundary; a single word longer than the budget is cut hard.
 */
export function snip(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max || codePointLength(text) <= max) return { text, truncated: false };
  const hardEnd = codePointIndex(text, max);
  // If the cut falls right before whitespace, the whole last word fits.
  if (/\s/.test(text[hardEnd] ?? "")) return { text: text.slice(0, hardEnd).trimEnd(), truncated: true };
  const head = text.slice(0, hardEnd);
  const lastSpace = head.search(/\s\S*$/);
  const cut = lastSpace > 0 ? head.slice(0, lastSpace).trimEnd() : head;
  return { text: cut.length > 0 ? cut : head, truncated: true };
}
