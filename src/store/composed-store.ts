// The Store methods every engine answers by handing them to one of its
// resource classes (contributors, notes, comments, votes, web events, the
// outbox), which carry the same method names on every engine. An engine's
// store extends this and supplies the resources; what differs between engines
// (opening, migrations, signals, counts, backups) stays in the engine.
import type { Store } from "./types.ts";

/** A resource method answering a Store method: same arguments, its result now or later. */
type Answer<F extends (...args: never[]) => unknown> = (...args: Parameters<F>) => Awaited<ReturnType<F>> | ReturnType<F>;

export interface IdempotencyResource {
  reserve: Answer<Store["reserveIdempotencyKey"]>;
  release: Answer<Store["releaseIdempotencyKey"]>;
}

export interface ContributorResource {
  create: Answer<Store["createContributor"]>;
  keyCandidates: Answer<Store["keyCandidates"]>;
  setActive: Answer<Store["setActive"]>;
  summary: Answer<Store["contributorSummary"]>;
  list: Answer<Store["contributorList"]>;
  replaceKey: Answer<Store["replaceKey"]>;
}
export interface NoteResource {
  create: Answer<Store["createNote"]>;
  get: Answer<Store["getNote"]>;
  delete: Answer<Store["deleteNote"]>;
  search: Answer<Store["search"]>;
  similar: Answer<Store["similarNotes"]>;
  listOwn: Answer<Store["listOwnNotes"]>;
}
export interface CommentResource {
  list: Answer<Store["listComments"]>;
  add: Answer<Store["addComment"]>;
}
export interface VoteResource {
  set: Answer<Store["setVote"]>;
}
export interface WebEventResource {
  count: Answer<Store["countWebEvent"]>;
  all: Answer<Store["webEventCounts"]>;
}
export interface OutboxResource {
  claimDue: Answer<Store["claimDueMail"]>;
  markSent: Answer<Store["markMailSent"]>;
  markFailed: Answer<Store["markMailFailed"]>;
  markGivenUp: Answer<Store["markMailGivenUp"]>;
  counts: Answer<Store["outboxCounts"]>;
}

export abstract class ComposedStore {
  protected abstract readonly contributors: ContributorResource;
  protected abstract readonly notes: NoteResource;
  protected abstract readonly comments: CommentResource;
  protected abstract readonly votes: VoteResource;
  protected abstract readonly webEvents: WebEventResource;
  protected abstract readonly outbox: OutboxResource;
  protected abstract readonly idempotency: IdempotencyResource;

  // ---- contributors and keys ----
  async createContributor(...args: Parameters<Store["createContributor"]>) {
    return this.contributors.create(...args);
  }
  async keyCandidates(...args: Parameters<Store["keyCandidates"]>) {
    return this.contributors.keyCandidates(...args);
  }
  async setActive(...args: Parameters<Store["setActive"]>) {
    return this.contributors.setActive(...args);
  }
  async contributorSummary(...args: Parameters<Store["contributorSummary"]>) {
    return this.contributors.summary(...args);
  }
  /** Contributors for `cairn admin contributors`, oldest first; with `email`, only that address (compared without case). */
  async contributorList(...args: Parameters<Store["contributorList"]>) {
    return this.contributors.list(...args);
  }

  // ---- notes, comments, votes, search ----
  async createNote(...args: Parameters<Store["createNote"]>) {
    return this.notes.create(...args);
  }
  async getNote(...args: Parameters<Store["getNote"]>) {
    return this.notes.get(...args);
  }
  async deleteNote(...args: Parameters<Store["deleteNote"]>) {
    return this.notes.delete(...args);
  }
  async search(...args: Parameters<Store["search"]>) {
    return this.notes.search(...args);
  }
  async similarNotes(...args: Parameters<Store["similarNotes"]>) {
    return this.notes.similar(...args);
  }
  async listComments(...args: Parameters<Store["listComments"]>) {
    return this.comments.list(...args);
  }
  async addComment(...args: Parameters<Store["addComment"]>) {
    return this.comments.add(...args);
  }
  async setVote(...args: Parameters<Store["setVote"]>) {
    return this.votes.set(...args);
  }

  async listOwnNotes(...args: Parameters<Store["listOwnNotes"]>) {
    return this.notes.listOwn(...args);
  }
  async replaceKey(...args: Parameters<Store["replaceKey"]>) {
    return this.contributors.replaceKey(...args);
  }

  // ---- idempotency keys ----
  async reserveIdempotencyKey(...args: Parameters<Store["reserveIdempotencyKey"]>) {
    return this.idempotency.reserve(...args);
  }
  async releaseIdempotencyKey(...args: Parameters<Store["releaseIdempotencyKey"]>) {
    return this.idempotency.release(...args);
  }

  // ---- web events ----
  async countWebEvent(...args: Parameters<Store["countWebEvent"]>) {
    return this.webEvents.count(...args);
  }
  async webEventCounts(...args: Parameters<Store["webEventCounts"]>) {
    return this.webEvents.all(...args);
  }

  // ---- the welcome-mail outbox ----
  async claimDueMail(...args: Parameters<Store["claimDueMail"]>) {
    return this.outbox.claimDue(...args);
  }
  async markMailSent(...args: Parameters<Store["markMailSent"]>) {
    return this.outbox.markSent(...args);
  }
  async markMailFailed(...args: Parameters<Store["markMailFailed"]>) {
    return this.outbox.markFailed(...args);
  }
  async markMailGivenUp(...args: Parameters<Store["markMailGivenUp"]>) {
    return this.outbox.markGivenUp(...args);
  }
  async outboxCounts(...args: Parameters<Store["outboxCounts"]>) {
    return this.outbox.counts(...args);
  }
}
