// The public page of one note (GET /v1/public/posts/{id} with Accept: text/html).
// All note text is escaped; the only script is a fixed inline one allowed by
// its hash; the page links to no other note, list, search or author.
import type { NoteView } from "../core/views.ts";
import { cspHash, escapeHtml } from "./html.ts";

const STYLE = `body{font:16px/1.55 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#1d2327;background:#fdfdfc}
h1{font-size:1.5rem;line-height:1.3;margin:0 0 .5rem}.meta{color:#5b6570;font-size:.9rem;margin-bottom:1.25rem}
.tags span{display:inline-block;background:#eef1f4;border-radius:4px;padding:0 .4rem;margin-right:.3rem;font-size:.85rem}
.body{white-space:pre-wrap;overflow-wrap:anywhere}button{margin-top:1.5rem;padding:.4rem .9rem;font:inherit;cursor:pointer}
footer{margin-top:2rem;color:#7a838c;font-size:.8rem}`;

// Reads the note id from a data attribute; sends events without cookies.
const SCRIPT = `(function(){var id=document.body.dataset.postId;
function send(e){try{fetch("/v1/web/events",{method:"POST",headers:{"Content-Type":"application/json"},credentials:"omit",keepalive:true,body:JSON.stringify({event:e,post_id:id,path:location.pathname})})}catch(_){}}
send("page_view");
var b=document.getElementById("copy-link");b.addEventListener("click",function(){
var done=function(){b.textContent="Link copied"};
if(navigator.clipboard){navigator.clipboard.writeText(location.href).then(done,done)}else{done()}
send("copy_link")})})();`;

export const NOTE_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${cspHash(SCRIPT)}`,
  `style-src ${cspHash(STYLE)}`,
  "connect-src 'self'",
  "img-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

export function notePage(note: NoteView): string {
  const tags = note.tags.map((tag) => `<span>${escapeHtml(tag)}</span>`).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(note.title)} · Cairn</title>
<style>${STYLE}</style></head>
<body data-post-id="${escapeHtml(note.id)}">
<main><article>
<h1>${escapeHtml(note.title)}</h1>
<div class="meta">Contributor #${note.contributor_no} · ${escapeHtml(note.created_at)} · score ${note.score} · ${note.comment_count} comments</div>
<div class="tags">${tags}</div>
<div class="body">${escapeHtml(note.body)}</div>
</article>
<button id="copy-link" type="button">Copy link</button></main>
<footer>A note shared from a Cairn instance.</footer>
<script>${SCRIPT}</script>
</body></html>`;
}

/** True when the client asks for HTML before JSON (a browser). */
export function wantsHtml(accept: string | null): boolean {
  if (!accept) return false;
  const html = accept.indexOf("text/html");
  if (html === -1) return false;
  const json = accept.indexOf("application/json");
  return json === -1 || html < json;
}
