/// <reference path="./cliui.d.ts" />
import type { Argv } from "yargs";
import stringWidth from "./string-width.ts";

/**
 * `--help` and `--version` without yargs (issue 35): loading yargs, yargs-parser and y18n and parsing with them cost
 * `webhook --help` as much as Node's own start. runTool answers a plain request for help or the version here, from the
 * tool's table of commands, and hands everything else to yargs (yargs-cli.ts, a dynamic import).
 *
 * The text is byte for byte what yargs prints: each command's `options` builder runs against a recorder of what it
 * declares (positional, option, options; check, conflicts and implies change no help and are ignored), and the recorded
 * options are laid out with cliui, yargs' own layout library, in the rows, columns, padding and order of yargs'
 * lib/usage.js. Whatever this module does not model (an alias, a hidden group, an argument it does not know) makes it
 * answer nothing, and yargs answers as before. test/help.test.ts compares both for every form it models, and deploy's
 * help test does for every built executable's every command.
 */

/** What --help reads of a tool's table: runTool's Tool fits it (this module cannot import tool.ts, which imports it). */
export interface HelpTable {
  name: string;
  usage: string;
  commands: readonly HelpCommand[];
  global?: ((argv: Argv) => unknown) | undefined;
  examples?: readonly (readonly [string, string])[] | undefined;
}

export interface HelpCommand {
  command: string;
  describe: string | false;
  options?: ((argv: Argv) => unknown) | undefined;
}

/** A request this module answers: the version, or the help of the tool (no command) or of one named command. */
export type HelpRequest = { version: true } | { version: false; command: HelpCommand | undefined };

const HELP_FLAGS = ["--help", "-h"];
/** yargs' marker of a default command: its first word is `$0` or `*`. */
const DEFAULT_MARKER = /(^\*)|(^\$0)/;

/** The width --help is wrapped to, as createCli sets it: the terminal's, at most 110; 80 when it is not a terminal. */
export function helpWidth(): number {
  return Math.min(110, process.stdout.columns || 80);
}

/**
 * Whether the arguments are plainly a request yargs answers with the help or the version: `--help`, `-h` or `--version`
 * alone, or a named command followed by `--help` or `-h`. Anything else is for yargs, and so is every request when
 * MCOPS_HELP=yargs (how the tests compare both) or YARGS_DISABLE_WRAP is set (yargs' unwrapped help).
 */
export function helpRequest(
  table: HelpTable,
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): HelpRequest | undefined {
  if (env.MCOPS_HELP === "yargs" || env.YARGS_DISABLE_WRAP) return undefined;
  const [first, second, ...rest] = argv;
  if (first === undefined || rest.length > 0) return undefined;
  if (second === undefined) {
    if (first === "--version") return { version: true };
    return HELP_FLAGS.includes(first) ? { version: false, command: undefined } : undefined;
  }
  if (!HELP_FLAGS.includes(second)) return undefined;
  // yargs keeps the last command registered under a name.
  const command = table.commands.findLast((spec) => !isDefault(spec.command) && firstWord(spec.command) === first);
  return command ? { version: false, command } : undefined;
}

function firstWord(command: string): string {
  return (command.trim().split(/\s+/)[0] ?? "").replace(/\.*[\][<>]/g, "");
}

function isDefault(command: string): boolean {
  return DEFAULT_MARKER.test(firstWord(command));
}

/** What a builder declared that this module does not lay out as yargs would: the help is left to yargs. */
class Unsupported extends Error {}

/** One option or positional as yargs keeps it for its help. */
interface Entry {
  describe: string | undefined;
  types: Set<string>;
  default?: { value: unknown };
  defaultDescription?: string;
  choices?: unknown[];
  required: boolean;
  hidden: boolean;
}

/** A positional's form in the command string: `<file>` is required, `[files..]` variadic. */
interface PositionalForm {
  required: boolean;
  variadic: boolean;
}

const OPTION_KEYS = new Set([
  "type",
  "describe",
  "description",
  "desc",
  "default",
  "defaultDescription",
  "choices",
  "demandOption",
  "demand",
  "required",
  "require",
  "array",
  "requiresArg",
  "hidden",
  "coerce",
  "conflicts",
  "implies",
]);
/** What yargs' positional() keeps of its options; the rest it drops. */
const POSITIONAL_KEYS = new Set([
  "default",
  "defaultDescription",
  "implies",
  "normalize",
  "choices",
  "conflicts",
  "coerce",
  "type",
  "describe",
  "desc",
  "description",
  "alias",
]);
const TYPES = new Set(["string", "boolean", "number", "array"]);

/** What the builders declared, in yargs' order: options in the order first declared, positionals in their group. */
class Recorded {
  readonly entries = new Map<string, Entry>();
  readonly positionals: string[] = [];
  private readonly forms: ReadonlyMap<string, PositionalForm>;

  constructor(forms: ReadonlyMap<string, PositionalForm> = new Map()) {
    this.forms = forms;
  }

  option(key: string, spec: Record<string, unknown> = {}): void {
    if (["version", "help", "h", "$0", "_"].includes(key) || /^[0-9]$/.test(key)) throw new Unsupported(key);
    const unknown = Object.keys(spec).filter((name) => !OPTION_KEYS.has(name));
    if (unknown.length > 0) throw new Unsupported(unknown.join());
    const { type, choices, defaultDescription, hidden } = spec;
    const describe = spec.describe || spec.description || spec.desc;
    if (type !== undefined && !TYPES.has(type as string)) throw new Unsupported(String(type));
    if (describe !== undefined && typeof describe !== "string") throw new Unsupported("describe");
    if (typeof spec.default === "function") throw new Unsupported("default");
    const known = this.entries.get(key);
    const entry: Entry = known ?? { describe: undefined, types: new Set(), required: false, hidden: false };
    if (spec.demand || spec.required || spec.require || spec.demandOption) entry.required = true;
    if ("default" in spec) entry.default = { value: spec.default };
    if (choices) entry.choices = [...(entry.choices ?? []), ...([] as unknown[]).concat(choices)];
    if (type) entry.types.add(type as string);
    if (spec.array) entry.types.add("array");
    if (defaultDescription) entry.defaultDescription = String(defaultDescription);
    if (!known || typeof describe === "string") entry.describe = describe;
    if (hidden) entry.hidden = true;
    this.entries.set(key, entry);
  }

  positional(key: string, spec: Record<string, unknown>): void {
    const kept = Object.fromEntries(
      Object.entries(spec).filter(
        ([name, value]) =>
          POSITIONAL_KEYS.has(name) && (name !== "type" || ["string", "number", "boolean"].includes(value as string)),
      ),
    );
    if ("alias" in kept || "normalize" in kept) throw new Unsupported("alias");
    const form = this.forms.get(key);
    if (form?.variadic) {
      kept.array = true;
      if (!("default" in kept)) kept.default = [];
    }
    if (form?.required) kept.demand = true;
    if (!this.positionals.includes(key)) this.positionals.push(key);
    this.option(key, kept);
  }

  /** A stand-in for yargs' Argv that records what a builder declares; anything else it is asked for is Unsupported. */
  argv(): Argv {
    const argv: unknown = new Proxy(
      {},
      {
        get: (_, name) => {
          switch (name) {
            case "option":
            case "options":
              return (key: string | Record<string, Record<string, unknown>>, spec?: Record<string, unknown>) => {
                if (typeof key === "string") this.option(key, spec);
                else for (const [each, one] of Object.entries(key)) this.option(each, one);
                return argv;
              };
            case "positional":
              return (key: string, spec: Record<string, unknown>) => {
                this.positional(key, spec);
                return argv;
              };
            case "check":
            case "conflicts":
            case "implies":
              return () => argv;
            default:
              throw new Unsupported(String(name));
          }
        },
      },
    );
    return argv as Argv;
  }
}

/** The positionals of a command string as yargs' parseCommand reads them (`restore [snapshot]`, `scan <files..>`). */
function positionalForms(command: string): Map<string, PositionalForm> {
  const words = command
    .replace(/\s{2,}/g, " ")
    .split(/\s+(?![^[]*]|[^<]*>)/)
    .slice(1);
  return new Map(
    words.map((word, i) => {
      const name = word.replace(/\s/g, "").replace(/\.*[\][<>]/g, "");
      if (name.includes("|")) throw new Unsupported("alias");
      const variadic = /\.+[\]>]/.test(word) && i === words.length - 1;
      return [name, { required: !word.startsWith("["), variadic }];
    }),
  );
}

/** What yargs' help shows: its usage lines, the commands (top level only), the options, the examples. */
interface HelpParts {
  usages: [string, string][];
  commands: [command: string, describe: string, isDefault: boolean][];
  recorded: Recorded;
  examples: readonly (readonly [string, string])[];
}

/** Runs the builders yargs runs for this help, in yargs' order: its own options, the global ones, the command's. */
function helpParts(table: HelpTable, command: HelpCommand | undefined): HelpParts {
  const recorded = new Recorded(command ? positionalForms(command.command) : undefined);
  recorded.entries.set("version", builtIn("Show version number"));
  recorded.entries.set("help", builtIn("Show help"));
  table.global?.(recorded.argv());
  if (command) {
    command.options?.(recorded.argv());
    return { usages: [[`$0 ${command.command}`, command.describe || ""]], commands: [], recorded, examples: [] };
  }
  const commands: HelpParts["commands"] = [];
  for (const spec of table.commands) {
    if (spec.describe === false) continue;
    const isDefault = DEFAULT_MARKER.test(firstWord(spec.command));
    if (isDefault) for (const row of commands) row[2] = false;
    commands.push([spec.command.replace(DEFAULT_MARKER, "$0"), spec.describe, isDefault]);
  }
  // At the top level yargs runs the default command's builder (the last one registered) for its options.
  table.commands.findLast((spec) => isDefault(spec.command))?.options?.(recorded.argv());
  return { usages: [[table.usage, ""]], commands, recorded, examples: table.examples ?? [] };
}

function builtIn(describe: string): Entry {
  return { describe, types: new Set(["boolean"]), required: false, hidden: false };
}

/** The text yargs prints for the request, without its final newline; undefined when yargs must answer it. */
export async function renderHelp(table: HelpTable, command: HelpCommand | undefined): Promise<string | undefined> {
  let parts: HelpParts;
  try {
    parts = helpParts(table, command);
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
  const { default: cliui } = await import("cliui");
  return layOut(cliui({ width: helpWidth(), wrap: true }), table.name, parts, helpWidth());
}

type UI = import("cliui").UI;

/** yargs' usage.js help(): the same calls to cliui, in the same order. */
function layOut(ui: UI, name: string, parts: HelpParts, wrap: number): string {
  for (const [usage, description] of parts.usages) {
    ui.div({ text: usage.replace(/\$0/g, name) });
    if (description) ui.div({ text: description, padding: [1, 0, 0, 0] });
  }
  ui.div();
  const { commands } = parts;
  if (commands.length > 1 || (commands.length === 1 && !commands[0]?.[2])) {
    ui.div("Commands:");
    const width = maxWidth(
      commands.map(([command]) => `${name} ${command}`),
      wrap,
    );
    for (const [command, describe, isDefault] of commands) {
      const text = `${name} ${command.replace(/^\$0 ?/, "")}`;
      ui.span({ text, padding: [0, 2, 0, 2], width: width + 4 }, { text: describe });
      if (isDefault) ui.div({ text: "[default]", padding: [0, 0, 0, 2], align: "right" });
      else ui.div();
    }
    ui.div();
  }
  layOutOptions(ui, parts.recorded, wrap);
  if (parts.examples.length > 0) {
    ui.div("Examples:");
    const examples = parts.examples.map(([example, description]) => [example.replace(/\$0/g, name), description]);
    const width = maxWidth(
      examples.map(([example]) => example ?? ""),
      wrap,
    );
    for (const [text = "", description] of examples) {
      if (description === "") ui.div({ text, padding: [0, 2, 0, 2] });
      else ui.div({ text, padding: [0, 2, 0, 2], width: width + 4 }, { text: description ?? "" });
    }
    ui.div();
  }
  return ui.toString().replace(/\s*$/, "");
}

/** One row of a group: its switches ("--dry-run", "-h, --help", or a positional's name) and how far they are indented. */
interface Row {
  key: string;
  switches: string;
  indent: number;
}

/** The Positionals and Options groups, as usage.js lays them out. */
function layOutOptions(ui: UI, recorded: Recorded, wrap: number): void {
  const { entries, positionals } = recorded;
  const shown = (key: string) => !entries.get(key)?.hidden;
  const positionalRows = positionals.filter(shown).map((key) => ({ key, switches: key, indent: 0 }));
  // The options in the order first described; yargs lists help last, under its alias h, and indents every long switch
  // by the width of "-x, " because a short one (-h) is in the group.
  const optionRows: Row[] = [...entries.keys()]
    .filter((key) => key !== "help" && !positionals.includes(key) && shown(key))
    .map((key) =>
      key.length > 1 ? { key, switches: `--${key}`, indent: 4 } : { key, switches: `-${key}`, indent: 0 },
    );
  optionRows.push({ key: "help", switches: "-h, --help", indent: 0 });
  for (const [group, rows] of [
    ["Positionals:", positionalRows],
    ["Options:", optionRows],
  ] as const) {
    if (rows.length === 0) continue;
    ui.div(group);
    const width = maxWidth(
      rows.map(({ switches }) => switches),
      wrap,
      rows.map(({ indent }) => indent),
    );
    for (const { key, switches, indent } of rows) {
      const entry = entries.get(key) as Entry;
      ui.span({ text: switches, padding: [0, 2, 0, 2 + indent], width: width + 4 }, entry.describe || "");
      const extra = annotations(entry);
      if (extra) ui.div({ text: extra, padding: [0, 0, 0, 2], align: "right" });
      else ui.div();
    }
    ui.div();
  }
}

/** `[string] [required] [choices: "a", "b"] [default: "x"]`, in usage.js's order (the last type named wins). */
function annotations(entry: Entry): string {
  let type: string | undefined;
  for (const name of ["boolean", "string", "array", "number"]) if (entry.types.has(name)) type = `[${name}]`;
  const choices = entry.choices && `[choices: ${entry.choices.map((value) => JSON.stringify(value)).join(", ")}]`;
  return [type, entry.required ? "[required]" : undefined, choices, defaultString(entry)].filter(Boolean).join(" ");
}

function defaultString({ default: given, defaultDescription }: Entry): string | undefined {
  const value = given?.value;
  if (value === undefined && !defaultDescription) return undefined;
  if (defaultDescription) return `[default: ${defaultDescription}]`;
  if (typeof value === "string") return `[default: "${value}"]`;
  return `[default: ${typeof value === "object" ? JSON.stringify(value) : String(value)}]`;
}

/** usage.js's maxWidth: the widest text (plus its indentation), at most half the wrap. */
function maxWidth(texts: string[], wrap: number, indents: number[] = []): number {
  const widest = Math.max(0, ...texts.map((text, i) => stringWidth(text) + (indents[i] ?? 0)));
  return Math.min(widest, Math.floor(wrap * 0.5));
}
