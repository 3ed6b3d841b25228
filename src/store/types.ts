// The storage interface. src/store/sqlite implements it on bun:sqlite; a second
// engine (PostgreSQL, say) implements the same methods. Every method is async
// so that a networked engine fits; times are epoch milliseconds.

export interface NoteRecord {
  id: string;
  contributorNo: number;
  title: string;
  body: string;
  tags: string[];
  score: number;
  commentCount: number;
  createdAt: number;
  /** The id of the older note this one replaces, or null. */
  supersedes: string | null;
  /** The id of the newer note that replaced this one, or null. */
  supersededBy: string | null;
}

export interface CommentRecord {
  contributorNo: number;
  body: string;
  createdAt: number;
}

export interface KeyCandidate {
  contributorNo: number;
  keyDigest: Uint8Array;
  active: boolean;
}

export interface ContributorSummary {
  contributorNo: number;
  createdAt: number;
  postCount: number;
  recentPosts: { id: string; title: string; createdAt: number }[];
}

export interface NewNote {
  id: string;
  contributorNo: number;
  title: string;
  body: string;
  tags: string[];
  createdAt: number;
  /** The id (lower-case) of one of the author's notes that this one replaces. */
  supersedes?: string | null;
  /** The note's term vector when the caller analysed it already (else the store does). */
  vector?: NoteVector;
}

/** What a similar-notes listing shows of a note (the 201's `similar`): no body, no tags, so none is read. */
export type ListedNote = Pick<NoteRecord, "id" | "contributorNo" | "title" | "score" | "createdAt">;

/** A note and its score as a share of another note's own score (Store.similarNotes). */
export interface SimilarRecord {
  note: ListedNote;
  share: number;
}
/**
 * Why a note that supersedes another was not stored (after the duplicate
 * check): the target does not exist, is another contributor's note, or was
 * superseded already (by the note named).
 */
export type SupersedeRefusal = { supersedeMissing: true } | { supersedeForbidden: true } | { alreadySupersededBy: string };

/** -1 down, 1 up, 0 no vote. */
export type VoteValue = -1 | 0 | 1;

export type VoteOutcome =
  | { kind: "ok"; score: number; value: VoteValue }
  | { kind: "missing" }
  | { kind: "own_note" };

export type DeleteOutcome = "deleted" | "missing" | "not_author";

// ---- idempotent writes (rules in src/core/idempotency.ts) ----

/** An answer as sent: status and JSON text. */
export interface StoredAnswer {
  status: number;
  body: string;
}

export interface ReserveIdempotencyKey {
  contributorNo: number;
  key: string;
  fingerprint: string;
  /** The same request's fingerprint as older versions stored it, when it differs (core/idempotency.ts). */
  formerFingerprint?: string;
  /** Names this reservation: only a completion carrying it may store an answer. */
  token: string;
  now: number;
  expiresAt: number;
  leasedUntil: number;
  /** Keys kept per contributor at most (the oldest go first). */
  keepPerContributor: number;
  /** Expired keys removed per new reservation at most. */
  pruneBatch: number;
}

export type IdempotencyReservation =
  | { kind: "reserved" }
  | { kind: "replay"; answer: StoredAnswer }
  /** The stored answer was about a note deleted since: its text is gone with the note. */
  | { kind: "gone" }
  | { kind: "mismatch" }
  | { kind: "in_progress" };

/** Completes a reservation inside the transaction of the write it answers. */
export interface IdempotencyCompletion<O> {
  contributorNo: number;
  key: string;
  token: string;
  /** Called inside the write's transaction with the write's outcome; `noteId` names the note the answer is about. */
  answer(outcome: O): StoredAnswer & { noteId: string | null };
}

/** The reservation a completion names was taken over (its lease ran out): the write is rolled back. */
export class IdempotencyReservationLost extends Error {}

/** One of a contributor's notes as GET /v1/me/posts lists it; `pk` orders the pages. */
export interface OwnNoteRecord {
  pk: number;
  id: string;
  title: string;
  tags: string[];
  score: number;
  commentCount: number;
  supersedes: string | null;
  supersededBy: string | null;
  createdAt: number;
}

export type { SearchRequest } from "../core/search/query.ts";
export type { SimilarQuery } from "../core/search/own-score.ts";
import type { SimilarQuery } from "../core/search/own-score.ts";
import type { SearchRequest } from "../core/search/query.ts";
import type { NoteVector } from "../core/search/vector.ts";

export interface Counts {
  contributors: number;
  activeContributors: number;
  notes: number;
  comments: number;
  votes: number;
}

export interface ContributorListing {
  contributorNo: number;
  email: string;
  active: boolean;
  createdAt: number;
  postCount: number;
}

export interface WebEventCount {
  day: string;
  event: string;
  postId: string | null;
  count: number;
}

export type Readiness = { ready: true } | { ready: false; reason: string };

/** Kinds of queued e-mail; the text is rendered at send time (src/mail), never stored. */
export type MailKind = "welcome";

/** A queued e-mail as the sender claims it. */
export interface OutboxMail {
  id: number;
  contributorNo: number;
  recipient: string;
  kind: MailKind;
  createdAt: number;
  /** Attempts started so far, this one included. */
  attempts: number;
}

export interface OutboxCounts {
  pending: number;
  sent: number;
  gaveUp: number;
}

/** Which engine a Store runs on; named in the start-up log and `admin stats`, never in the public probes. */
export type StoreEngine = "sqlite" | "postgres";

export interface Store {
  readonly engine: StoreEngine;
  /**
   * Null when the server may remember keys found valid (keyGeneration works);
   * otherwise why it may not, for a start-up warning.
   */
  readonly keySignalOffReason: string | null;
  /** Null when notes may be cached (changes by other processes are seen); otherwise why not. */
  readonly noteSignalOffReason: string | null;
  /**
   * Null when search answers from in-memory postings, or the engine has none;
   * otherwise why not (being built, over SEARCH_MEMORY_MB, off), for the log.
   */
  readonly searchMemoryOffReason: string | null;
  /** Settles when a background build of in-memory postings has ended (at once when there is none). */
  searchMemoryBuilt(): Promise<void>;
  /**
   * Re-attaches change signals that were replaced under this process (SQLite's
   * signal files) and names them; the server calls it every SIGNAL_CHECK_MS.
   * Engines without such signals answer [].
   */
  remapReplacedSignals(): string[];
  /**
   * True when a running server may not yet see the last key change this
   * process made (a signal file created or replaced meanwhile): it does so
   * within SIGNAL_CHECK_MS, so `cairn admin` waits before returning.
   */
  readonly keySignalUnsettled: boolean;
  /** Applies pending migrations. Safe to call from several processes at once. */
  migrate(): Promise<void>;
  readiness(): Promise<Readiness>;
  close(): Promise<void>;

  /**
   * With `mail`, one outbox row addressed to `email` is written in the same
   * transaction as the contributor (both or neither), due at once.
   */
  createContributor(
    input: { email: string; keyPrefix: string; keyDigest: Uint8Array; createdAt: number },
    mail?: { kind: MailKind },
  ): Promise<{
    contributorNo: number;
    createdAt: number;
  }>;
  /** Every contributor whose key shares this prefix (collisions are possible). */
  keyCandidates(prefix: string): Promise<KeyCandidate[]>;
  /**
   * A number that moves whenever an existing key's standing changes (its
   * active flag), in any process, and only after that change commits. Read it
   * before reading keys: a key found valid stays valid while it has not moved.
   * (A new key needs no move: only keys found valid are remembered.) NaN when
   * the engine cannot tell: then nothing may be remembered. Synchronous and
   * cheap, as it is read on every keyed request.
   */
  keyGeneration(): number;
  /** Returns false when no such contributor exists. */
  setActive(contributorNo: number, active: boolean): Promise<boolean>;
  contributorSummary(contributorNo: number, recentLimit: number): Promise<ContributorSummary | null>;

  /**
   * Inserts the note unless `isDuplicate` says it repeats the author's latest
   * existing note; the check and the insert are one atomic step. A duplicate
   * answers the latest note's id, so the caller can be told which note it repeats.
   * With `note.supersedes`, the older note is checked (the author's, not yet
   * superseded) and marked in the same step, and leaves the search index;
   * two notes racing to supersede one: one wins, the other is refused.
   */
  createNote(
    note: NewNote,
    isDuplicate: (latest: { title: string; body: string; tags: string[] }) => boolean,
    completion?: IdempotencyCompletion<NoteRecord | { duplicateOf: string } | SupersedeRefusal>,
  ): Promise<NoteRecord | { duplicateOf: string } | SupersedeRefusal>;
  getNote(id: string): Promise<NoteRecord | null>;
  /**
   * Hard delete with comments, votes and the search entry, in one transaction.
   * A note it superseded goes back into search; a note that superseded it no
   * longer names it.
   */
  deleteNote(id: string, contributorNo: number): Promise<DeleteOutcome>;

  /** The newest `limit` comments, oldest first, and how many the note has in all; null when the note does not exist. */
  listComments(noteId: string, limit: number): Promise<{ comments: CommentRecord[]; total: number } | null>;
  addComment(
    noteId: string,
    comment: { contributorNo: number; body: string; createdAt: number },
    completion?: IdempotencyCompletion<{ comment: CommentRecord; commentCount: number } | null>,
  ): Promise<{ comment: CommentRecord; commentCount: number } | null>;

  /** Sets (or with 0 withdraws) a contributor's vote and returns the fresh net score. */
  setVote(noteId: string, contributorNo: number, value: VoteValue, at: number, completion?: IdempotencyCompletion<VoteOutcome>): Promise<VoteOutcome>;

  // Idempotent writes: reserve a key (one atomic step), then complete it in
  // the write's transaction (the `completion` of createNote, addComment,
  // setVote), or release it when the request ended before its write.
  reserveIdempotencyKey(input: ReserveIdempotencyKey): Promise<IdempotencyReservation>;
  /** Drops a reservation that was never completed (only the one `token` names). */
  releaseIdempotencyKey(contributorNo: number, key: string, token: string): Promise<void>;

  /** The contributor's notes with `pk` below `beforePk` (all when null), newest (highest pk) first, at most `limit`. */
  listOwnNotes(contributorNo: number, beforePk: number | null, limit: number): Promise<OwnNoteRecord[]>;
  /**
   * Replaces an active contributor's key; false when there is no such active
   * contributor. The old key is refused on the next request of every process
   * (the key generation moves after COMMIT, as for setActive).
   */
  replaceKey(contributorNo: number, keyPrefix: string, keyDigest: Uint8Array): Promise<boolean>;

  /** The best notes for the request's words, best first (exact BM25F top-k, docs/design.md "Search"). */
  search(request: SearchRequest): Promise<NoteRecord[]>;
  /**
   * The similar-notes lookup (docs/design.md, "Similar notes"), before a new
   * note is stored: the notes whose BM25F score for `terms` (index terms as
   * given, no typo correction) reaches `minShare` of the score the new note
   * (its term vector `vector`) would get for them itself, the corpus counted
   * as if it were stored, among the `pool` notes sharing the most of its
   * rarest terms within `reach` holders read (src/core/search/own-score.ts:
   * the rule), best first in the search's order, at most `limit` (more on
   * ties), each with that share.
   */
  similarNotes(query: SimilarQuery): Promise<SimilarRecord[]>;
  /** An online, consistent copy of the whole database into a new file. */
  backup(file: string): Promise<void>;
  /** True when `error` means storage is unreachable or busy (answered 503, not 500). */
  isUnavailable(error: unknown): boolean;

  countWebEvent(day: string, event: string, postId: string | null): Promise<void>;
  webEventCounts(): Promise<WebEventCount[]>;
  counts(): Promise<Counts>;
  /** Contributors for `cairn admin contributors`, oldest first; with `email`, only that address (compared without case). */
  contributorList(email?: string): Promise<ContributorListing[]>;

  // E-mail outbox (used by src/mail).
  /**
   * Claims up to `limit` pending rows due at `now` whose lease is free or ran
   * out: each gets a lease until `now + leaseMs` and its attempt count goes
   * up by one, atomically, so two senders never hold the same row.
   */
  claimDueMail(now: number, limit: number, leaseMs: number): Promise<OutboxMail[]>;
  /** The SMTP server accepted the message: never send it again. */
  markMailSent(id: number, at: number): Promise<void>;
  /** Releases the lease and schedules the next attempt; `error` must hold no address. */
  markMailFailed(id: number, error: string, nextAttemptAt: number): Promise<void>;
  /** Stops trying this row for good; `error` must hold no address. */
  markMailGivenUp(id: number, error: string, at: number): Promise<void>;
  outboxCounts(): Promise<OutboxCounts>;
}
