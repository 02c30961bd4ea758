import { describe, expect, it } from "vitest";
import { BusyError, ConfigError, UsageError } from "../src/errors.ts";
import { reportError } from "../src/main.ts";
import { clearSecrets, registerSecret } from "../src/secrets.ts";
import { createCli } from "../src/yargs-cli.ts";

function report(error: unknown, debug = false, journal = false) {
  let text = "";
  const code = reportError("backup", error, { write: (t: string) => (text += t) }, { debug, journal });
  return { code, text };
}

describe("reportError", () => {
  it("writes game text in the error line visibly: no escape sequence reaches the terminal", () => {
    const error = new ConfigError('the world "w\u001b]52;c;cm0gLXJmIH4K\u0007\u001b[1A" is not in the server volume');
    expect(report(error).text).toBe(
      'backup: the world "w\\x1b]52;c;cm0gLXJmIH4K\\x07\\x1b[1A" is not in the server volume\n',
    );
  });

  it("prints the contract's one line and returns the error's exit code", () => {
    const error = new ConfigError("SERVER_ID is empty", {
      where: "/etc/mc-backup/backup.env line 3",
      hint: "give it a value",
    });
    expect(report(error)).toEqual({
      code: 78,
      text: "backup: SERVER_ID is empty (/etc/mc-backup/backup.env line 3) — give it a value\n",
    });
    expect(report(new BusyError("a backup is already running")).code).toBe(75);
    expect(report(new UsageError("bad")).code).toBe(2);
  });

  it("prints no stack trace unless debugging, and redacts secrets", () => {
    registerSecret("sekrit-token-value");
    const plain = report(new Error("boom sekrit-token-value"));
    expect(plain).toEqual({
      code: 1,
      text: "backup: unexpected error: boom *** — run again with MCOPS_DEBUG=1 and report it\n",
    });
    expect(report(new Error("boom"), true).text).toMatch(/\n\s+at /);
    clearSecrets();
  });

  it("prefixes the error line <3> and every line of the stack <7> when stderr is the journal", () => {
    const error = new ConfigError("SERVER_ID is empty", { where: "backup.env line 3", hint: "give it a value" });
    expect(report(error, false, true)).toEqual({
      code: 78,
      text: "<3>backup: SERVER_ID is empty (backup.env line 3) — give it a value\n",
    });
    const [line, ...stack] = report(new Error("boom\nsecond line"), true, true).text.split("\n");
    expect(line).toBe("<3>backup: unexpected error: boom | second line — run again with MCOPS_DEBUG=1 and report it");
    expect(stack.pop()).toBe("");
    expect(stack.slice(0, 3)).toEqual(["<7>Error: boom", "<7>second line", expect.stringMatching(/^<7>\s+at /)]);
    expect(stack.every((l) => l.startsWith("<7>"))).toBe(true);
  });
});

describe("createCli", () => {
  it("turns unknown flags and missing arguments into a one-line UsageError", async () => {
    const cli = () => createCli("webhook", ["hello", "--nope"], "$0 TITLE").command("$0 <title>", false);
    // yargs throws from the fail handler synchronously; runMain's async body turns that into a rejection, as here.
    const parse = (make: () => { parseAsync(): unknown }) => Promise.resolve().then(() => make().parseAsync());
    await expect(parse(cli)).rejects.toSatisfy(
      (e) => e instanceof UsageError && /^Unknown argument: nope/.test(e.message) && e.hint === "see webhook --help",
    );
    await expect(parse(() => createCli("webhook", [], "$0 TITLE").command("$0 <title>", false))).rejects.toBeInstanceOf(
      UsageError,
    );
  });
});
