// The contract's field limits, as the client knows them. The client may not
// import server code (src/core), so this is a copy of shared/API.md's numbers;
// test/unit/client-limits.test.ts checks it equals src/core/limits.ts.
export const CLIENT_LIMITS = {
  emailMin: 3,
  emailMax: 254,
  titleMax: 200,
  bodyMax: 20_000,
  tagsMax: 8,
  tagMax: 32,
  commentMax: 5_000,
  queryMax: 500,
  /** A whole request body, in bytes of UTF-8 (the MCP message itself over /v1/mcp). */
  requestBytes: 64 * 1024,
} as const;
