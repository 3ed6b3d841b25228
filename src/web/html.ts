// Escaping for HTML text and attribute values: every piece of note text goes through here.
const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

/** The CSP source for an inline script or style: its SHA-256, so nothing else may run. */
export function cspHash(content: string): string {
  return `'sha256-${new Bun.CryptoHasher("sha256").update(content).digest("base64")}'`;
}
