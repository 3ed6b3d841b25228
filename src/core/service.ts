// Cairn's rules, independent of HTTP and SQL: every route calls one method here.
import type { Config } from "../config.ts";
import type { NoteRecord, Store } from "../store/types.ts";
import { AddressThrottle } from "./address-throttle.ts";
import { Breakers } from "./breakers.ts";
import { AppError, invalid, noteNotFound, secretDetected, unauthorized } from "./errors.ts";
import { uuidv7 } from "./ids.ts";
import { bearerToken, digestKeyText, digestsEqual, keyPrefix, looksLikeKey, mintKey } from "./keys.ts";
import { KnownKeys } from "./known-keys.ts";
import { LIMITS, normaliseComment, normaliseEmail, normaliseNote, normaliseQuery, parseNoteId } from "./limits.ts";
import { searchRequest } from "./search/query.ts";
import { SecretScanner } from "./secrets.ts";
import { similarNotes } from "./similar.ts";
import { commentView, iso, noteView, searchResultView } from "./views.ts";
import { voteDirection, voteValue, type VoteDirection } from "./votes.ts";

export const RECENT_POSTS = 5;
export const WEB_EVENTS = ["page_view", "copy_link", "copy_command"] as const;
export type WebEvent = (typeof WEB_EVENTS)[number];

/** Tags are compared as a set: the same tags in another order repeat the note. */
const sameTags = (a: string[], b: string[]) => {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((tag) => set.has(tag));
};

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

  /** The contributor number behind an Authorization header; one answer for every failure. */
  async authenticate(authorization: string | null | undefined): Promise<number> {
    const key = this.presentedKey(authorization);
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
   * remembered for (if any); null when the header cannot hold a key. (A key
   * not yet remembered is hashed twice when the HTTP layer asks
   * rememberedContributor first: once per key and generation.)
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

  async createNote(contributorNo: number, input: { title: string; body: string; tags?: string[] }) {
    const note = normaliseNote(input);
    this.refuseSecrets([["title", note.title], ["body", note.body], ...note.tags.map((tag): [string, string] => ["tags", tag])]);
    this.breakers.hit("posts", contributorNo);
    const created = await this.store.createNote(
      { id: uuidv7(), contributorNo, ...note, createdAt: this.now() },
      (latest) => latest.title === note.title && latest.body === note.body && sameTags(latest.tags, note.tags),
    );
    if ("duplicateOf" in created) {
      throw new AppError(
        "duplicate_post",
        "This note is identical to your last note; skipped; do not retry. Its id is in `post_id`. Change the title, body or tags to post a new note.",
        undefined,
        created.duplicateOf,
      );
    }
    return { ...noteView(created), similar: await this.similarTo(created) };
  }

  /**
   * Near-duplicates of a note just stored, for the 201 answer (never the note
   * itself; superseded notes are out of the search index, so never listed).
   * Empty when SIMILAR_NOTES=0 or search is off.
   */
  private async similarTo(created: NoteRecord) {
    if (!this.config.similarNotes || !this.config.searchEnabled) return [];
    return (await similarNotes(this.store, created)).map((note) => ({
      id: note.id,
      title: note.title,
      contributor_no: note.contributorNo,
      score: note.score,
      created_at: iso(note.createdAt),
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

  async addComment(contributorNo: number, rawId: string, rawBody: string) {
    const id = parseNoteId(rawId);
    const body = normaliseComment(rawBody);
    this.refuseSecrets([["body", body]]);
    this.breakers.hit("comments", contributorNo);
    const added = await this.store.addComment(id, { contributorNo, body, createdAt: this.now() });
    if (!added) throw noteNotFound();
    return { post_id: id, ...commentView(added.comment), comment_count: added.commentCount };
  }

  async vote(contributorNo: number, rawId: string, direction: VoteDirection) {
    const id = parseNoteId(rawId);
    this.breakers.hit("votes", contributorNo);
    const outcome = await this.store.setVote(id, contributorNo, voteValue(direction), this.now());
    if (outcome.kind === "missing") throw noteNotFound();
    if (outcome.kind === "own_note") {
      throw new AppError("forbidden", "You cannot vote on your own note; retrying will not help.");
    }
    return { post_id: id, your_vote: voteDirection(outcome.value), score: outcome.score };
  }

  async search(contributorNo: number, rawQuery: string) {
    const query = normaliseQuery(rawQuery);
    if (!this.config.searchEnabled) {
      throw new AppError("unavailable", "Search is switched off on this instance; fetch notes by id instead.");
    }
    this.breakers.hit("searches", contributorNo);
    const request = searchRequest(query, this.config.searchResults);
    const notes = request.words.length > 0 ? await this.store.search(request) : [];
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
