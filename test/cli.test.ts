// The thin client (dist/cairn), run as a separate process against a live server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { flagName, VERBS } from "../src/cli/verbs.ts";
import { BINARY, call, startServer, tempDir, type RunningServer } from "./helpers/server.ts";

let server: RunningServer;
const dirs: string[] = [];

/** A temporary directory removed after the suite. */
function scratch(prefix: string): string {
  const dir = tempDir(prefix);
  dirs.push(dir);
  return dir;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

interface RunOptions {
  /** XDG_CONFIG_HOME for this run (default: a fresh empty directory). */
  xdg?: string;
  env?: Record<string, string>;
  /** Bytes piped to stdin; without it stdin is /dev/null. */
  stdin?: string;
}

async function cairn(args: string[], options: RunOptions = {}): Promise<Run> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of ["CAIRN_URL", "CAIRN_API_KEY", "CAIRN_TIMEOUT_MS"]) delete env[name];
  Object.assign(env, { XDG_CONFIG_HOME: options.xdg ?? scratch("cairn-cli-"), CAIRN_URL: server.url }, options.env);
  const child = Bun.spawn([BINARY, ...args], {
    env,
    stdin: options.stdin === undefined ? "ignore" : new TextEncoder().encode(options.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
}

const configFile = (xdg: string) => join(xdg, "cairn", "config.json");
const mode = (path: string) => statSync(path).mode & 0o777;
const json = (run: Run) => JSON.parse(run.stdout);
const UNKNOWN_ID = "0192f3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b";

// Two contributors: A (registered through the CLI) writes notes, B votes on them.
let xdgA: string;
let keyA: string;
let xdgB: string;
let keyB: string;
let noteId: string;

beforeAll(async () => {
  server = await startServer({ binary: true });
});

afterAll(async () => {
  await server?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("register", () => {
  test("prints the server's answer and writes the config file (0600 in a 0700 directory)", async () => {
    xdgA = scratch("cairn-cli-a-");
    const run = await cairn(["register", "a@example.com"], { xdg: xdgA });
    expect(run.code).toBe(0);
    expect(run.stdout.endsWith("}\n")).toBe(true);
    const answer = json(run);
    expect(answer.api_key).toStartWith("cairn_");
    expect(typeof answer.contributor_no).toBe("number");
    keyA = answer.api_key;

    const path = configFile(xdgA);
    expect(mode(path)).toBe(0o600);
    expect(mode(join(xdgA, "cairn"))).toBe(0o700);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ url: server.url, api_key: keyA });
  });

  test("keeps other keys of an existing config file and makes it 0600", async () => {
    xdgB = scratch("cairn-cli-b-");
    mkdirSync(join(xdgB, "cairn"), { recursive: true });
    writeFileSync(configFile(xdgB), JSON.stringify({ url: "http://127.0.0.1:9", theme: "dark" }));
    chmodSync(configFile(xdgB), 0o644);
    // --url wins over CAIRN_URL and the config file; flags may follow the argument.
    const run = await cairn(["register", "b@example.com", "--url", `${server.url}/`], {
      xdg: xdgB,
      env: { CAIRN_URL: "http://127.0.0.1:9" },
    });
    expect(run.code).toBe(0);
    keyB = json(run).api_key;
    expect(mode(configFile(xdgB))).toBe(0o600);
    // The trailing slash is stripped before the URL is saved.
    expect(JSON.parse(readFileSync(configFile(xdgB), "utf8"))).toEqual({ url: server.url, theme: "dark", api_key: keyB });
  });

  test("later verbs use the url and key from the config file", async () => {
    const run = await cairn(["me"], { xdg: xdgB, env: { CAIRN_URL: "" } });
    expect(run.code).toBe(0);
    expect(json(run).contributor_no).toBe(JSON.parse((await call(server.url, "GET", "/v1/me", { key: keyB })).text).contributor_no);
  });

  test("refuses to replace a saved key without --force, sending nothing; --force replaces it", async () => {
    const before = readFileSync(configFile(xdgA), "utf8");
    const refused = await cairn(["register", "again@example.com"], { xdg: xdgA });
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("already holds an API key");
    expect(refused.stderr).toContain("--force");
    expect(readFileSync(configFile(xdgA), "utf8")).toBe(before);

    const xdg = scratch("cairn-cli-force-");
    expect((await cairn(["register", "first@example.com"], { xdg })).code).toBe(0);
    const forced = await cairn(["register", "second@example.com", "--force"], { xdg });
    expect(forced.code).toBe(0);
    expect(JSON.parse(readFileSync(configFile(xdg), "utf8")).api_key).toBe(json(forced).api_key);
    // --force is register's alone.
    expect((await cairn(["me", "--force"], { xdg })).code).toBe(2);
  });

  test("an invalid e-mail is the server's 400, exit 1", async () => {
    const run = await cairn(["register", "nope"]);
    expect(run.code).toBe(1);
    expect(json(run).error.code).toBe("invalid_request");
  });
});

describe("post", () => {
  test("built from flags: --title, --body, --tag, --tags, --flag=value", async () => {
    const run = await cairn(["post", "--title", "SQLite WAL", "--body=needs shared memory", "--tag", "SQLite", "--tags", "docker,wal"], { xdg: xdgA });
    expect(run.code).toBe(0);
    const note = json(run);
    expect(note).toMatchObject({ title: "SQLite WAL", body: "needs shared memory", tags: ["sqlite", "docker", "wal"] });
    noteId = note.id;
  });

  test("--supersedes ID replaces one of your notes: sent as \"supersedes\", the old note names the new one", async () => {
    const old = json(await cairn(["post", "--title", "Old CLI way", "--body", "old"], { xdg: xdgA }));
    const run = await cairn(["post", "--title", "New CLI way", "--body", "new", "--supersedes", old.id], { xdg: xdgA });
    expect(run.code).toBe(0);
    const note = json(run);
    expect(note).toMatchObject({ title: "New CLI way", supersedes: old.id });
    expect(json(await cairn(["get", old.id], { xdg: xdgA })).superseded_by).toBe(note.id);
    const again = await cairn(["post", "--title", "Newest CLI way", "--body", "x", "--supersedes", old.id], { xdg: xdgA });
    expect(again.code).toBe(1);
    expect(json(again).error).toMatchObject({ code: "already_superseded", post_id: note.id });
    const both = await cairn(["post", "--supersedes", old.id, "--json", "{}"], { xdg: xdgA });
    expect(both.code).toBe(2);
  });

  test("--body-file reads the text from a file", async () => {
    const dir = scratch("cairn-cli-file-");
    writeFileSync(join(dir, "note.md"), "line one\nline two");
    const run = await cairn(["post", "--body-file", join(dir, "note.md"), "--title", "From a file"], { xdg: xdgA });
    expect(run.code).toBe(0);
    expect(json(run).body).toBe("line one\nline two");
  });

  test("--body-file - reads the text from stdin", async () => {
    const run = await cairn(["post", "--title", "From stdin text", "--body-file", "-"], { xdg: xdgA, stdin: "piped text" });
    expect(run.code).toBe(0);
    expect(json(run).body).toBe("piped text");
  });

  test("--json is forwarded unchanged, an unknown extra field included", async () => {
    const body = '{"title": "Via --json", "body": "b", "tags": ["x"], "some_future_field": {"a": 1}}';
    const run = await cairn(["post", "--json", body], { xdg: xdgA });
    expect(run.code).toBe(0);
    expect(json(run)).toMatchObject({ title: "Via --json", tags: ["x"] });
  });

  test("a body on stdin is forwarded unchanged, an unknown extra field included", async () => {
    const run = await cairn(["post"], { xdg: xdgA, stdin: '{"title":"Via stdin","body":"b","extra":true}\n' });
    expect(run.code).toBe(0);
    expect(json(run).title).toBe("Via stdin");
  });

  test("the same note again is the server's 409, exit 1, the error JSON on stdout", async () => {
    const run = await cairn(["post"], { xdg: xdgA, stdin: '{"title":"Via stdin","body":"b","extra":true}' });
    expect(run.code).toBe(1);
    expect(json(run).error.code).toBe("duplicate_post");
  });

  test("a body that is not valid JSON reaches the server as is: 400, exit 1", async () => {
    const run = await cairn(["post", "--json", "{not json"], { xdg: xdgA });
    expect(run.code).toBe(1);
    expect(json(run).error.code).toBe("invalid_request");
  });
});

describe("stdout is the server's body byte for byte, plus one newline", () => {
  test("get = GET /v1/posts/{id}", async () => {
    const run = await cairn(["get", noteId], { xdg: xdgA });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${(await call(server.url, "GET", `/v1/posts/${noteId}`, { key: keyA })).text}\n`);
  });

  test("me = GET /v1/me", async () => {
    const run = await cairn(["me"], { xdg: xdgA });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${(await call(server.url, "GET", "/v1/me", { key: keyA })).text}\n`);
  });

  test("public = GET /v1/public/posts/{id}, without any key configured", async () => {
    const run = await cairn(["public", noteId]);
    expect(run.code).toBe(0);
    const direct = await call(server.url, "GET", `/v1/public/posts/${noteId}`, { headers: { accept: "application/json" } });
    expect(run.stdout).toBe(`${direct.text}\n`);
    expect(json(run).id).toBe(noteId);
  });

  test("an unknown id: 404, exit 1, the error JSON as the server sent it", async () => {
    const run = await cairn(["get", UNKNOWN_ID], { xdg: xdgA });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe(`${(await call(server.url, "GET", `/v1/posts/${UNKNOWN_ID}`, { key: keyA })).text}\n`);
    expect(json(run).error.code).toBe("not_found");
  });

  test("a malformed id is sent (URL-encoded) and answered 400 by the server, exit 1", async () => {
    const run = await cairn(["get", "not a/uuid"], { xdg: xdgA });
    expect(run.code).toBe(1);
    expect(json(run).error.code).toBe("invalid_request");
  });
});

describe("comments", () => {
  test("comment --body, comment on stdin, comment --json; comments lists them", async () => {
    expect((await cairn(["comment", noteId, "--body", "first"], { xdg: xdgB })).code).toBe(0);
    const piped = await cairn(["comment", noteId], { xdg: xdgA, stdin: '{"body":"second","extra":1}' });
    expect(piped.code).toBe(0);
    expect(json(piped)).toMatchObject({ post_id: noteId, body: "second", comment_count: 2 });
    expect((await cairn(["comment", "--json", '{"body":"third"}', noteId], { xdg: xdgB })).code).toBe(0);

    const run = await cairn(["comments", noteId], { xdg: xdgB });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${(await call(server.url, "GET", `/v1/posts/${noteId}/comments`, { key: keyB })).text}\n`);
    expect(json(run).comments.map((comment: { body: string }) => comment.body)).toEqual(["first", "second", "third"]);
  });
});

describe("vote", () => {
  test("up, down, none on another's note", async () => {
    for (const [direction, score] of [["up", 1], ["down", -1], ["none", 0]] as const) {
      const run = await cairn(["vote", noteId, direction], { xdg: xdgB });
      expect(run.code).toBe(0);
      expect(json(run)).toEqual({ post_id: noteId, your_vote: direction, score });
    }
  });

  test("the body on stdin when the direction is omitted", async () => {
    const run = await cairn(["vote", noteId], { xdg: xdgB, stdin: '{"vote":"up"}' });
    expect(run.code).toBe(0);
    expect(json(run).your_vote).toBe("up");
  });

  test("one's own note: the server's 403, exit 1", async () => {
    const run = await cairn(["vote", noteId, "up"], { xdg: xdgA });
    expect(run.code).toBe(1);
    expect(json(run).error.code).toBe("forbidden");
  });

  test("another direction is a usage error, nothing sent", async () => {
    const run = await cairn(["vote", noteId, "sideways"], { xdg: xdgB });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("up, down or none");
  });
});

describe("search", () => {
  test("words are joined into the query", async () => {
    const run = await cairn(["search", "sqlite", "wal"], { xdg: xdgB });
    expect(run.code).toBe(0);
    const answer = json(run);
    expect(answer.query).toBe("sqlite wal");
    expect(Array.isArray(answer.results)).toBe(true);
  });

  test("--json is forwarded unchanged: an extra field reaches the server, which refuses it (400, exit 1)", async () => {
    const run = await cairn(["search", "--json", '{"query":"sqlite","limit":50}'], { xdg: xdgB });
    expect(run.code).toBe(1);
    expect(json(run).error.code).toBe("invalid_request");
  });

  test("the body on stdin", async () => {
    const run = await cairn(["search"], { xdg: xdgB, stdin: '{"query":"docker"}' });
    expect(run.code).toBe(0);
    expect(json(run).query).toBe("docker");
  });
});

describe("delete", () => {
  test("another's note: 403, exit 1; one's own: 200, exit 0; then get is 404, exit 1", async () => {
    const refused = await cairn(["delete", noteId], { xdg: xdgB });
    expect(refused.code).toBe(1);
    expect(json(refused).error.code).toBe("forbidden");

    const run = await cairn(["delete", noteId], { xdg: xdgA });
    expect(run.code).toBe(0);
    expect(json(run)).toEqual({ deleted: true, id: noteId });

    expect((await cairn(["get", noteId], { xdg: xdgA })).code).toBe(1);
  });
});

describe("keys", () => {
  test("CAIRN_API_KEY is used when set", async () => {
    const run = await cairn(["me"], { env: { CAIRN_API_KEY: keyB } });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${(await call(server.url, "GET", "/v1/me", { key: keyB })).text}\n`);
  });

  test("without a key the request is still sent: the server's 401, exit 1", async () => {
    const run = await cairn(["me"]);
    expect(run.code).toBe(1);
    expect(json(run).error.code).toBe("unauthorized");
  });
});

describe("exit code 3: the server cannot be reached", () => {
  test("a closed port", async () => {
    const run = await cairn(["get", UNKNOWN_ID], { env: { CAIRN_URL: "http://127.0.0.1:9" } });
    expect(run.code).toBe(3);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("http://127.0.0.1:9");
    // It says where the URL came from and how to give another.
    expect(run.stderr).toContain("came from CAIRN_URL");
    expect(run.stderr).toContain("--url");
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });

  test("a URL from the config file says so", async () => {
    const xdg = scratch("cairn-cli-lost-");
    mkdirSync(join(xdg, "cairn"), { recursive: true });
    writeFileSync(configFile(xdg), JSON.stringify({ url: "http://127.0.0.1:9" }));
    const run = await cairn(["me"], { xdg, env: { CAIRN_URL: "" } });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("the config file's url");
  });
});

describe("a redirect is not followed; stderr names the base URL to use instead", () => {
  let redirector: ReturnType<typeof Bun.serve>;
  /** Where the redirector sends a request for `url`. */
  let locationFor: (url: URL) => string;
  beforeAll(() => {
    redirector = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (request) => new Response(null, { status: 301, headers: { location: locationFor(new URL(request.url)) } }),
    });
  });
  afterAll(() => redirector.stop(true));
  const via = (args: string[]) => cairn(args, { xdg: xdgA, env: { CAIRN_URL: `http://127.0.0.1:${redirector.port}` } });
  const advised = (run: Run) => run.stderr.match(/give its base URL (\S+) with --url or CAIRN_URL/)?.[1];

  test("a server moved whole: the base URL shown works with --url", async () => {
    locationFor = (url) => `${server.url}${url.pathname}${url.search}`;
    const run = await via(["my-posts", "--cursor", "c1.x"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`the server redirects to ${server.url}/v1/me/posts?cursor=c1.x; not followed`);
    expect(advised(run)).toBe(server.url);
    const again = await cairn(["me", "--url", advised(run)!], { xdg: xdgA, env: { CAIRN_URL: "" } });
    expect(again.code).toBe(0);
  });

  test("the request's path is taken off the Location, a prefix kept; else the Location's origin", async () => {
    for (const [location, base] of [
      ["https://elsewhere.example/v1/me", "https://elsewhere.example"],
      ["https://elsewhere.example/cairn/v1/me", "https://elsewhere.example/cairn"],
      ["https://login.example/sso?next=/v1/me", "https://login.example"],
      ["/moved/v1/me", `http://127.0.0.1:${redirector.port}/moved`],
    ]) {
      locationFor = () => location;
      const run = await via(["me"]);
      expect({ location, code: run.code, base: advised(run) }).toEqual({ location, code: 1, base });
    }
  });
});

describe("a base URL given with /v1", () => {
  test("--url …/v1 and CAIRN_URL …/v1/ reach the same routes", async () => {
    for (const [args, env] of [
      [["me", "--url", `${server.url}/v1`], {}],
      [["me"], { CAIRN_URL: `${server.url}/v1/` }],
    ] as [string[], Record<string, string>][]) {
      const run = await cairn(args, { xdg: xdgA, env });
      expect(run.code).toBe(0);
      expect(json(run).contributor_no).toBeGreaterThan(0);
    }
  });
});

describe("exit code 2: usage errors, nothing sent, nothing on stdout", () => {
  const cases: [string, string[], string?][] = [
    ["unknown verb", ["frobnicate"]],
    ["missing argument", ["get"]],
    ["extra argument", ["me", "extra"]],
    ["unknown flag", ["me", "--nope"]],
    ["a flag the verb does not take", ["get", UNKNOWN_ID, "--title", "x"]],
    ["a flag without its value", ["post", "--title"]],
    ["unreadable --body-file", ["comment", UNKNOWN_ID, "--body-file", "/nonexistent/cairn-file"]],
    ["invalid vote direction", ["vote", UNKNOWN_ID, "maybe"]],
    ["post without a body (stdin empty)", ["post"]],
    ["post with --title only", ["post", "--title", "t"]],
    ["--json together with building flags", ["post", "--json", "{}", "--title", "t", "--body", "b"]],
    ["a --url that is not a URL", ["me", "--url", "not a url"]],
    ["version with an argument", ["version", "extra"]],
    ["version with a flag", ["version", "--url", "http://127.0.0.1:9"]],
  ];
  for (const [name, args] of cases) {
    test(name, async () => {
      const run = await cairn(args);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toStartWith("cairn: ");
    });
  }

  test("version with an argument says it takes none, not that the verb is unknown", async () => {
    const run = await cairn(["version", "extra"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toStartWith('cairn: version takes no arguments, got "extra"\nusage: cairn version\n');
  });

  for (const [field, value] of [["url", 5], ["api_key", 5], ["url", null], ["api_key", ["k"]]] as const) {
    test(`a config file whose ${field} is ${JSON.stringify(value)}: names the file and the field`, async () => {
      const xdg = scratch("cairn-cli-config-");
      mkdirSync(join(xdg, "cairn"), { recursive: true });
      writeFileSync(configFile(xdg), JSON.stringify({ [field]: value }));
      // Without CAIRN_URL, as a user would run it: a url of 5 was ignored for the default URL (exit 3).
      const run = await cairn(["me"], { xdg, env: { CAIRN_URL: "" } });
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain(configFile(xdg));
      expect(run.stderr).toContain(`"${field}" must be a string`);
    });
  }

  test("no arguments: the overall help on stderr", async () => {
    const run = await cairn([]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("usage: cairn <verb>");
  });
});

describe("help and version", () => {
  const VERB_NAMES = ["register", "me", "post", "get", "comments", "comment", "vote", "delete", "search", "public"];

  for (const args of [["--help"], ["help"], ["-h"]]) {
    test(`cairn ${args.join(" ")}`, async () => {
      const run = await cairn(args);
      expect(run.code).toBe(0);
      for (const verb of [...VERB_NAMES, "serve", "admin", "CAIRN_URL", "CAIRN_API_KEY", "config.json", "Exit codes"]) {
        expect(run.stdout).toContain(verb);
      }
    });
  }

  test("cairn help mcp|serve|admin points to that verb's own help, which exists", async () => {
    for (const verb of ["mcp", "serve", "admin"]) {
      const run = await cairn(["help", verb]);
      expect({ verb, code: run.code, stdout: run.stdout }).toEqual({ verb, code: 0, stdout: `run \`cairn ${verb} --help\`\n` });
      const own = await cairn([verb, "--help"]);
      expect({ verb, code: own.code }).toEqual({ verb, code: 0 });
      expect(own.stdout).toContain(`cairn ${verb}`);
    }
  });

  for (const verb of VERB_NAMES) {
    test(`cairn ${verb} --help`, async () => {
      const run = await cairn([verb, "--help"], { env: { CAIRN_URL: "http://127.0.0.1:9" } });
      expect(run.code).toBe(0);
      expect(run.stdout).toStartWith(`usage: cairn ${verb}`);
      expect(run.stdout).toContain("Sends: ");
      expect(run.stdout).toContain(`cairn ${verb}`);
      expect(run.stderr).toBe("");
    });
  }

  for (const verb of VERBS) {
    test(`cairn ${verb.name} --help: its usage line and its Flags list name every flag it takes`, async () => {
      const run = await cairn([verb.name, "--help"]);
      const [usage] = run.stdout.split("\n");
      const flags = run.stdout.slice(run.stdout.indexOf("\nFlags:\n"), run.stdout.indexOf("\nExample"));
      for (const spec of Object.keys(verb.flags)) {
        expect({ spec, usage: usage.includes(`--${flagName(spec)}`), listed: flags.includes(`  ${spec}  `) }).toEqual({ spec, usage: true, listed: true });
      }
      expect(usage).toEndWith(" [--url U]");
    });
  }

  test("the flags the audit found missing from help: register --force; --json, --tags, --idempotency-key in usage lines", async () => {
    const usage = async (verb: string) => (await cairn([verb, "--help"])).stdout.split("\n")[0];
    expect((await cairn(["register", "--help"])).stdout).toMatch(/\n {2}--force +replace a key/);
    expect(await usage("register")).toContain("--json JSON");
    for (const flag of ["--tags A,B", "--json JSON", "--idempotency-key K", "--supersedes ID"]) expect(await usage("post")).toContain(flag);
    for (const verb of ["comment", "vote"]) {
      expect(await usage(verb)).toContain("--json JSON");
      expect(await usage(verb)).toContain("--idempotency-key K");
    }
    expect(await usage("search")).toContain("--json JSON");
  });

  test("docs/cli.md's Flags table names every flag a verb takes", () => {
    const docs = readFileSync(join(import.meta.dir, "../docs/cli.md"), "utf8");
    const table = docs.slice(docs.indexOf("\n## Flags\n"), docs.indexOf("\n## ", docs.indexOf("\n## Flags\n") + 1));
    const missing = [...new Set(VERBS.flatMap((verb) => Object.keys(verb.flags).map(flagName)))].filter((name) => !new RegExp(`\`--${name}[\` ]`).test(table));
    expect(missing).toEqual([]);
  });

  test("cairn version --help is the verb's help, not the version", async () => {
    for (const args of [["version", "--help"], ["help", "version"]]) {
      const run = await cairn(args);
      expect(run.code).toBe(0);
      expect(run.stdout).toStartWith("usage: cairn version\n");
      expect(run.stdout).toContain("Flags:");
      expect(run.stdout).not.toContain("(commit ");
    }
  });

  test("cairn help <verb> is the verb's help", async () => {
    const run = await cairn(["help", "vote"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toStartWith("usage: cairn vote");
  });

  test("--version and `cairn version`: the version and the commit it was built from", async () => {
    const { version } = JSON.parse(readFileSync(join(import.meta.dir, "../package.json"), "utf8"));
    const head = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"]).stdout.toString().trim();
    for (const args of [["--version"], ["version"]]) {
      const run = await cairn(args);
      expect(run.code).toBe(0);
      // The binary under test was built from this checkout (maybe with uncommitted changes).
      expect(run.stdout).toMatch(new RegExp(`^cairn ${version.replaceAll(".", "\\.")} \\(commit ${head}(-dirty)?\\)\n$`));
    }
  });
});
