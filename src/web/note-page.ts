// The public page of one note (GET /v1/public/posts/{id} with Accept: text/html),
// with its comments (they belong to the note). All note text is escaped; code
// in backticks or fences is the only markup; the only script is a fixed inline
// one allowed by its hash; the page links to no other note, list, search or author,
// except the note that superseded it (the contract's one permitted link).
import type { CommentView, NoteView } from "../core/views.ts";
import { escapeHtml } from "./html.ts";
import { htmlResponse, page, SEND_EVENT } from "./layout.ts";
import { noteTextHtml, plural, preview, timeHtml } from "./text.ts";

// Reads the note id from a data attribute; sends events without cookies. Shows the copy button:
// it is hidden in the markup, so with scripts off there is no button that does nothing; its
// text change ("Link copied") is spoken by screen readers (aria-live).
// A link to the newer note given as a path (no PUBLIC_BASE_URL) is shown as the address it resolves to.
const SCRIPT = `(function(){${SEND_EVENT}var id=document.body.dataset.postId;send("page_view",id);
var n=document.querySelector("#superseded-by a");if(n){n.textContent=n.href}
var b=document.getElementById("copy-link");b.hidden=false;b.addEventListener("click",function(){
var done=function(){b.textContent="Link copied"};
if(navigator.clipboard){navigator.clipboard.writeText(location.href).then(done,done)}else{done()}
send("copy_link",id)})})();`;

/** OpenGraph and Twitter card tags, so a shared link shows the title and the start of the note. */
function previewTags(note: NoteView, url: string | undefined): string {
  const meta = (attribute: "property" | "name", key: string, value: string) =>
    `<meta ${attribute}="${key}" content="${escapeHtml(value)}">`;
  const description = preview(note.body);
  return [
    meta("name", "description", description),
    meta("property", "og:type", "article"),
    meta("property", "og:site_name", "Cairn"),
    meta("property", "og:title", note.title),
    meta("property", "og:description", description),
    ...(url === undefined ? [] : [meta("property", "og:url", url)]),
    meta("property", "article:published_time", note.created_at),
    meta("name", "twitter:card", "summary"),
    meta("name", "twitter:title", note.title),
    meta("name", "twitter:description", description),
  ].join("\n");
}

function commentsHtml(comments: CommentView[]): string {
  if (comments.length === 0) return "";
  const items = comments
    .map((c) => `<div class="comment"><div class="meta">Contributor #${c.contributor_no} · ${timeHtml(c.created_at)}</div><div class="body" dir="auto">${noteTextHtml(c.body)}</div></div>`)
    .join("\n");
  return `<section class="comments"><h2>${plural(comments.length, "comment")}</h2>\n${items}</section>`;
}

/**
 * The notice a superseded note's page carries: the newer note's URL, as a link
 * and as text (a path without PUBLIC_BASE_URL: the script shows it resolved).
 */
function supersededHtml(newerUrl: string | undefined): string {
  if (newerUrl === undefined) return "";
  const url = escapeHtml(newerUrl);
  return `<p class="superseded" id="superseded-by">This note is out of date: superseded by <a href="${url}" rel="nofollow">${url}</a></p>\n`;
}

/**
 * `url`: this page's absolute address (from PUBLIC_BASE_URL), for link
 * previews; `newerUrl`: the note that superseded this one, when one did.
 */
export function notePageResponse(note: NoteView, comments: CommentView[], url: string | undefined, newerUrl?: string): Response {
  // A list named Tags: a screen reader otherwise read them as words run into the meta line and the body.
  const tags = note.tags.length === 0 ? "" : `<ul class="tags" aria-label="Tags">${note.tags.map((tag) => `<li dir="auto">${escapeHtml(tag)}</li>`).join("")}</ul>\n`;
  const body = `<main><article>
${supersededHtml(newerUrl)}<h1 dir="auto">${escapeHtml(note.title)}</h1>
<div class="meta">Contributor #${note.contributor_no} · ${timeHtml(note.created_at)} · score ${note.score} · ${plural(note.comment_count, "comment")}</div>
${tags}<div class="body" dir="auto">${noteTextHtml(note.body)}</div>
</article>
${commentsHtml(comments)}
<button id="copy-link" type="button" aria-live="polite" hidden>Copy link</button></main>
<footer>A note shared from a Cairn instance.</footer>`;
  const response = htmlResponse(
    // The title isolated (FSI … PDI), so a right-to-left override in it cannot turn the suffix around in the tab.
    page({ title: `\u2068${note.title}\u2069 · Cairn`, body, script: SCRIPT, bodyAttributes: `data-post-id="${escapeHtml(note.id)}"`, head: previewTags(note, url) }),
    SCRIPT,
    "public, max-age=60",
  );
  response.headers.set("vary", "Accept");
  return response;
}

/** A browser asking for a note that is not there (unknown, deleted or a malformed id) gets a page, not JSON. */
export function missingNotePageResponse(status: number, message: string): Response {
  const body = `<main><h1>No note here</h1>
<p>${escapeHtml(message)}</p>
<p>The link may be mistyped, or its author deleted the note.</p></main>
<footer>A Cairn instance.</footer>`;
  return new Response(page({ title: "No note here · Cairn", body }), {
    status,
    headers: { ...Object.fromEntries(htmlResponse("", undefined).headers), vary: "Accept" },
  });
}
