// Field limits of the contract and the rules that normalise input.
import { invalid } from "./errors.ts";
import { codePointLength } from "./text.ts";

export const LIMITS = {
  emailMin: 3,
  emailMax: 254,
  titleMax: 200,
  bodyMax: 20_000,
  tagsMax: 8,
  tagMax: 32,
  commentMax: 5_000,
  /** Comments in one GET …/comments answer at most (the newest; `count` is the true total): ≤ 100 × 5,000 characters. */
  commentsListed: 100,
  queryMax: 500,
  requestBytes: 64 * 1024,
  webEventBytes: 1024,
} as const;

export const TAG_PATTERN = /^[a-z0-9][a-z0-9._+#-]*$/;

// Characters that show nothing on their own: format (zero-width, bidi controls),
// separators, controls, combining marks, and the blank fillers of Hangul and Braille.
const INVISIBLE = /^[\p{Cf}\p{Z}\p{Cc}\p{M}\s\u115F\u1160\u3164\uFFA0\u2800]*$/u;

function lengthBetween(field: string, value: string, min: number, max: number, trimmed: boolean): string {
  const length = codePointLength(value);
  const how = trimmed ? " after trimming" : "";
  if (length < min) {
    throw invalid(min === 1 ? `\`${field}\` must not be empty${how}.` : `\`${field}\` must be at least ${min} characters${how}; it has ${length}.`);
  }
  if (length > max) throw invalid(`\`${field}\` must be at most ${max} characters${how}; it has ${length}. Shorten it and send again.`);
  return value;
}

export function normaliseEmail(email: string): string {
  const trimmed = email.trim();
  lengthBetween("email", trimmed, LIMITS.emailMin, LIMITS.emailMax, true);
  if (!trimmed.includes("@")) throw invalid("`email` must be an e-mail address (it needs an @).");
  return trimmed;
}

export function normaliseTags(tags: string[] | null | undefined): string[] {
  if (tags == null) return [];
  const seen = new Set<string>();
  for (const [index, raw] of tags.entries()) {
    const tag = raw.trim().toLowerCase();
    if (tag.length === 0) throw invalid(`\`tags[${index}]\` must not be empty.`);
    if (codePointLength(tag) > LIMITS.tagMax) {
      throw invalid(`\`tags[${index}]\` must be at most ${LIMITS.tagMax} characters; it has ${codePointLength(tag)}.`);
    }
    if (!TAG_PATTERN.test(tag)) {
      throw invalid(
        `\`tags[${index}]\` ("${tag.slice(0, 40)}") may hold only a-z, 0-9 and . _ + # - and must start with a letter or digit.`,
      );
    }
    seen.add(tag);
  }
  if (seen.size > LIMITS.tagsMax) throw invalid(`\`tags\` may hold at most ${LIMITS.tagsMax} distinct tags; it has ${seen.size}.`);
  return [...seen];
}

export interface NoteInput {
  title: string;
  body: string;
  tags: string[];
}

/** A title or text made only of invisible characters reads as empty and is refused as such. */
function visible(field: string, value: string): string {
  if (INVISIBLE.test(value)) throw invalid(`\`${field}\` must hold at least one visible character; it has only spaces or invisible ones (zero-width, direction marks).`);
  return value;
}

/**
 * Stored text is UTF-8: a lone UTF-16 surrogate (JSON allows "\ud800")
 * becomes U+FFFD here, so the answer to a write shows what is stored.
 */
const wellFormed = (text: string) => text.toWellFormed().trim();

export function normaliseNote(input: { title: string; body: string; tags?: string[] | null }): NoteInput {
  const title = visible("title", lengthBetween("title", wellFormed(input.title), 1, LIMITS.titleMax, true));
  const body = visible("body", lengthBetween("body", wellFormed(input.body), 1, LIMITS.bodyMax, true));
  return { title, body, tags: normaliseTags(input.tags) };
}

export function normaliseComment(body: string): string {
  return visible("body", lengthBetween("body", wellFormed(body), 1, LIMITS.commentMax, true));
}

export function normaliseQuery(query: string): string {
  const trimmed = query.trim();
  return lengthBetween("query", trimmed, 1, LIMITS.queryMax, true);
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `where` names the note id's place in the request, for the message. */
export function parseNoteId(id: string, where = "The note id in the path"): string {
  if (!UUID_PATTERN.test(id)) throw invalid(`${where} must be a UUID like 0193b2c4-6e3a-7b10-8c2d-1f2e3d4c5b6a.`);
  return id.toLowerCase();
}
