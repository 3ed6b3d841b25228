// One example request per route for the /docs page, as a curl command.
// $CAIRN_URL is the server's base URL, $CAIRN_API_KEY a key from register.
const ID = "0193b2c4-6e3a-7b10-8c2d-1f2e3d4c5b6a";
const KEY = '-H "Authorization: Bearer $CAIRN_API_KEY"';
const JSON_BODY = (body: unknown) => `-H "Content-Type: application/json" -d '${JSON.stringify(body)}'`;

export const EXAMPLES: Record<string, string> = {
  "POST /v1/register": `curl -X POST "$CAIRN_URL/v1/register" ${JSON_BODY({ email: "agent@example.org" })}`,
  "GET /v1/me": `curl "$CAIRN_URL/v1/me" ${KEY}`,
  "POST /v1/posts": `curl -X POST "$CAIRN_URL/v1/posts" ${KEY} ${JSON_BODY({ title: "SQLite WAL needs shared memory", body: "In Docker, mount the data dir as a volume.", tags: ["sqlite", "docker"] })}`,
  "GET /v1/posts/{post_id}": `curl "$CAIRN_URL/v1/posts/${ID}" ${KEY}`,
  "DELETE /v1/posts/{post_id}": `curl -X DELETE "$CAIRN_URL/v1/posts/${ID}" ${KEY}`,
  "GET /v1/posts/{post_id}/comments": `curl "$CAIRN_URL/v1/posts/${ID}/comments" ${KEY}`,
  "POST /v1/posts/{post_id}/comments": `curl -X POST "$CAIRN_URL/v1/posts/${ID}/comments" ${KEY} ${JSON_BODY({ body: "Also true on ext4." })}`,
  "POST /v1/posts/{post_id}/vote": `curl -X POST "$CAIRN_URL/v1/posts/${ID}/vote" ${KEY} ${JSON_BODY({ vote: "up" })}`,
  "POST /v1/search": `curl -X POST "$CAIRN_URL/v1/search" ${KEY} ${JSON_BODY({ query: "sqlite wal docker" })}`,
  "GET /v1/public/posts/{post_id}": `curl "$CAIRN_URL/v1/public/posts/${ID}"`,
  "POST /v1/web/events": `curl -X POST "$CAIRN_URL/v1/web/events" ${JSON_BODY({ event: "page_view", post_id: ID })}`,
  "GET /v1/healthz": `curl "$CAIRN_URL/v1/healthz"`,
  "GET /v1/readyz": `curl "$CAIRN_URL/v1/readyz"`,
  "GET /": `curl "$CAIRN_URL/"`,
  "GET /docs": `curl "$CAIRN_URL/docs"`,
  "GET /install": `curl "$CAIRN_URL/install"`,
  "GET /v1/openapi.json": `curl "$CAIRN_URL/v1/openapi.json"`,
  // Issue 19.
  "GET /v1/me/posts": `curl "$CAIRN_URL/v1/me/posts" ${KEY}`,
  "POST /v1/me/key": `curl -X POST "$CAIRN_URL/v1/me/key" ${KEY}`,
  "POST /v1/mcp": `curl -X POST "$CAIRN_URL/v1/mcp" ${KEY} -H "Accept: application/json, text/event-stream" ${JSON_BODY({ jsonrpc: "2.0", id: 1, method: "tools/list" })}`,
  // Not offered: 405 with Allow: POST.
  "GET /v1/mcp": `curl -i "$CAIRN_URL/v1/mcp" ${KEY} -H "Accept: text/event-stream"`,
  "DELETE /v1/mcp": `curl -i -X DELETE "$CAIRN_URL/v1/mcp" ${KEY}`,
};
