// The thin client: builds one request from the command line, prints the server's
// answer unchanged. Imports nothing from the server.
import { parseArgs, UsageError } from "./args.ts";
import { ConfigError, configPath, readConfig, saveConfig, type ConfigFile, type Env } from "./config.ts";
import { send, UnreachableError } from "./http.ts";
import { DEFAULT_TIMEOUT_MS, DEFAULT_URL, redirectBase, resolveKey, resolveTarget, timeoutMs, unreachableHint } from "./target.ts";
import { flagName, GLOBAL_FLAGS, sendsRequest, takesValue, URL_FLAG, VERBS, VERSION_VERB, verbNamed, type Input, type VerbHelp } from "./verbs.ts";
import { VERSION, versionLine } from "./version.ts";

// Every verb's flags come from its own `flags` (verbs.ts); the parser knows them all, each verb's check only its own.
const VERB_FLAGS = VERBS.flatMap((verb) => Object.keys(verb.flags));
const VALUE_FLAGS = new Set(["url", ...VERB_FLAGS.filter(takesValue).map(flagName)]);
const SWITCHES = new Set(["help", "version", ...VERB_FLAGS.filter((spec) => !takesValue(spec)).map(flagName)]);

async function write(stream: "stdout" | "stderr", data: string | Uint8Array): Promise<void> {
  try {
    await Bun.write(stream === "stdout" ? Bun.stdout : Bun.stderr, data);
  } catch (error) {
    // A reader that stops early (`cairn get … | head`) is not an error.
    if ((error as NodeJS.ErrnoException).code !== "EPIPE") throw error;
  }
}

const say = (text: string) => write("stderr", `cairn: ${text}\n`);

function table(rows: Record<string, string>): string {
  const width = Math.max(...Object.keys(rows).map((key) => key.length));
  return Object.entries(rows)
    .map(([key, text]) => `  ${key.padEnd(width)}  ${text}`)
    .join("\n");
}

function wrap(text: string, width = 80): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join("\n");
}

/** The verb's usage line: its `usage` (or `args`), every flag it leaves out as [--flag X], then [--url U] when it sends a request. */
function usageLine(verb: VerbHelp): string {
  const form = verb.usage ?? verb.args;
  const named = (spec: string) => new RegExp(`--${flagName(spec)}(?![\\w-])`).test(form);
  const rest = Object.keys(verb.flags).filter((spec) => !named(spec)).map((spec) => `[${spec}]`);
  return ["usage: cairn", verb.name, form, ...rest, ...(verb.sends ? ["[--url U]"] : [])].filter(Boolean).join(" ");
}

function overallHelp(env: Env): string {
  // The overview shows positional arguments only; each verb's own help shows its flags.
  const verbs = Object.fromEntries(VERBS.map((verb) => [`${verb.name} ${verb.args}`.trim(), verb.summary]));
  return `cairn ${VERSION}: command-line client for a Cairn notes server

usage: cairn <verb> [arguments] [flags]
       cairn <verb> --help     help for one verb

Client verbs (each makes one HTTP request):
${table(verbs)}

Other verbs:
${table({
  mcp: "serve the API to an agent host as MCP tools over stdio (docs/mcp.md; hosts that take a URL use <server>/v1/mcp)",
  version: VERSION_VERB.summary,
  serve: "run the Cairn server (same binary)",
  "admin …": "operator commands (run `cairn admin --help`)",
})}

Flags (before or after arguments; --flag value or --flag=value; -- ends flags):
${table({ ...URL_FLAG, ...GLOBAL_FLAGS, "--json JSON": "a request body, sent unchanged (verbs that send one)" })}

Request bodies given with --json or on stdin are forwarded byte for byte, so fields
this client does not know still reach the server.

Environment:
${table({
  CAIRN_URL: `server base URL when --url is not given (default ${DEFAULT_URL}; a trailing /v1 is dropped)`,
  CAIRN_API_KEY: "the API key (else the config file's api_key)",
  CAIRN_TIMEOUT_MS: `request timeout in milliseconds (default ${DEFAULT_TIMEOUT_MS})`,
  XDG_CONFIG_HOME: "where the config file lives (default ~/.config)",
})}

Config file: $XDG_CONFIG_HOME/cairn/config.json (here ${configPath(env)}),
  {"url": ..., "api_key": ...}, mode 0600, written by \`cairn register\`.

Output: the server's response body exactly as received, then one newline, on stdout.
Messages from the client itself go to stderr.

Exit codes:
${table({
  "0": "the server answered 2xx",
  "1": "the server answered with an error (its error JSON is still printed)",
  "2": "usage error (unknown verb, bad or missing argument or flag, unreadable file or config)",
  "3": "the server could not be reached (refused, DNS, timeout)",
})}
`;
}

function verbHelp(verb: VerbHelp): string {
  const flags = table({ ...verb.flags, ...(verb.sends ? URL_FLAG : {}), ...GLOBAL_FLAGS });
  const auth = sendsRequest(verb) && verb.auth;
  return `${usageLine(verb)}

${verb.summary[0].toUpperCase()}${verb.summary.slice(1)}.
Sends: ${verb.sends ?? "nothing (no request)"}${auth ? " with the API key" : ""}
${verb.details ? `${wrap(verb.details)}\n` : ""}
Flags:
${flags}

Example${verb.examples.length > 1 ? "s" : ""}:
${verb.examples.map((example) => `  ${example}`).join("\n")}
`;
}

async function run(argv: string[], env: Env): Promise<number> {
  const parsed = parseArgs(argv, VALUE_FLAGS, SWITCHES);
  const [name, ...args] = parsed.positionals;
  // --version wins anywhere, except that `cairn version --help` is the verb's help.
  if (parsed.switches.has("version") && !(name === VERSION_VERB.name && parsed.switches.has("help"))) {
    await write("stdout", versionLine());
    return 0;
  }
  if (name === undefined) {
    if (parsed.switches.has("help")) {
      await write("stdout", overallHelp(env));
      return 0;
    }
    await write("stderr", overallHelp(env));
    return 2;
  }
  if (name === "help") {
    const verb = verbNamed(args[0]);
    // Verbs of their own entry points (src/main.ts) print their help themselves.
    if (args.length === 1 && ["mcp", "serve", "admin"].includes(args[0])) {
      await write("stdout", `run \`cairn ${args[0]} --help\`\n`);
      return 0;
    }
    if (args.length > 1 || (args.length === 1 && !verb)) throw new UsageError(`no help for "${args.join(" ")}"; run \`cairn help\``);
    await write("stdout", verb ? verbHelp(verb) : overallHelp(env));
    return 0;
  }
  const verb = verbNamed(name);
  if (!verb) {
    if (name === "serve" || name === "admin") throw new UsageError(`"${name}" must come first: cairn ${name} …`);
    throw new UsageError(`unknown verb "${name}"`);
  }
  if (parsed.switches.has("help")) {
    await write("stdout", verbHelp(verb));
    return 0;
  }

  const allowed = new Set(["help", ...(verb.sends ? ["url"] : []), ...Object.keys(verb.flags).map(flagName)]);
  for (const flag of [...parsed.values.keys(), ...parsed.switches]) {
    if (!allowed.has(flag)) throw new UsageError(`${verb.name} does not take --${flag}`, verb.name);
  }
  const [min, max] = verb.arity;
  if (args.length < min) throw new UsageError("missing argument", verb.name);
  if (args.length > max) {
    throw new UsageError(max === 0 ? `${verb.name} takes no arguments, got "${args[0]}"` : `unexpected argument "${args[max]}"`, verb.name);
  }
  if (!sendsRequest(verb)) {
    // `cairn version`: nothing to send.
    await write("stdout", versionLine());
    return 0;
  }
  const input: Input = {
    verb: verb.name,
    args,
    all: (flag) => parsed.values.get(flag) ?? [],
    one(flag) {
      const values = parsed.values.get(flag) ?? [];
      if (values.length > 1) throw new UsageError(`--${flag} given more than once`, verb.name);
      return values[0];
    },
  };

  const path = configPath(env);
  let cached: ConfigFile | undefined;
  const config = () => (cached ??= readConfig(path));
  const target = resolveTarget(input.one("url"), env, config);
  const base = target.base;
  const timeout = timeoutMs(env);
  const request = await verb.build(input);
  const key = verb.auth ? resolveKey(env, config) : undefined;
  if (verb.name === "register") {
    // An unusable config file must stop us before a one-time key is issued, and
    // so must a saved key: replacing it would orphan the notes written with it
    // (only their author's key can delete them).
    const saved = config().api_key;
    if (saved?.trim() && !parsed.switches.has("force")) {
      throw new UsageError(
        `${path} already holds an API key; registering again would replace it, and the notes written with it could no longer be deleted. ` +
          "Keep it (nothing to do), use another XDG_CONFIG_HOME, or add --force to replace it (save the old key first)",
        verb.name,
      );
    }
  }

  let response;
  try {
    response = await send(base, request, { key, timeoutMs: timeout, userAgent: `cairn-cli/${VERSION}` });
  } catch (error) {
    if (error instanceof UnreachableError) throw new UnreachableError(`${error.message}; ${unreachableHint(target)}`);
    throw error;
  }
  const out = new Uint8Array(response.body.length + 1);
  out.set(response.body);
  out[response.body.length] = 0x0a;
  await write("stdout", out);

  if (response.status >= 300 && response.status < 400 && response.location) {
    const moved = redirectBase(response.location, base, request.path);
    await say(
      `the server redirects to ${response.location}; not followed` +
        (moved ? `. To use that server, give its base URL ${moved} with --url or CAIRN_URL` : ""),
    );
  }
  const ok = response.status >= 200 && response.status < 300;
  if (ok && verb.name === "register") return saveKey(path, base, response.body);
  if (ok && verb.name === "rotate-key") return saveRotatedKey(path, response.body, Boolean(env.CAIRN_API_KEY?.trim()));
  return ok ? 0 : 1;
}

/** The `api_key` of a register or rotate-key answer; null when it has none. */
function apiKeyOf(body: Uint8Array): string | null {
  try {
    const apiKey: unknown = JSON.parse(new TextDecoder().decode(body)).api_key;
    return typeof apiKey === "string" && apiKey !== "" ? apiKey : null;
  } catch {
    return null;
  }
}

/**
 * After `rotate-key`: the old key no longer works, so the new one must not be
 * lost. It replaces the saved key (atomically, 0600); when that fails, or the
 * key in use came from CAIRN_API_KEY, stderr says so and shows the new key.
 */
async function saveRotatedKey(path: string, body: Uint8Array, fromEnvironment: boolean): Promise<number> {
  const apiKey = apiKeyOf(body);
  if (apiKey === null) {
    await say("the answer carried no api_key; the config file was not changed");
    return 1;
  }
  try {
    saveConfig(path, { api_key: apiKey });
  } catch (error) {
    await say(`could not save the new key to ${path}: ${(error as Error).message}`);
    await say(`your new API key is ${apiKey} ; the old key no longer works: keep this one (set CAIRN_API_KEY or fix the config file)`);
    return 1;
  }
  await say(`saved the new api_key to ${path}; the old key no longer works`);
  if (fromEnvironment) await say("CAIRN_API_KEY still holds the old key (it wins over the config file): set it to the new one or unset it");
  return 0;
}

async function saveKey(path: string, base: string, body: Uint8Array): Promise<number> {
  const apiKey = apiKeyOf(body);
  if (apiKey === null) {
    await say("the answer carried no api_key; the config file was not changed");
    return 1;
  }
  try {
    saveConfig(path, { url: base, api_key: apiKey });
  } catch (error) {
    await say(`could not save the key to ${path}: ${(error as Error).message}; the api_key printed above is your only copy`);
    return 1;
  }
  await say(`saved the url and api_key to ${path}`);
  return 0;
}

export async function runCli(argv: string[], env: Env = process.env): Promise<number> {
  try {
    return await run(argv, env);
  } catch (error) {
    if (error instanceof UsageError) {
      const verb = verbNamed(error.verb);
      const hint = verb ? `${usageLine(verb)}\nrun \`cairn ${verb.name} --help\` for details` : "run `cairn --help` for usage";
      await write("stderr", `cairn: ${error.message}\n${hint}\n`);
      return 2;
    }
    if (error instanceof ConfigError) {
      await say(error.message);
      return 2;
    }
    if (error instanceof UnreachableError) {
      await say(error.message);
      return 3;
    }
    throw error;
  }
}
