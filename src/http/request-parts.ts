// Reading the parts of a request that come from headers a client controls:
// the Host (inside request.url) and Accept. None of these may throw: a
// malformed Host made `new URL(request.url)` throw, a 500 on every route.
// No page prints the Host (docs/design.md): it may be forged.

/** The path of a request URL, without parsing the origin (which holds the client's Host header). */
export function pathOf(url: string): string {
  const scheme = url.indexOf("://");
  const start = url.indexOf("/", scheme === -1 ? 0 : scheme + 3);
  if (start === -1) return "/";
  const end = url.search(/[?#]/);
  return end === -1 || end < start ? url.slice(start) : url.slice(start, end);
}

interface Range {
  type: string;
  subtype: string;
  q: number;
  index: number;
}

/** Media ranges of an Accept header (RFC 9110 §12.5.1); unparsable entries are skipped. */
export function parseAccept(accept: string): Range[] {
  const ranges: Range[] = [];
  for (const [index, part] of accept.slice(0, 4096).split(",").entries()) {
    const [media = "", ...params] = part.split(";");
    const [type, subtype] = media.trim().toLowerCase().split("/");
    if (!type || !subtype) continue;
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split("=").map((s) => s.trim().toLowerCase());
      if (name !== "q") continue;
      const parsed = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(value ?? "") ? Number(value) : NaN;
      q = Number.isNaN(parsed) ? 0 : parsed;
    }
    ranges.push({ type, subtype, q, index });
  }
  return ranges;
}

/** The most specific range that matches `type/subtype`, as its q and position; q 0 when none does. */
function quality(ranges: Range[], type: string, subtype: string): { q: number; index: number } {
  let best: Range | undefined;
  let bestSpecificity = -1;
  for (const range of ranges) {
    const specificity =
      range.type === type && range.subtype === subtype ? 2 : range.type === type && range.subtype === "*" ? 1 : range.type === "*" && range.subtype === "*" ? 0 : -1;
    if (specificity > bestSpecificity) {
      best = range;
      bestSpecificity = specificity;
    }
  }
  return best ? { q: best.q, index: best.index } : { q: 0, index: Infinity };
}

/**
 * True when the client prefers HTML to JSON (a browser). JSON is the default:
 * it wins ties that come from one range (`*\/*`); between two explicit
 * ranges of equal q, the one listed first wins.
 */
export function prefersHtml(accept: string | null): boolean {
  if (!accept) return false;
  const ranges = parseAccept(accept);
  const html = quality(ranges, "text", "html");
  const json = quality(ranges, "application", "json");
  if (html.q <= 0) return false;
  return html.q > json.q || (html.q === json.q && html.index < json.index);
}
