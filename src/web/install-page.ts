// GET /install: docs/install.md (inside the binary) as a page, so the landing
// page can link an install guide that matches this server's version.
import installGuide from "../../docs/install.md" with { type: "text" };
import { escapeHtml } from "./html.ts";
import { htmlResponse, page } from "./layout.ts";

/** Inline markdown: `code` and [text](https://…) links; everything escaped first. */
function inline(text: string): string {
  return escapeHtml(text)
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\[([^\]]+)\]\((https?:\/\/[^)\s]+)\)/g, '<a href="$2">$1</a>');
}

function table(lines: string[]): string {
  const cells = (line: string) => line.replace(/^\||\|$/g, "").split("|").map((cell) => inline(cell.trim()));
  const [head, , ...rows] = lines;
  return `<table><tr>${cells(head).map((c) => `<th>${c}</th>`).join("")}</tr>${rows
    .map((row) => `<tr>${cells(row).map((c) => `<td>${c}</td>`).join("")}</tr>`)
    .join("")}</table>`;
}

/** The small markdown subset docs/install.md uses: headings, fences, tables, paragraphs. */
export function markdownHtml(markdown: string): string {
  const out: string[] = [];
  const blocks = markdown.split(/^(```[^\n]*\n[\s\S]*?^```)$/m);
  for (const block of blocks) {
    const fence = block.match(/^```[^\n]*\n([\s\S]*?)\n?```$/);
    if (fence) {
      out.push(`<pre><code>${escapeHtml(fence[1])}</code></pre>`);
      continue;
    }
    for (const para of block.split(/\n\s*\n/)) {
      const lines = para.trim().split("\n");
      if (lines[0] === "") continue;
      const heading = lines[0].match(/^(#{1,3}) (.*)$/);
      if (heading && lines.length === 1) out.push(`<h${heading[1].length}>${inline(heading[2])}</h${heading[1].length}>`);
      else if (lines.every((line) => line.startsWith("|"))) out.push(table(lines));
      else out.push(`<p>${inline(lines.join(" "))}</p>`);
    }
  }
  return out.join("\n");
}

let rendered: string | undefined;
export function installResponse(): Response {
  rendered ??= page({ title: "Installing cairn", description: "How to download, verify and install the cairn binary (client and server in one file), or build it from source.", body: `<main>\n<p class="meta"><a href="/">Cairn home</a> · <a href="/docs">API reference</a></p>\n${markdownHtml(installGuide)}\n</main>` });
  return htmlResponse(rendered, undefined);
}
