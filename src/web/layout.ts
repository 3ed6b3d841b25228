// Shared frame of the human pages: one stylesheet and one optional fixed
// script, both inline and allowed by hash in a strict Content-Security-Policy.
import { cspHash, escapeHtml } from "./html.ts";

export const STYLE = `:root{color-scheme:light dark}body{font:16px/1.55 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#1d2327;background:#fdfdfc}
h1{font-size:1.6rem;line-height:1.3;margin:0 0 .5rem;overflow-wrap:anywhere}h2{font-size:1.2rem;margin-top:2rem}h3{font-size:1rem;margin:1.5rem 0 .3rem}
code,pre{font:14px/1.45 ui-monospace,monospace;background:#f1f3f5;border-radius:4px}code{padding:0 .25rem}pre code{padding:0}pre{padding:.7rem;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}
.meta{color:#5b6570;font-size:.9rem;margin-bottom:1.25rem}.tags{list-style:none;padding:0;margin:0 0 .5rem}.tags li{display:inline-block;background:#eef1f4;border-radius:4px;padding:0 .4rem;margin:0 .3rem .3rem 0;font-size:.85rem}
.body{white-space:pre-wrap;overflow-wrap:anywhere}.body pre{margin:.5rem 0}.comments{margin-top:2rem}.comment{border-top:1px solid #e3e6e8;padding:.6rem 0}button{margin-top:1rem;padding:.4rem .9rem;font:inherit;cursor:pointer}
table{border-collapse:collapse;width:100%;font-size:.9rem}td,th{border-bottom:1px solid #e3e6e8;padding:.3rem .4rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}.superseded{overflow-wrap:anywhere}
.method{font-weight:700;font-family:ui-monospace,monospace}footer{margin-top:2rem;color:#5b6570;font-size:.8rem}
@media (prefers-color-scheme:dark){body{color:#e3e6e8;background:#16191c}code,pre{background:#262b30}.tags li{background:#2b3137}.meta,footer{color:#a3adb6}
.comment,td,th{border-color:#353b41}a{color:#8cb4ff}a:visited{color:#c9a2ff}}`;

export function csp(script?: string): string {
  return [
    "default-src 'none'",
    script ? `script-src ${cspHash(script)}` : "script-src 'none'",
    `style-src ${cspHash(STYLE)}`,
    "connect-src 'self'",
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** `description`: the page's summary for search results and link previews (a note page puts its own in `head`). */
export function page(options: { title: string; description?: string; body: string; script?: string; bodyAttributes?: string; head?: string }): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(options.title)}</title>${options.description ? `\n<meta name="description" content="${escapeHtml(options.description)}">` : ""}${options.head ? `\n${options.head}` : ""}
<style>${STYLE}</style></head>
<body${options.bodyAttributes ? " " + options.bodyAttributes : ""}>
${options.body}
${options.script ? `<script>${options.script}</script>` : ""}
</body></html>`;
}

export function htmlResponse(html: string, script: string | undefined, cacheControl = "no-cache"): Response {
  return new Response(html, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": cacheControl,
      "content-security-policy": csp(script),
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    },
  });
}

/** Posts one web event; `send` is the only global the page scripts share. */
export const SEND_EVENT = `function send(e,id){try{fetch("/v1/web/events",{method:"POST",headers:{"Content-Type":"application/json"},credentials:"omit",keepalive:true,body:JSON.stringify(id?{event:e,post_id:id,path:location.pathname}:{event:e,path:location.pathname})})}catch(_){}}`;
