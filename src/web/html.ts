// Escaping for HTML text and attribute values: every piece of note text goes through here.
// NUL is data in JSON (returned verbatim, escaped as \u0000) but a parse error
// in HTML, and was written raw into note pages: shown as U+FFFD instead.
const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "\0": "\uFFFD" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'\0]/g, (c) => ENTITIES[c]);
}

/** The CSP source for an inline script or style: its SHA-256, so nothing else may run. */
export function cspHash(content: string): string {
  return `'sha256-${new Bun.CryptoHasher("sha256").update(content).digest("base64")}'`;
}
