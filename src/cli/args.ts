// A tiny argument parser: flags may come before or after positional arguments,
// `--flag value` and `--flag=value` both work, and `--` ends the flags.

/** A mistake in how the client was called: exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The verb whose usage line should follow the message, if any. */
    readonly verb?: string,
  ) {
    super(message);
  }
}

export interface ParsedArgs {
  positionals: string[];
  /** Value flags in the order given (a flag may repeat; the verb decides if that is allowed). */
  values: Map<string, string[]>;
  /** Switches (flags without a value) that were given. */
  switches: Set<string>;
}

export function parseArgs(
  argv: readonly string[],
  valueFlags: ReadonlySet<string>,
  switchFlags: ReadonlySet<string>,
): ParsedArgs {
  const parsed: ParsedArgs = { positionals: [], values: new Map(), switches: new Set() };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      parsed.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === "-" || !arg.startsWith("-")) {
      parsed.positionals.push(arg);
      continue;
    }
    if (arg === "-h") {
      parsed.switches.add("help");
      continue;
    }
    if (!arg.startsWith("--")) throw new UsageError(`unknown flag ${arg} (use -- before an argument that starts with -)`);
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    if (valueFlags.has(name)) {
      let value: string;
      if (eq !== -1) value = arg.slice(eq + 1);
      else if (i + 1 < argv.length) value = argv[++i];
      else throw new UsageError(`--${name} needs a value`);
      const list = parsed.values.get(name) ?? [];
      list.push(value);
      parsed.values.set(name, list);
    } else if (switchFlags.has(name)) {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      parsed.switches.add(name);
    } else {
      throw new UsageError(`unknown flag --${name}`);
    }
  }
  return parsed;
}
