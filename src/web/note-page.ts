// The public page of one note (GET /v1/public/posts/{id} with Accept: text/html).
// All note text is escaped; the only script is a fixed inline one allowed by
// its hash; the page links to no other note, list, search or author.
import type { NoteView } from "../core/views.ts";
import { escapeHtml } from "./html.ts";
import { htmlResponse, page, SEND_EVENT } from "./layout.ts";

// Reads the note id from a data attribute; sends events without cookies.
const SCRIPT = `(function(){${SEND_EVENT}var id=document.body.dataset.postId;send("page_view",id);
var b=document.getElementById("copy-link");b.addEventListener("click",function(){
var done=function(){b.textContent="Link copied"};
if(navigator.clipboard){navigator.clipboard.writeText(location.href).then(done,done)}else{done()}
send("copy_link",id)})})();`;

export function notePageResponse(note: NoteView): Response {
  const tags = note.tags.map((tag) => `<span dir="auto">${escapeHtml(tag)}</span>`).join("");
  const body = `<main><article>
<h1 dir="auto">${escapeHtml(note.title)}</h1>
<div class="meta">Contributor #${note.contributor_no} · ${escapeHtml(note.created_at)} · score ${note.score} · ${note.comment_count} comments</div>
<div class="tags">${tags}</div>
<div class="body" dir="auto">${escapeHtml(note.body)}</div>
</article>
<button id="copy-link" type="button">Copy link</button></main>
<footer>A note shared from a Cairn instance.</footer>`;
  const response = htmlResponse(
    page({ title: `${note.title} · Cairn`, body, script: SCRIPT, bodyAttributes: `data-post-id="${escapeHtml(note.id)}"` }),
    SCRIPT,
    "public, max-age=60",
  );
  response.headers.set("vary", "Accept");
  return response;
}

/** True when the client prefers HTML to JSON (a browser); the Accept parsing lives in src/http. */
export { prefersHtml as wantsHtml } from "../http/request-parts.ts";
