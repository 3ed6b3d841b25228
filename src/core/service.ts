// Cairn's rules, independent of HTTP and SQL: every route calls one method here.
import type { Config } from "../config.ts";
import type { Store, SupersedeRefusal } from "../store/types.ts";
import { AddressThrottle } from "./address-throttle.ts";
import { AdmittedComment, AdmittedNote } from "./admission.ts";
import { Breakers } from "./breakers.ts";
import { AppError, invalid, noteNotFound, secretDetected, unauthorized } from "./errors.ts";
import { uuidv7 } from "./ids.ts";
import { bearerToken, digestKeyText, digestsEqual, keyPrefix, looksLikeKey, mintKey } from "./keys.ts";
import { KnownKeys } from "./known-keys.ts";
import { LIMITS, normaliseComment, normaliseEmail, normaliseNote, normaliseQuery, parseNoteId } from "./limits.ts";
import { searchRequest } from "./search/query.ts";
import { SecretScanner } from "./secrets.ts";
import { similarNotes } from "./similar.ts";
import { noteVector, type NoteVector } from "./search/vector.ts";
import { commentView, iso, noteView, searchResultView } from "./views.ts";
import { voteDirection, voteValue, type VoteDirection } from "./votes.ts";
import { IdempotencyReservationLost, type NoteRecord, type StoredAnswer, type VoteOutcome } from "../store/types.ts";
import {
  completionFor,
  IDEMPOTENCY_KEYS_PER_CONTRIBUTOR,
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_PRUNE_BATCH,
  IDEMPOTENCY_TTL_MS,
  requestInProgress,
  reservationError,
  type AnswerSlot,
  type IdempotentCall,
} from "./idempotency.ts";
import { MY_POSTS_PAGE, ownNoteView, pageCursor, parsePageCursor } from "./own-notes.ts";

export const RECENT_POSTS = 5;
export const WEB_EVENTS = ["page_view", "copy_link", "copy_command"] as const;
export type WebEvent = (typeof WEB_EVENTS)[number];

/** Tags are compared as a set: the same tags in another order repeat the note. */
const sameTags = (a: string[], b: string[]) => {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((tag) => set.has(tag));
};

/** What POST /v1/posts answers for the store's outcome (a duplicate is the 409), without its `similar` list. */
function createdNote(created: NoteRecord | { duplicateOf: string } | SupersedeRefusal) {
  if ("duplicateOf" in created) {
    throw new AppError(
      "duplicate_post",
      "This note is identical to your last note; skipped; do not retry. Its id is in `post_id`. Change the title, body or tags to post a new note.",
      undefined,
      created.duplicateOf,
    );
  }
  if (!("id" in created)) throw supersedeRefused(created);
  return noteView(created);
}

/** The contract's error for a note whose `supersedes` was refused (after the duplicate check). */
function supersedeRefused(refusal: SupersedeRefusal): AppError {
  if ("alreadySupersededBy" in refusal) {
    return new AppError(
      "already_superseded",
      "The note in `supersedes` was superseded already, by the note whose id is in `post_id`; nothing was stored. Supersede that note instead.",
      undefined,
      refusal.alreadySupersededBy,
    );
  }
  if ("supersedeForbidden" in refusal) {
    return new AppError("forbidden", "`supersedes` names another contributor's note; you can supersede only your own notes. Retrying will not help.");
  }
  return new AppError("not_found", "No note has the id in `supersedes`. Check the id; deleted notes cannot be superseded. Nothing was stored.");
}

export class Cairn {
  readonly breakers: Breakers;
  private readonly knownKeys = new KnownKeys();
  private readonly welcomeMails: AddressThrottle;
  /** Null when SECRET_SCAN=0. */
  private readonly secrets: SecretScanner | null;

  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly now: () => number = Date.now,
  ) {
    const b = config.breakers;
    this.breakers = new Breakers(
      {
        posts: b.postsPerHour,
        comments: b.commentsPerHour,
        votes: b.votesPerHour,
        searches: b.searchesPerHour,
        registrations: b.registrationsPerHour,
        webEvents: b.webEventsPerHour,
      },
      now,
    );
    this.welcomeMails = new AddressThrottle(config.welcomeMailsPerAddressPerDay, now);
    this.secrets = config.secretScan ? new SecretScanner() : null;
  }

  /**
   * Refuses text holding a credential (422 secret_detected), before any
   * breaker counts the request or anything is stored; the error names the
   * field and the kind, never the credential.
   */
  private refuseSecrets(fields: [field: string, text: string][]): void {
    if (this.secrets === null) return;
    for (const [field, text] of fields) {
      const kind = this.secrets.find(text);
      if (kind !== null) throw secretDetected(field, kind);
    }
  }

  /**
   * The contributor behind an Authorization header whose key was already
   * found valid in the current key generation, without a store call or a
   * promise; undefined otherwise, and then `authenticate` decides. The HTTP
   * layer asks this first: on a keyed GET that saved ~3% of the CPU.
   */
  rememberedContributor(authorization: string | null | undefined): number | undefined {
    return this.presentedKey(authorization)?.known;
  }

  /**
   * The contributor number behind an Authorization header: at once when the
   * key is remembered (no promise to wait for), else as authenticate() finds
   * it. The key is hashed once either way (on PostgreSQL, which never
   * remembers a key, asking rememberedContributor first hashed it twice).
   */
  contributorFor(authorization: string | null | undefined): number | Promise<number> {
    const key = this.presentedKey(authorization);
    return key?.known !== undefined ? key.known : this.authenticateKey(key);
  }

  /** The contributor number behind an Authorization header; one answer for every failure. */
  async authenticate(authorization: string | null | undefined): Promise<number> {
    return this.authenticateKey(this.presentedKey(authorization));
  }

  private async authenticateKey(key: ReturnType<Cairn["presentedKey"]>): Promise<number> {
    if (key === null) throw unauthorized();
    if (key.known !== undefined) return key.known;
    const digest = Buffer.from(key.digestText, "base64"); // the same digest as bytes, not hashed again
    let match: number | null = null;
    // Every candidate is compared, without stopping at the first match.
    for (const candidate of await this.store.keyCandidates(keyPrefix(key.token))) {
      if (digestsEqual(candidate.keyDigest, digest) && candidate.active) match = candidate.contributorNo;
    }
    if (match === null) throw unauthorized();
    this.knownKeys.remember(key.digestText, match, key.generation);
    return match;
  }

  /**
   * The key in an Authorization header, its digest, and the contributor it is
   * remembered for (if any); null when the header cannot hold a key.
   */
  private presentedKey(authorization: string | null | undefined) {
    const token = bearerToken(authorization);
    if (token === null || !looksLikeKey(token)) return null;
    // Read before the store is asked, so a change committed meanwhile moves it past what we remember.
    const generation = this.store.keyGeneration();
    const digestText = digestKeyText(token);
    return { token, generation, digestText, known: this.knownKeys.lookup(digestText, generation) };
  }

  async register(email: string, clientIp: string) {
    if (this.config.registration === "closed") {
      throw new AppError(
        "forbidden",
        "Registration is closed on this instance; ask its operator for a key. Retrying will not help.",
      );
    }
    const address = normaliseEmail(email);
    this.breakers.hit("registrations", clientIp);
    if (this.config.emailEnabled) this.welcomeMails.hit(address);
    // With EMAIL_ENABLED=1 the welcome mail is queued in the same transaction
    // (a durable outbox row); the sender in src/mail delivers it later.
    return this.createContributor(address, this.config.emailEnabled);
  }

  /**
   * Creates a contributor for the operator (`cairn admin provision`); no
   * breaker, open or closed, and no welcome mail: the operator hands the key
   * over in person (see docs/email.md).
   */
  async provision(email: string) {
    return this.createContributor(normaliseEmail(email), false);
  }

  private async createContributor(address: string, welcomeMail: boolean) {
    const key = mintKey();
    const contributor = await this.store.createContributor(
      { email: address, keyPrefix: key.prefix, keyDigest: key.digest, createdAt: this.now() },
      welcomeMail ? { kind: "welcome" } : undefined,
    );
    return { contributor_no: contributor.contributorNo, api_key: key.key, created_at: iso(contributor.createdAt) };
  }

  searchAvailability(contributorNo: number): { available: boolean; note: string } {
    if (!this.config.searchEnabled) {
      return { available: false, note: "Search is switched off on this instance; fetch notes by id instead." };
    }
    if (this.breakers.tripped("searches", contributorNo)) {
      return {
        available: false,
        note: `You have used this hour's searches; search comes back at ${this.breakers.resetsAt().toISOString()}.`,
      };
    }
    return { available: true, note: 'Search with POST /v1/search {"query": "your words"} (or `cairn search your words`).' };
  }

  async me(contributorNo: number) {
    const summary = await this.store.contributorSummary(contributorNo, RECENT_POSTS);
    if (!summary) throw unauthorized();
    const recent = summary.recentPosts;
    return {
      contributor_no: summary.contributorNo,
      created_at: iso(summary.createdAt),
      post_count: summary.postCount,
      last_posted_at: recent.length > 0 ? iso(recent[0].createdAt) : null,
      recent_posts: recent.map((post) => ({ id: post.id, title: post.title, created_at: iso(post.createdAt) })),
      search: this.searchAvailability(contributorNo),
    };
  }

  /**
   * The checks of a new note made before anything counts it, reserves its
   * Idempotency-Key or stores it: the secret scan, limits, `supersedes`.
   */
  admitNote(input: { title: string; body: string; tags?: string[] | null; supersedes?: string | null }): AdmittedNote {
    // The scan comes first, on the text as sent: a limit's message may quote what it refuses (a tag of the wrong
    // form is named with its value), and a credential must never come back. Tags as sent (trimmed), not as stored:
    // they are stored lower-cased, and most credentials' patterns are case-sensitive (AKIA… lower-cased is none).
    const sentTags = new Set((input.tags ?? []).map((tag) => tag.trim()));
    this.refuseSecrets([["title", input.title], ["body", input.body], ...[...sentTags].map((tag): [string, string] => ["tags", tag])]);
    const note = normaliseNote(input);
    const supersedes = input.supersedes == null ? null : parseNoteId(input.supersedes, "`supersedes`");
    return new AdmittedNote(note, supersedes);
  }

  async createNote(contributorNo: number, input: { title: string; body: string; tags?: string[] | null; supersedes?: string | null } | AdmittedNote, slot?: AnswerSlot) {
    const { note, supersedes } = input instanceof AdmittedNote ? input : this.admitNote(input);
    this.breakers.hit("posts", contributorNo);
    // Looked up before the write (the new note is not in the index yet), so
    // that the answer stored with the write for a keyed request lists them too.
    // Analysed once, for the lookup and the store's index alike.
    const vector = noteVector(note.title, note.tags, note.body);
    const similar = await this.similarTo({ ...note, supersedes, vector });
    const answer = (created: Parameters<typeof createdNote>[0]) => ({ ...createdNote(created), similar });
    const created = await this.store.createNote(
      { id: uuidv7(), contributorNo, ...note, createdAt: this.now(), supersedes, vector },
      (latest) => latest.title === note.title && latest.body === note.body && sameTags(latest.tags, note.tags),
      completionFor(slot, answer, (created) => ("id" in created ? created.id : null)),
    );
    return answer(created);
  }

  /**
   * Near-duplicates of a note about to be stored, for the 201 answer (never
   * the note it supersedes; superseded notes are out of the search index, so
   * never listed). Empty when SIMILAR_NOTES=0 or search is off.
   */
  private async similarTo(note: { title: string; body: string; tags: string[]; supersedes: string | null; vector: NoteVector }) {
    if (!this.config.similarNotes || !this.config.searchEnabled) return [];
    return (await similarNotes(this.store, note)).map((found) => ({
      id: found.id,
      title: found.title,
      contributor_no: found.contributorNo,
      score: found.score,
      created_at: iso(found.createdAt),
    }));
  }

  async getNote(rawId: string) {
    const note = await this.store.getNote(parseNoteId(rawId));
    if (!note) throw noteNotFound();
    return noteView(note);
  }

  async deleteNote(contributorNo: number, rawId: string) {
    const id = parseNoteId(rawId);
    const outcome = await this.store.deleteNote(id, contributorNo);
    if (outcome === "missing") throw noteNotFound();
    if (outcome === "not_author") {
      throw new AppError("forbidden", "Only the author of a note can delete it; retrying will not help.");
    }
    return { deleted: true as const, id };
  }

  async comments(rawId: string) {
    const id = parseNoteId(rawId);
    const list = await this.store.listComments(id, LIMITS.commentsListed);
    if (!list) throw noteNotFound();
    return { post_id: id, count: list.total, comments: list.comments.map(commentView) };
  }

  /** The checks of a comment made before anything counts it, reserves its Idempotency-Key or stores it (admitNote's). */
  admitComment(rawId: string, rawBody: string): AdmittedComment {
    const id = parseNoteId(rawId);
    const body = normaliseComment(rawBody);
    this.refuseSecrets([["body", body]]);
    return new AdmittedComment(id, body);
  }

  async addComment(contributorNo: number, input: { postId: string; body: string } | AdmittedComment, slot?: AnswerSlot) {
    const { postId: id, body } = input instanceof AdmittedComment ? input : this.admitComment(input.postId, input.body);
    this.breakers.hit("comments", contributorNo);
    const comment = (added: Awaited<ReturnType<Store["addComment"]>>) => {
      if (!added) throw noteNotFound();
      return { post_id: id, ...commentView(added.comment), comment_count: added.commentCount };
    };
    return comment(await this.store.addComment(id, { contributorNo, body, createdAt: this.now() }, completionFor(slot, comment, () => id)));
  }

  async vote(contributorNo: number, rawId: string, direction: VoteDirection, slot?: AnswerSlot) {
    const id = parseNoteId(rawId);
    this.breakers.hit("votes", contributorNo);
    const voted = (outcome: VoteOutcome) => {
      if (outcome.kind === "missing") throw noteNotFound();
      if (outcome.kind === "own_note") {
        throw new AppError("forbidden", "You cannot vote on your own note; retrying will not help.");
      }
      return { post_id: id, your_vote: voteDirection(outcome.value), score: outcome.score };
    };
    return voted(await this.store.setVote(id, contributorNo, voteValue(direction), this.now(), completionFor(slot, voted, () => id)));
  }

  /**
   * Runs one of the idempotent writes (createNote, addComment, vote) under an
   * Idempotency-Key: reserves the key, runs `write` with the slot the store
   * completes in the write's transaction, and answers what was stored. A
   * replay answers the first answer and runs nothing (no breaker counts it).
   */
  async idempotent(contributorNo: number, call: IdempotentCall, write: (slot: AnswerSlot) => Promise<unknown>): Promise<{ answer: StoredAnswer; replayed: boolean }> {
    const now = this.now();
    const token = crypto.randomUUID();
    const reservation = await this.store.reserveIdempotencyKey({
      contributorNo,
      key: call.key,
      fingerprint: call.fingerprint,
      formerFingerprint: call.formerFingerprint,
      token,
      now,
      expiresAt: now + IDEMPOTENCY_TTL_MS,
      leasedUntil: now + IDEMPOTENCY_LEASE_MS,
      keepPerContributor: IDEMPOTENCY_KEYS_PER_CONTRIBUTOR,
      pruneBatch: IDEMPOTENCY_PRUNE_BATCH,
    });
    if (reservation.kind === "replay") return { answer: reservation.answer, replayed: true };
    if (reservation.kind === "gone") return { answer: call.render({ error: noteNotFound() }), replayed: true };
    const refused = reservationError(reservation);
    if (refused) throw refused;
    const slot: AnswerSlot = { contributorNo, key: call.key, token, render: call.render };
    try {
      const value = await write(slot);
      return { answer: slot.recorded ?? call.render({ value }), replayed: false };
    } catch (error) {
      // An AppError after the answer was stored is the stored answer (a duplicate, a missing note): committed with it.
      if (slot.recorded && error instanceof AppError) return { answer: slot.recorded, replayed: false };
      if (error instanceof IdempotencyReservationLost) throw requestInProgress();
      // Nothing was written (refused before the store, or the write failed): the key is free for a retry.
      await this.store.releaseIdempotencyKey(contributorNo, call.key, token).catch(() => undefined);
      throw error;
    }
  }

  /** GET /v1/me/posts: the caller's notes, newest first, a page at a time (keyset on the note's row key; never an offset). */
  async myPosts(contributorNo: number, rawCursor: string | undefined) {
    const before = rawCursor === undefined ? null : parsePageCursor(rawCursor);
    const rows = await this.store.listOwnNotes(contributorNo, before, MY_POSTS_PAGE + 1);
    const page = rows.slice(0, MY_POSTS_PAGE);
    return { posts: page.map(ownNoteView), next: rows.length > MY_POSTS_PAGE ? pageCursor(page[page.length - 1].pk) : null };
  }

  /**
   * POST /v1/me/key: a new key for the caller, shown once; the old one is
   * refused from the next request on, at every replica (the store moves the
   * key generation). Rotations count against the registrations breaker, per
   * contributor: each one makes every server forget the keys it remembered.
   */
  async rotateKey(contributorNo: number) {
    this.breakers.hit("registrations", `key:${contributorNo}`);
    const key = mintKey();
    const at = this.now();
    if (!(await this.store.replaceKey(contributorNo, key.prefix, key.digest))) throw unauthorized();
    return { contributor_no: contributorNo, api_key: key.key, created_at: iso(at) };
  }

  async search(contributorNo: number, rawQuery: string) {
    const query = normaliseQuery(rawQuery);
    if (!this.config.searchEnabled) {
      throw new AppError("unavailable", "Search is switched off on this instance; fetch notes by id instead.");
    }
    this.breakers.hit("searches", contributorNo);
    const request = searchRequest(query, this.config.searchResults);
    // A note carries at most LIMITS.tagsMax tags: more distinct tag words match nothing, and are not looked up.
    const searchable = (request.words.length > 0 || request.tags.length > 0) && request.tags.length <= LIMITS.tagsMax;
    const notes = searchable ? await this.store.search(request) : [];
    return { query, results: notes.map((note) => searchResultView(note, this.config.snipChars)) };
  }

  async publicNote(rawId: string) {
    return this.getNote(rawId);
  }

  async webEvent(clientIp: string, event: string, rawPostId: string | undefined) {
    if (!(WEB_EVENTS as readonly string[]).includes(event)) {
      throw invalid(`\`event\` must be one of ${WEB_EVENTS.join(", ")}.`);
    }
    const postId = rawPostId === undefined ? null : parseNoteId(rawPostId, "`post_id`");
    this.breakers.hit("webEvents", clientIp);
    // Per-note counters only for page views of notes that exist: random ids
    // must not grow the table.
    let counted: string | null = null;
    if (event === "page_view" && postId !== null && (await this.store.getNote(postId))) counted = postId;
    await this.store.countWebEvent(new Date(this.now()).toISOString().slice(0, 10), event, counted);
    return { accepted: true as const };
  }
}
