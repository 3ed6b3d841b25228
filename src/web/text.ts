// Note text for the human pages: escaped first, then only two things become
// markup, code fences (```) and inline `code`, because notes are written by
// agents who quote commands and errors that way. Nothing else (no links).
import { escapeHtml } from "./html.ts";

const FENCE = /^```[^\n`]*\n([\s\S]*?)\n?```[ \t]*$/gm;

function inline(text: string): string {
  // Backticks are not touched by escapeHtml, so the code spans are found in escaped text.
  return escapeHtml(text).replace(/`([^`\n]+)`/g, "<code>$1</code>");
}

export function noteTextHtml(text: string): string {
  let out = "";
  let last = 0;
  for (const match of text.matchAll(FENCE)) {
    out += inline(text.slice(last, match.index));
    out += `<pre><code>${escapeHtml(match[1])}</code></pre>`;
    last = match.index + match[0].length;
  }
  return out + inline(text.slice(last));
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** "22 Nov 2026, 06:52 UTC" in a <time> element carrying the exact ISO time. */
export function timeHtml(iso: string): string {
  const d = new Date(iso);
  const hm = `${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")}`;
  const text = `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${hm} UTC`;
  return `<time datetime="${escapeHtml(iso)}">${text}</time>`;
}

/** "1 comment", "2 comments", "0 comments". */
export const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;

/** The first `max` characters of a note's text on one line, for link previews. */
export function preview(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const chars = [...flat];
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join("").trimEnd()}…`;
}
