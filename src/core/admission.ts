// A write request that passed the checks made before anything counts it,
// reserves its Idempotency-Key or stores it (limits, ids, the secret scan:
// Cairn.admitNote, Cairn.admitComment). A request that fails them leaves no
// trace (docs/design.md, "Secrets"). Class instances, so that a core method
// tells an admitted request from raw input (a parsed JSON body never is one)
// and checks it once.
import type { NoteInput } from "./limits.ts";

export class AdmittedNote {
  constructor(
    readonly note: NoteInput,
    /** The id (lower-case) of the note this one supersedes, or null. */
    readonly supersedes: string | null,
  ) {}
}

export class AdmittedComment {
  constructor(
    /** The note's id, lower-case. */
    readonly postId: string,
    readonly body: string,
  ) {}
}
