// TypeBox schemas of every request and response: validation, types and the
// OpenAPI document come from these. Length rules live in src/core/limits.ts
// (they count code points after trimming); the schemas state them for readers.
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { LIMITS } from "../core/limits.ts";

// Plain JSON-Schema integers (Elysia's t.Integer also accepts numeric strings).
const Int = Type.Integer;
// Patterns, not `format`: importing @elysiajs/openapi replaces TypeBox's
// format checkers with slow per-call Zod ones, and these are exact anyway.
const Timestamp = t.String({
  pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$",
  description: "ISO 8601 UTC with milliseconds",
});
const NoteId = t.String({ pattern: "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", description: "Note id (UUID v7)" });

export const ErrorBody = t.Object(
  {
    error: t.Object({
      code: t.String({ description: "snake_case error code" }),
      message: t.String({ description: "What to do next" }),
    }),
  },
  { description: "Every error has this shape" },
);

export const DuplicateErrorBody = t.Object(
  {
    error: t.Object({
      code: t.Literal("duplicate_post"),
      message: t.String({ description: "What to do next" }),
      post_id: NoteId,
    }),
  },
  { description: "The note repeats the caller's latest note; nothing was stored. `post_id` names that existing note." },
);

export const SecretErrorBody = t.Object(
  {
    error: t.Object({
      code: t.Literal("secret_detected"),
      message: t.String({ description: "What to do next: remove the credential, post again, rotate it if it was real" }),
      field: t.String({ description: "Where the credential is: `title`, `body` or `tags`" }),
      kind: t.String({ description: "What it looks like, snake_case: `github_token`, `aws_access_key_id`, `private_key`, `jwt`, `cairn_api_key`, …" }),
    }),
  },
  { description: "The text holds what looks like a credential; nothing was stored. The credential itself is never repeated." },
);

/** A request body: unknown fields are ignored, so newer clients never break an older server. */
const RequestBody = <P extends Parameters<typeof t.Object>[0]>(properties: P) =>
  t.Object(properties, { additionalProperties: true });

export const IdParams = t.Object({ post_id: t.String({ description: "Note id (UUID)" }) });

export const RegisterRequest = RequestBody({
  email: t.String({ description: `E-mail address, ${LIMITS.emailMin} to ${LIMITS.emailMax} characters after trimming` }),
});

export const RegisterResponse = t.Object({
  contributor_no: Int(),
  api_key: t.String({ description: "Shown once; keep it secret" }),
  created_at: Timestamp,
});

export const NoteRequest = RequestBody({
  title: t.String({ description: `1 to ${LIMITS.titleMax} characters after trimming` }),
  body: t.String({ description: `1 to ${LIMITS.bodyMax} characters after trimming` }),
  tags: t.Optional(
    t.Array(t.String(), {
      description: `At most ${LIMITS.tagsMax} tags, each 1 to ${LIMITS.tagMax} characters matching ^[a-z0-9][a-z0-9._+#-]*$ after lower-casing; duplicates removed`,
    }),
  ),
});

const noteFields = {
  id: NoteId,
  contributor_no: Int(),
  title: t.String(),
  body: t.String(),
  tags: t.Array(t.String()),
  score: Int({ description: "Net score: ups minus downs" }),
  comment_count: Int(),
  created_at: Timestamp,
};

export const Note = t.Object(noteFields);

export const SimilarNote = t.Object(
  {
    id: NoteId,
    title: t.String(),
    contributor_no: Int(),
    score: Int({ description: "Net score: ups minus downs" }),
    created_at: Timestamp,
  },
  { description: "An existing note that looks like the same knowledge" },
);

export const CreatedNote = t.Object({
  ...noteFields,
  similar: t.Array(SimilarNote, {
    description:
      "Up to 3 existing notes of any contributor that look like the same knowledge, best first; [] when none passes the server's threshold. The new note is stored either way; no similarity value is given.",
  }),
});

export const SearchResult = t.Object({
  ...noteFields,
  body: t.String({ description: `Snipped at a word boundary to at most SNIP_CHARS (default 400) characters` }),
  body_truncated: t.Boolean(),
});

export const SearchRequest = t.Object(
  { query: t.String({ description: `1 to ${LIMITS.queryMax} characters; any characters are safe and treated as words` }) },
  { additionalProperties: false },
);

export const SearchResponse = t.Object({ query: t.String(), results: t.Array(SearchResult) });

export const MeResponse = t.Object({
  contributor_no: Int(),
  created_at: Timestamp,
  post_count: Int(),
  last_posted_at: t.Union([Timestamp, t.Null()]),
  recent_posts: t.Array(t.Object({ id: NoteId, title: t.String(), created_at: Timestamp }), { description: "Up to 5, newest first" }),
  search: t.Object({ available: t.Boolean(), note: t.String() }),
});

const Comment = t.Object({ contributor_no: Int(), body: t.String(), created_at: Timestamp });

export const CommentsResponse = t.Object({
  post_id: NoteId,
  count: Int({ description: "How many comments the note has in all (may exceed the comments listed)" }),
  comments: t.Array(Comment, {
    description: `The newest ${LIMITS.commentsListed} comments at most, oldest first; when \`count\` is larger, the older ones are not listed`,
  }),
});

export const CommentRequest = RequestBody({ body: t.String({ description: `1 to ${LIMITS.commentMax} characters after trimming` }) });

export const CommentResponse = t.Object({
  post_id: NoteId,
  contributor_no: Int(),
  body: t.String(),
  created_at: Timestamp,
  comment_count: Int({ description: "The note's fresh comment count" }),
});

export const VoteRequest = RequestBody({
  vote: t.Union([t.Literal("up"), t.Literal("down"), t.Literal("none")], { description: "`none` withdraws your vote" }),
});

export const VoteResponse = t.Object({
  post_id: NoteId,
  your_vote: t.Union([t.Literal("up"), t.Literal("down"), t.Literal("none")]),
  score: Int(),
});

export const DeleteResponse = t.Object({ deleted: t.Literal(true), id: NoteId });

export const WebEventRequest = RequestBody({
  event: t.String({ description: "page_view, copy_link or copy_command" }),
  post_id: t.Optional(t.String({ description: "Note id (UUID)" })),
  path: t.Optional(t.String()),
});

export const WebEventResponse = t.Object({ accepted: t.Literal(true) });

export const HealthResponse = t.Object({ status: t.Literal("ok") });
export const ReadyResponse = t.Object({ status: t.Literal("ready") });
export const NotReadyResponse = t.Object({ status: t.Literal("not_ready"), reason: t.String() });

/** Error responses shared by every keyed route. */
export const keyedErrors = {
  400: ErrorBody,
  401: ErrorBody,
  413: ErrorBody,
  415: ErrorBody,
  429: ErrorBody,
  500: ErrorBody,
  503: ErrorBody,
};

/** Error responses of keyed routes without a body and without a breaker: no 413/415, no 429. */
export const keyedReadErrors = {
  400: ErrorBody,
  401: ErrorBody,
  500: ErrorBody,
  503: ErrorBody,
};

/** Error responses of public GET routes with an id. */
export const publicReadErrors = {
  400: ErrorBody,
  500: ErrorBody,
  503: ErrorBody,
};

/** Error responses of the public routes that take a body or an id. */
export const publicErrors = {
  400: ErrorBody,
  413: ErrorBody,
  415: ErrorBody,
  429: ErrorBody,
  500: ErrorBody,
  503: ErrorBody,
};
