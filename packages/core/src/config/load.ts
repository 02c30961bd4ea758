import type { Options } from "yargs";
import * as z from "zod/mini";
import { type EnvEntries, readEnvFile } from "../env-file.ts";
import { ConfigError, UsageError } from "../errors.ts";
import { registerSecret } from "../secrets.ts";

/**
 * The loader: a tool declares each of its fields once (a schema from fields.ts, maybe a default, maybe the flag that
 * overrides it) and gets typed values resolved flag > process environment > env file > default. An error names where
 * the bad value came from: the file and its line, the environment variable, or the flag.
 */

/** The command-line option that overrides a field. */
export interface Flag {
  /** The option's name without dashes, e.g. "extra-path". */
  name: string;
  describe: string;
  /** Repeatable (`--exclude a --exclude b`): the values are joined with commas, as the env file writes a list. */
  array?: boolean;
}

/** One field of a configuration file: how its text is checked and read, and where else it may come from. */
export interface Setting<S extends z.ZodMiniType = z.ZodMiniType> {
  schema: S;
  /** Used (and checked like any other value) when no source has the field. */
  default?: string;
  flag?: Flag;
  /** The value is a credential: registered so that no output can show it. */
  secret?: boolean;
}

export type Fields = Record<string, Setting>;

/** The typed values of a set of fields. */
export type Values<F extends Fields> = { [K in keyof F]: z.output<F[K]["schema"]> };

export function setting<S extends z.ZodMiniType>(schema: S, options: Omit<Setting<S>, "schema"> = {}): Setting<S> {
  return { schema, ...options };
}

/** The fields named, from a tool's declaration (a command that needs only some of them). */
export function pickFields<F extends Fields, K extends keyof F>(fields: F, names: readonly K[]): Pick<F, K> {
  return Object.fromEntries(names.map((name) => [name, fields[name]])) as Pick<F, K>;
}

/** The yargs options of the fields that have a flag, in their declared order. */
export function flagOptions(fields: Fields): Record<string, Options> {
  const options: Record<string, Options> = {};
  for (const { flag } of Object.values(fields)) {
    if (flag) options[flag.name] = { type: "string", describe: flag.describe, ...(flag.array ? { array: true } : {}) };
  }
  return options;
}

/** Where one value came from, for error messages. */
export type Origin =
  | { kind: "flag"; flag: string }
  | { kind: "environment" }
  | { kind: "file"; file: string; line: number }
  | { kind: "default" };

function describeOrigin(name: string, origin: Origin | undefined, file: string): string {
  switch (origin?.kind) {
    case "flag":
      return `--${origin.flag}`;
    case "environment":
      return `environment variable ${name}`;
    case "file":
      return `${origin.file} line ${origin.line}`;
    default:
      return file;
  }
}

export interface Resolved {
  input: Record<string, string>;
  origins: Map<string, Origin>;
}

/**
 * The text of a flag's value, or undefined when it was not given (an empty repeatable flag is not given). A repeatable
 * flag's values are joined with commas; a plain flag given twice stays a list, which its field then refuses.
 */
function flagText(value: unknown, flag: Flag): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) return String(value);
  if (!flag.array) return value as never;
  return value.length ? value.map(String).join(",") : undefined;
}

/** Each field's text from the first source that has it: flag, environment, file, default. */
export function resolveFields(
  fields: Fields,
  entries: EnvEntries | undefined,
  file: string,
  sources: { env?: NodeJS.ProcessEnv | undefined; args?: Record<string, unknown> | undefined },
): Resolved {
  const { env = process.env, args = {} } = sources;
  const input: Record<string, string> = {};
  const origins = new Map<string, Origin>();
  for (const [name, { flag, default: fallback }] of Object.entries(fields)) {
    const flagValue = flag ? flagText(args[flag.name], flag) : undefined;
    const entry = entries?.get(name);
    if (flag && flagValue !== undefined) {
      input[name] = flagValue;
      origins.set(name, { kind: "flag", flag: flag.name });
    } else if (env[name] !== undefined) {
      input[name] = env[name] as string;
      origins.set(name, { kind: "environment" });
    } else if (entry) {
      input[name] = entry.value;
      origins.set(name, { kind: "file", file, line: entry.line });
    } else if (fallback !== undefined) {
      input[name] = fallback;
      origins.set(name, { kind: "default" });
    }
  }
  return { input, origins };
}

/** An operator's words for a zod issue (zod/mini carries no message text of its own). */
export function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      if (issue.expected === "boolean") return "must be true or false";
      return `must be ${/^[aeiou]/.test(issue.expected) ? "an" : "a"} ${issue.expected}`;
    case "unrecognized_keys":
      return `has unknown keys ${issue.keys.join(", ")}`;
    default:
      return issue.message;
  }
}

/** Parses resolved texts; the first problem is thrown as one line naming the field and where its value came from. */
export function parseResolved<S extends z.ZodMiniType>(
  schema: S,
  resolved: Resolved,
  file: string,
  missingHint: string,
): z.infer<S> {
  const result = schema.safeParse(resolved.input);
  if (result.success) return result.data;
  const issue = result.error.issues[0] as z.core.$ZodIssue;
  const name = issue.path.map(String).join(".");
  const origin = resolved.origins.get(String(issue.path[0]));
  if (resolved.input[String(issue.path[0])] === undefined) {
    throw new ConfigError(`${name} is not set`, { where: file, hint: missingHint.replace("{name}", name) });
  }
  const hint = (issue as { params?: { hint?: string } }).params?.hint;
  const where = describeOrigin(name, origin, file);
  // A bad value typed on the command line is a usage error (exit 2); one in a file or the environment, configuration.
  if (origin?.kind === "flag") throw new UsageError(`${name} ${describeIssue(issue)}`, { where, hint });
  throw new ConfigError(`${name} ${describeIssue(issue)}`, { where, hint });
}

export interface LoadOptions {
  /** The env file (secret, mode 600); it may be absent when every field comes from elsewhere. */
  file: string;
  /** The process environment (precedence over the file). */
  env?: NodeJS.ProcessEnv | undefined;
  /** Parsed command-line arguments: a field with a flag reads `args[flag.name]` (precedence over everything). */
  args?: Record<string, unknown> | undefined;
  /** Said when a required field is missing; `{name}` is the field. */
  missingHint: string;
}

/** Loads declared fields from an env file, the environment and flags. Other keys in the file are left alone. */
export function loadSettings<F extends Fields>(fields: F, options: LoadOptions): Values<F> & { file: string } {
  const entries = readEnvFile(options.file, { secret: true });
  const resolved = resolveFields(fields, entries, options.file, options);
  const shape = Object.fromEntries(Object.entries(fields).map(([name, { schema }]) => [name, schema]));
  const values = parseResolved(z.object(shape), resolved, options.file, options.missingHint) as Values<F>;
  for (const [name, { secret }] of Object.entries(fields)) {
    const value = (values as Record<string, unknown>)[name];
    if (secret && typeof value === "string") registerSecret(value);
  }
  return { ...values, file: options.file };
}
