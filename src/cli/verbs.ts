// The client's verbs: one table row per verb, holding its help and how it builds its request.
import { readFileSync } from "node:fs";
import { isatty } from "node:tty";
import { UsageError } from "./args.ts";
import type { ApiRequest } from "./http.ts";

/** What a verb's builder sees of the command line. */
export interface Input {
  verb: string;
  /** Positional arguments after the verb. */
  args: string[];
  /** The single value of a flag (a repeated flag is a usage error). */
  one(flag: string): string | undefined;
  /** Every value of a repeatable flag. */
  all(flag: string): string[];
}

/** What the help, the usage line and the argument checks know of a verb. */
export interface VerbHelp {
  name: string;
  /** Positional arguments, as shown in the overall help. */
  args: string;
  /**
   * The usage line after the verb, when it says more than `args` (flags that
   * are required or alternatives). A flag of `flags` it leaves out is added
   * as [--flag X], so the usage line always names every flag.
   */
  usage?: string;
  /** One line for the overall help. */
  summary: string;
  /** The request it makes, for its help; undefined when it makes none (and so takes no --url). */
  sends?: string;
  /** Longer explanation for its help (wrapped when shown). */
  details?: string;
  /**
   * The verb's own flags (besides --url and --help) and their help: the one
   * list the parser, the checks, the usage line and the help are made from.
   * "--name X" takes a value, "--name" alone is a switch.
   */
  flags: Record<string, string>;
  examples: string[];
  /** Allowed number of positional arguments: [min, max]. */
  arity: [number, number];
}

export interface Verb extends VerbHelp {
  sends: string;
  /** Whether the key is sent. */
  auth: boolean;
  build(input: Input): Promise<ApiRequest>;
}

const JSON_FLAG = "--json JSON";
const JSON_HELP = "the request body, sent unchanged (instead of stdin)";
const WHOLE_BODY = "the whole body is taken from --json, or from stdin when stdin is not a terminal, and sent unchanged.";

const enc = encodeURIComponent;

/** A body given as a whole: --json, else stdin when it is piped. Forwarded byte for byte. */
async function rawBody(input: Input, missing: string): Promise<string | Uint8Array> {
  const json = input.one("json");
  if (json !== undefined) return json;
  if (isatty(0)) throw new UsageError(missing, input.verb);
  const bytes = new Uint8Array(await Bun.stdin.arrayBuffer());
  if (bytes.length === 0) throw new UsageError(`stdin was empty: ${missing}`, input.verb);
  return bytes;
}

function noJson(input: Input, what: string): void {
  if (input.one("json") !== undefined) throw new UsageError(`give either ${what} or --json, not both`, input.verb);
}

/** Text from --body, or from --body-file (a path, or - for stdin). */
async function bodyText(input: Input): Promise<string | undefined> {
  const body = input.one("body");
  const file = input.one("body-file");
  if (body !== undefined && file !== undefined) throw new UsageError("give either --body or --body-file, not both", input.verb);
  if (file === undefined) return body;
  if (file === "-") return Bun.stdin.text();
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read --body-file ${file}: ${(error as Error).message}`, input.verb);
  }
}

const VOTES = ["up", "down", "none"];

const IDEMPOTENCY_FLAG = "--idempotency-key K";
const IDEMPOTENCY_HELP = "Idempotency-Key header: the same K again within 24 h replays the first answer, writes nothing twice";

/** The request `build` makes, with the --idempotency-key flag's value as its key. */
function withIdempotencyKey(build: (input: Input) => Promise<ApiRequest>) {
  return async (input: Input): Promise<ApiRequest> => {
    const key = input.one("idempotency-key");
    if (key !== undefined && !/^[\x20-\x7e]{1,255}$/.test(key)) {
      throw new UsageError("--idempotency-key must be 1 to 255 printable ASCII characters", input.verb);
    }
    const request = await build(input);
    return key === undefined ? request : { ...request, idempotencyKey: key };
  };
}

export const VERBS: Verb[] = [
  {
    name: "register",
    args: "<email>",
    usage: "(<email> | --json JSON) [--force]",
    summary: "get an API key and save it in the config file",
    sends: 'POST /v1/register {"email": <email>} (no key sent)',
    details:
      "On success the server's answer (with the one-time api_key) is printed, and the base URL and " +
      "key are written to the config file (mode 0600). When the file already holds a key, nothing is sent " +
      "unless --force is given: the new key would replace it, and notes written with the old key could no longer be deleted. " +
      "Instead of <email>, a whole body may be given with --json or on stdin.",
    flags: { [JSON_FLAG]: JSON_HELP, "--force": "replace a key already saved in the config file (save the old key first)" },
    examples: [
      "cairn register me@example.com",
      "cairn --url https://cairn.example.com register me@example.com",
      "cairn register other@example.com --force   # replaces the saved key",
    ],
    auth: false,
    arity: [0, 1],
    async build(input) {
      const [email] = input.args;
      if (email === undefined) return { method: "POST", path: "/v1/register", body: await rawBody(input, "give an e-mail address") };
      noJson(input, "<email>");
      return { method: "POST", path: "/v1/register", body: JSON.stringify({ email }) };
    },
  },
  {
    name: "me",
    args: "",
    summary: "show your contributor number, note count and search status",
    sends: "GET /v1/me",
    flags: {},
    examples: ["cairn me"],
    auth: true,
    arity: [0, 0],
    async build() {
      return { method: "GET", path: "/v1/me" };
    },
  },
  {
    name: "post",
    args: "",
    usage: "(--title T (--body B | --body-file F) [--tag X]... [--tags A,B] [--supersedes ID] | --json JSON) [--idempotency-key K]",
    summary: "create a note (optionally replacing one of yours)",
    sends: 'POST /v1/posts {"title", "body", "tags"?, "supersedes"?}',
    details:
`With --title and --body/--body-file the client builds the body; otherwise ${WHOLE_BODY} ` +
      "With --supersedes ID the new note replaces your older note ID: that one stays readable by id with its votes and comments, " +
      "says which note superseded it, and no longer appears in search. A note superseded already answers 409 already_superseded " +
      "with error.post_id naming the note that replaced it: supersede that one instead.",
    flags: {
      "--title T": "the note's title",
      "--body B": "the note's text",
      "--body-file F": "read the note's text from file F (- for stdin), sent as is",
      "--tag X": "a tag (repeatable)",
      "--tags A,B": "comma-separated tags",
      "--supersedes ID": "the id of one of your notes that this note replaces",
      [JSON_FLAG]: JSON_HELP,
      [IDEMPOTENCY_FLAG]: IDEMPOTENCY_HELP,
    },
    examples: [
      'cairn post --title "SQLite WAL needs shared memory" --body-file note.md --tag sqlite --tag docker',
      'cairn post --title "SQLite WAL works on Docker volumes since 3.46" --body-file note.md --supersedes 0192f3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b',
      'echo \'{"title":"T","body":"B","tags":["x"]}\' | cairn post',
      'cairn post --title T --body B --idempotency-key "$(uuidgen)"   # safe to repeat after a timeout',
    ],
    auth: true,
    arity: [0, 0],
    build: withIdempotencyKey(async (input) => {
      const title = input.one("title");
      const tags = [...input.all("tag"), ...input.all("tags").flatMap((list) => list.split(","))]
        .map((tag) => tag.trim())
        .filter((tag) => tag !== "");
      const supersedes = input.one("supersedes");
      const building =
        title !== undefined ||
        input.one("body") !== undefined ||
        input.one("body-file") !== undefined ||
        input.all("tag").length + input.all("tags").length > 0 ||
        supersedes !== undefined;
      if (!building) return { method: "POST", path: "/v1/posts", body: await rawBody(input, "give --title and --body (or --body-file), or a JSON body with --json or on stdin") };
      noJson(input, "--title/--body/--tag/--supersedes");
      const body = await bodyText(input);
      if (title === undefined || body === undefined) throw new UsageError("a note needs --title and --body (or --body-file)", input.verb);
      return { method: "POST", path: "/v1/posts", body: JSON.stringify({ title, body, ...(tags.length ? { tags } : {}), ...(supersedes !== undefined ? { supersedes } : {}) }) };
    }),
  },
  {
    name: "get",
    args: "<id>",
    summary: "read a note in full",
    sends: "GET /v1/posts/<id>",
    flags: {},
    examples: ["cairn get 0192f3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b"],
    auth: true,
    arity: [1, 1],
    async build(input) {
      return { method: "GET", path: `/v1/posts/${enc(input.args[0])}` };
    },
  },
  {
    name: "comments",
    args: "<id>",
    summary: "read a note's comments, oldest first",
    sends: "GET /v1/posts/<id>/comments",
    flags: {},
    examples: ["cairn comments 0192f3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b"],
    auth: true,
    arity: [1, 1],
    async build(input) {
      return { method: "GET", path: `/v1/posts/${enc(input.args[0])}/comments` };
    },
  },
  {
    name: "comment",
    args: "<id>",
    usage: "<id> (--body B | --body-file F | --json JSON) [--idempotency-key K]",
    summary: "comment on a note",
    sends: 'POST /v1/posts/<id>/comments {"body"}',
    details: `With --body or --body-file the client builds the body; otherwise ${WHOLE_BODY}`,
    flags: {
      "--body B": "the comment's text",
      "--body-file F": "read the comment's text from file F (- for stdin), sent as is",
      [JSON_FLAG]: JSON_HELP,
      [IDEMPOTENCY_FLAG]: IDEMPOTENCY_HELP,
    },
    examples: ['cairn comment 0192f3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b --body "Also true on ext4."'],
    auth: true,
    arity: [1, 1],
    build: withIdempotencyKey(async (input) => {
      const path = `/v1/posts/${enc(input.args[0])}/comments`;
      if (input.one("body") === undefined && input.one("body-file") === undefined) {
        return { method: "POST", path, body: await rawBody(input, "give --body or --body-file, or a JSON body with --json or on stdin") };
      }
      noJson(input, "--body/--body-file");
      return { method: "POST", path, body: JSON.stringify({ body: await bodyText(input) }) };
    }),
  },
  {
    name: "vote",
    args: "<id> up|down|none",
    usage: "<id> (up|down|none | --json JSON) [--idempotency-key K]",
    summary: "vote on someone else's note (none withdraws your vote)",
    sends: 'POST /v1/posts/<id>/vote {"vote": "up"|"down"|"none"}',
    details: `Without a direction, ${WHOLE_BODY}`,
    flags: { [JSON_FLAG]: JSON_HELP, [IDEMPOTENCY_FLAG]: IDEMPOTENCY_HELP },
    examples: ["cairn vote 0192f3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b up"],
    auth: true,
    arity: [1, 2],
    build: withIdempotencyKey(async (input) => {
      const [id, vote] = input.args;
      const path = `/v1/posts/${enc(id)}/vote`;
      if (vote === undefined) return { method: "POST", path, body: await rawBody(input, "give a direction: up, down or none") };
      if (!VOTES.includes(vote)) throw new UsageError(`the vote must be up, down or none, not "${vote}"`, input.verb);
      noJson(input, "a direction");
      return { method: "POST", path, body: JSON.stringify({ vote }) };
    }),
  },
  {
    name: "delete",
    args: "<id>",
    summary: "delete one of your notes, with its comments and votes",
    sends: "DELETE /v1/posts/<id>",
    flags: {},
    examples: ["cairn delete 0192f3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b"],
    auth: true,
    arity: [1, 1],
    async build(input) {
      return { method: "DELETE", path: `/v1/posts/${enc(input.args[0])}` };
    },
  },
  {
    name: "search",
    args: "<words…>",
    usage: "(<words…> | --json JSON)",
    summary: "search notes (the server decides how many results)",
    sends: 'POST /v1/search {"query": <words joined by one space>}',
    details:
      `Without words, ${WHOLE_BODY} Put -- before words that start with -. ` +
      "A word tag:NAME keeps only notes carrying that tag (several must all hold); tag words alone list the tagged notes by net score, then newest. " +
      "Superseded notes are never returned.",
    flags: { [JSON_FLAG]: JSON_HELP },
    examples: ["cairn search sqlite wal docker", "cairn search wal tag:sqlite", "cairn search tag:sqlite tag:docker", 'cairn search -- "-fts5 error"'],
    auth: true,
    arity: [0, Number.POSITIVE_INFINITY],
    async build(input) {
      if (input.args.length === 0) return { method: "POST", path: "/v1/search", body: await rawBody(input, "give words to search for") };
      noJson(input, "words");
      return { method: "POST", path: "/v1/search", body: JSON.stringify({ query: input.args.join(" ") }) };
    },
  },
  {
    name: "my-posts",
    args: "",
    usage: "[--cursor C]",
    summary: "list your notes, newest first, 50 a page",
    sends: "GET /v1/me/posts[?cursor=C]",
    details:
      "Prints one page as the server's JSON: {\"posts\": [...], \"next\": ...}. When `next` is not null, run again " +
      "with --cursor set to it for the following page. Notes written or deleted meanwhile never make a page repeat or skip an older note.",
    flags: { "--cursor C": "the `next` value of the previous page" },
    examples: ["cairn my-posts", "cairn my-posts --cursor c1.MTIzNA"],
    auth: true,
    arity: [0, 0],
    async build(input) {
      const cursor = input.one("cursor");
      return { method: "GET", path: cursor === undefined ? "/v1/me/posts" : `/v1/me/posts?cursor=${enc(cursor)}` };
    },
  },
  {
    name: "rotate-key",
    args: "",
    summary: "replace your API key with a new one and save it in the config file",
    sends: "POST /v1/me/key",
    details:
      "The server answers a new key once and refuses the old one from the next request on. The answer is printed, and the new key " +
      "replaces the old one in the config file (written to a temporary file and renamed, mode 0600). If the file cannot be written, " +
      "the new key is printed again on stderr: save it yourself, the old key no longer works. When the key came from CAIRN_API_KEY, " +
      "update that variable too.",
    flags: {},
    examples: ["cairn rotate-key"],
    auth: true,
    arity: [0, 0],
    async build() {
      return { method: "POST", path: "/v1/me/key" };
    },
  },
  {
    name: "public",
    args: "<id>",
    summary: "read a note through the public route (no key sent)",
    sends: "GET /v1/public/posts/<id> (no key sent)",
    flags: {},
    examples: ["cairn public 0192f3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b"],
    auth: false,
    arity: [1, 1],
    async build(input) {
      return { method: "GET", path: `/v1/public/posts/${enc(input.args[0])}` };
    },
  },
];

/** `cairn version`: makes no request; a verb for its help, usage line and argument checks. */
export const VERSION_VERB: VerbHelp = {
  name: "version",
  args: "",
  summary: "print the version and the commit the binary was built from",
  flags: {},
  examples: ["cairn version"],
  arity: [0, 0],
};

/** The verb called `name`, for help and usage: a client verb or `version`. */
export const verbNamed = (name: string | undefined): VerbHelp | undefined =>
  name === VERSION_VERB.name ? VERSION_VERB : VERBS.find((verb) => verb.name === name);

export const sendsRequest = (verb: VerbHelp): verb is Verb => "build" in verb;

/** The flag every verb that sends a request takes. */
export const URL_FLAG: Record<string, string> = { "--url U": "the server's base URL (else CAIRN_URL, else the config file)" };

/** Flags every verb takes. */
export const GLOBAL_FLAGS: Record<string, string> = {
  "--help, -h": "show help",
  "--version": "show the client's version and build commit (also `cairn version`)",
};

/** A flag's name in its help spec: "--title T" → "title". */
export function flagName(spec: string): string {
  return spec.split(/[ ,]/)[0].slice(2);
}

/** Whether a flag's help spec shows a value: "--title T" does, the switch "--force" does not. */
export const takesValue = (spec: string) => /^--[\w-]+ /.test(spec);
