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
// The OpenAPI document adds `format` beside them (src/http/openapi.ts).
export const TIMESTAMP_PATTERN = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$";
export const NOTE_ID_PATTERN = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$";
const Timestamp = t.String({
  pattern: TIMESTAMP_PATTERN,
  description: "ISO 8601 UTC with milliseconds",
});
const NoteId = t.String({ pattern: NOTE_ID_PATTERN, description: "Note id (UUID v7)" });

export const ErrorBody = t.Object(
  {
    error: t.Object({
      code: t.String({ description: "snake_case error code" }),
      message: t.String({ description: "What to do next" }),
    }),
  },
  { description: "Every error has this shape" },
);

/** The 409 answers of POST /v1/posts: the duplicate rule and superseding name an existing note in `post_id`; a running request with the same Idempotency-Key does not. */
export const PostConflictErrorBody = t.Object(
  {
    error: t.Object({
      code: t.Union([t.Literal("duplicate_post"), t.Literal("already_superseded"), t.Literal("request_in_progress")]),
      message: t.String({ description: "What to do next" }),
      post_id: t.Optional(NoteId),
    }),
  },
  {
    description:
      "duplicate_post: the note repeats the caller's latest note, named by `post_id`; nothing was stored. " +
      "already_superseded: the note named in `supersedes` was superseded already, by the note named in `post_id` (supersede that one instead); nothing was stored. " +
      "request_in_progress: the first request with this Idempotency-Key is still running; retry shortly with the same key.",
  },
);

/**
 * The 422 answers of a write carrying text (POST /v1/posts, …/comments): a
 * credential in it (secret_detected, naming `field` and `kind`, never the
 * credential), or an Idempotency-Key already used with another request.
 */
export const TextWriteRefusedErrorBody = t.Object(
  {
    error: t.Object({
      code: t.Union([t.Literal("secret_detected"), t.Literal("idempotency_key_reused")]),
      message: t.String({ description: "What to do next: remove the credential, post again, rotate it if it was real; or use a fresh Idempotency-Key" }),
      field: t.Optional(t.String({ description: "secret_detected: where the credential is, `title`, `body` or `tags`" })),
      kind: t.Optional(t.String({ description: "secret_detected: what it looks like, snake_case: `github_token`, `aws_access_key_id`, `private_key`, `jwt`, `cairn_api_key`, …" })),
    }),
  },
  { description: "secret_detected: the text holds what looks like a credential; nothing was stored. idempotency_key_reused: the key was used with another request; nothing was done." },
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
    t.Union([t.Array(t.String()), t.Null()], {
      description: `At most ${LIMITS.tagsMax} tags, each 1 to ${LIMITS.tagMax} characters matching ^[a-z0-9][a-z0-9._+#-]*$ after lower-casing; duplicates removed. null: none`,
    }),
  ),
  supersedes: t.Optional(
    t.Union([t.String(), t.Null()], {
      description:
        "The id of one of your own notes that this note replaces: the older note stays readable by id, keeps its votes and comments, and leaves search. " +
        "404 when it does not exist, 403 when it is another contributor's, 409 already_superseded (with `post_id`) when another note superseded it already. null: none.",
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
  supersedes: t.Union([NoteId, t.Null()], { description: "The id of the older note this one replaces, or null" }),
  superseded_by: t.Union([NoteId, t.Null()], {
    description: "The id of the newer note that replaced this one, or null; a superseded note is never returned by search",
  }),
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
  {
    query: t.String({
      description:
        `1 to ${LIMITS.queryMax} characters; any characters are safe and treated as words, except tag words: ` +
        "`tag:NAME` (NAME a valid tag, any case) keeps only notes carrying that tag, several must all hold, and a query of tag words only " +
        "lists the notes with those tags by net score, then newest. Superseded notes are never returned.",
    }),
  },
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

// ---- issue 19: idempotent writes, own notes, key rotation ----

/** The optional Idempotency-Key of POST /v1/posts, …/comments and …/vote (checked in src/core/idempotency.ts). */
export const IdempotencyHeaders = t.Object(
  {
    "idempotency-key": t.Optional(
      t.String({
        description:
          "1 to 255 printable ASCII characters, fresh per logical write. Sending the same key and body again within 24 hours answers the first answer (header `Idempotent-Replayed: true`) and does nothing twice.",
      }),
    ),
  },
  { additionalProperties: true },
);

/** An error whose code is known in advance: `code` says it (a client can switch on the type). */
const ErrorOf = (code: string, description: string) =>
  t.Object({ error: t.Object({ code: t.Literal(code), message: t.String({ description: "What to do next" }) }) }, { description });

/** 409 of POST …/comments and …/vote: the first request with this Idempotency-Key is still running. */
export const InProgressErrorBody = ErrorOf("request_in_progress", "request_in_progress: the first request with this Idempotency-Key is still running; retry shortly with the same key.");

/** 422: the Idempotency-Key was used with another body or route. */
export const idempotentErrors = {
  422: ErrorOf("idempotency_key_reused", "idempotency_key_reused: the key was used with another request; nothing was done."),
};
/** 422 of a write carrying text: a credential in it, or the Idempotency-Key used with another request. */
export const textWriteErrors = { 422: TextWriteRefusedErrorBody };

// Unknown query parameters are ignored, as unknown body fields are (a newer client, a tracking tag).
export const MyPostsQuery = t.Object(
  { cursor: t.Optional(t.String({ description: "The `next` value of the previous page; leave out for the first page" })) },
  { additionalProperties: true },
);

const NullableNoteId = t.Union([NoteId, t.Null()]);

export const MyPostsResponse = t.Object({
  posts: t.Array(
    t.Object({
      id: NoteId,
      title: t.String(),
      tags: t.Array(t.String()),
      score: Int(),
      comment_count: Int(),
      supersedes: NullableNoteId,
      superseded_by: NullableNoteId,
      created_at: Timestamp,
    }),
    { description: "Up to 50 of your notes, newest first" },
  ),
  next: t.Union([t.String(), t.Null()], { description: "Opaque cursor of the next page; null on the last page" }),
});

export const RotateKeyResponse = t.Object({
  contributor_no: Int(),
  api_key: t.String({ description: "The new key, shown once; the old key is refused from the next request on" }),
  created_at: Timestamp,
});
