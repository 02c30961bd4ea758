import { readFileSync, statSync } from "node:fs";
import { ConfigError } from "./errors.ts";
import { isErrno } from "./fs.ts";

/**
 * Env files are `KEY=value` lines as a shell would `source` them: comments, blank lines, an optional `export `, single
 * or double quotes. Nothing in them is executed or expanded. Where a shell would do something other than take the text
 * literally (a `$` or backtick that would expand, an unquoted space that would run a command, a quote left open), the
 * line is refused with its number rather than read differently from how backup.sh used to read it. Values are never
 * echoed in errors: they may be secrets.
 */
interface EnvEntry {
  value: string;
  line: number;
}

export type EnvEntries = Map<string, EnvEntry>;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function parseEnvText(text: string, file: string): EnvEntries {
  const entries: EnvEntries = new Map();
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  lines.forEach((raw, index) => {
    const lineNo = index + 1;
    const fail = (what: string, hint: string): never => {
      throw new ConfigError(`line ${lineNo}: ${what}`, { where: file, hint });
    };
    let line = raw.replace(/\r$/, "").trimStart();
    if (line === "" || line.startsWith("#")) return;
    if (line.startsWith("export ") || line.startsWith("export\t")) line = line.slice(7).trimStart();
    const eq = line.indexOf("=");
    if (eq <= 0) fail("is not a KEY=value line", "write it as KEY=value, or start it with # to make it a comment");
    const name = line.slice(0, eq);
    if (name !== name.trimEnd() && NAME.test(name.trimEnd())) {
      fail(`has a space before the = of ${name.trimEnd()}`, "write it as KEY=value, with no spaces around the =");
    }
    if (!NAME.test(name)) {
      fail(
        `"${name.slice(0, 40)}" is not a variable name`,
        "use letters, digits and _ with no spaces around the =, e.g. SERVER_ID=1a2b3c4d",
      );
    }
    entries.set(name, { value: parseValue(line.slice(eq + 1), name, fail), line: lineNo });
  });
  return entries;
}

function parseValue(rest: string, name: string, fail: (what: string, hint: string) => never): string {
  let value = "";
  let i = 0;
  const quoteHint = `put the whole value in single quotes: ${name}='...'`;
  while (i < rest.length) {
    const ch = rest[i] as string;
    if (ch === " " || ch === "\t") break;
    if (ch === "'") {
      const end = rest.indexOf("'", i + 1);
      if (end < 0)
        fail(`the value of ${name} opens a ' quote that is never closed`, "close the quote on the same line");
      value += rest.slice(i + 1, end);
      i = end + 1;
    } else if (ch === '"') {
      i++;
      let closed = false;
      while (i < rest.length) {
        const c = rest[i] as string;
        if (c === '"') {
          closed = true;
          i++;
          break;
        }
        if (c === "\\" && i + 1 < rest.length && '"\\$`'.includes(rest[i + 1] as string)) {
          value += rest[i + 1];
          i += 2;
          continue;
        }
        if (c === "$" || c === "`") {
          fail(`the value of ${name} has a ${c} that a shell would expand`, quoteHint);
        }
        value += c;
        i++;
      }
      if (!closed)
        fail(`the value of ${name} opens a " quote that is never closed`, "close the quote on the same line");
    } else if (ch === "$" || ch === "`") {
      fail(`the value of ${name} has a ${ch} that a shell would expand`, quoteHint);
    } else if (ch === "\\") {
      fail(`the value of ${name} has a backslash outside quotes`, quoteHint);
    } else {
      value += ch;
      i++;
    }
  }
  const tail = rest.slice(i).trim();
  if (tail !== "" && !tail.startsWith("#")) {
    fail(`the value of ${name} has a space in it`, quoteHint);
  }
  return value;
}

interface ReadEnvFileOptions {
  /** The file holds a secret: refuse it when group or others may read it (docs/contract.md). */
  secret: boolean;
}

/** Reads an env file; `undefined` when it does not exist. */
export function readEnvFile(file: string, options: ReadEnvFileOptions): EnvEntries | undefined {
  const text = readConfigText(file, options);
  return text === undefined ? undefined : parseEnvText(text, file);
}

/** Reads a config file's text, enforcing the mode-600 rule for secrets; `undefined` when it does not exist. */
export function readConfigText(file: string, { secret }: ReadEnvFileOptions): string | undefined {
  let mode: number;
  try {
    const stat = statSync(file);
    if (!stat.isFile())
      throw new ConfigError("is not a regular file", { where: file, hint: "point to the file itself" });
    mode = stat.mode;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    if (isErrno(error, "ENOENT")) return undefined;
    throw unreadable(file, error);
  }
  if (secret) refuseShared(file, mode);
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw unreadable(file, error);
  }
}

/** docs/contract.md: a file holding a secret that its group or others can read is refused (exit 78), with the chmod to run. */
export function refuseShared(file: string, mode: number = statSync(file).mode): void {
  if ((mode & 0o077) === 0) return;
  throw new ConfigError(`holds secrets but is readable by ${readers(mode)} (mode ${(mode & 0o777).toString(8)})`, {
    where: file,
    hint: `run: chmod 600 ${file}`,
  });
}

function readers(mode: number): string {
  if (mode & 0o070 && mode & 0o007) return "group and others";
  return mode & 0o070 ? "its group" : "others";
}

function unreadable(file: string, error: unknown): ConfigError {
  const code = (error as NodeJS.ErrnoException).code ?? "error";
  return new ConfigError(`cannot be read (${code})`, {
    where: file,
    hint: code === "EACCES" ? "run as root, or as the user that owns the file" : "check the file and its directory",
    cause: error,
  });
}
