import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseEnvText, readEnvFile } from "../src/env-file.ts";
import { ConfigError } from "../src/errors.ts";

const values = (text: string) => Object.fromEntries([...parseEnvText(text, "/x.env")].map(([k, v]) => [k, v.value]));

function parseError(text: string): ConfigError {
  try {
    parseEnvText(text, "/etc/mc-backup/backup.env");
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("parseEnvText", () => {
  it("reads shell-style lines: comments, blanks, export, both quotes, trailing comments", () => {
    const text = [
      "# backup settings",
      "",
      "CONTROL_URL=https://panel.example.com",
      "export SERVER_ID=1a2b3c4d",
      "  WORLD_DIR='/var/lib/pterodactyl/volumes/abc'  # the volume",
      'RESTIC_REPOSITORY="rclone:gdrive:mc"',
      "EMPTY=",
      "LITERAL='$HOME and `cmd`'",
      'ESCAPED="a \\"quoted\\" \\$word"',
      "JOINED='a b'\"c\"d",
    ].join("\n");
    expect(values(text)).toEqual({
      CONTROL_URL: "https://panel.example.com",
      SERVER_ID: "1a2b3c4d",
      WORLD_DIR: "/var/lib/pterodactyl/volumes/abc",
      RESTIC_REPOSITORY: "rclone:gdrive:mc",
      EMPTY: "",
      LITERAL: "$HOME and `cmd`",
      ESCAPED: 'a "quoted" $word',
      JOINED: "a bcd",
    });
  });

  it("tolerates CRLF line ends and a UTF-8 byte order mark", () => {
    expect(values("\uFEFFA=1\r\nB='two'\r\n")).toEqual({ A: "1", B: "two" });
  });

  it("keeps the line number of each value and lets a later line win, as a shell would", () => {
    const entries = parseEnvText("A=1\n\nA=2\n", "/x.env");
    expect(entries.get("A")).toEqual({ value: "2", line: 3 });
  });

  it.each([
    ["KEY=a b", "line 1: the value of KEY has a space in it"],
    ["KEY='open", "line 1: the value of KEY opens a ' quote that is never closed"],
    ['KEY="open', 'line 1: the value of KEY opens a " quote that is never closed'],
    ["KEY=$HOME/x", "line 1: the value of KEY has a $ that a shell would expand"],
    ['KEY="$(rm -rf /)"', "line 1: the value of KEY has a $ that a shell would expand"],
    ["KEY=`id`", "line 1: the value of KEY has a ` that a shell would expand"],
    ["# ok\nKEY = value", "line 2: has a space before the = of KEY"],
    ["just words", "line 1: is not a KEY=value line"],
    ["1KEY=x", 'line 1: "1KEY" is not a variable name'],
  ])("refuses %j with one line naming the file and the line", (text, message) => {
    const error = parseError(text);
    expect(error.message).toBe(message);
    expect(error.where).toBe("/etc/mc-backup/backup.env");
    expect(error.exitCode).toBe(78);
  });

  it("never repeats the value in an error (it may be a secret)", () => {
    const error = parseError("CONTROL_KEY=ptlc_secretpart morepart");
    expect(`${error.message} ${error.hint}`).not.toContain("secretpart");
  });
});

describe("readEnvFile", () => {
  const dir = mkdtempSync(join(tmpdir(), "mcops-env-"));

  it("is undefined when the file does not exist", () => {
    expect(readEnvFile(join(dir, "absent.env"), { secret: true })).toBeUndefined();
  });

  it("refuses a secret file readable by group or others, with the chmod to run", () => {
    const file = join(dir, "open.env");
    writeFileSync(file, "A=1\n");
    chmodSync(file, 0o640);
    expect(() => readEnvFile(file, { secret: true })).toThrowError(
      expect.objectContaining({
        message: "holds secrets but is readable by its group (mode 640)",
        where: file,
        hint: `run: chmod 600 ${file}`,
        exitCode: 78,
      }),
    );
    chmodSync(file, 0o604);
    expect(() => readEnvFile(file, { secret: true })).toThrow(/readable by others \(mode 604\)/);
  });

  it("reads a mode-600 secret file, and any mode for a file that is not secret", () => {
    const file = join(dir, "ok.env");
    writeFileSync(file, "A=1\n", { mode: 0o600 });
    chmodSync(file, 0o600);
    expect(readEnvFile(file, { secret: true })?.get("A")?.value).toBe("1");
    chmodSync(file, 0o644);
    expect(readEnvFile(file, { secret: false })?.get("A")?.value).toBe("1");
  });

  it("refuses a directory in place of the file", () => {
    expect(() => readEnvFile(dir, { secret: false })).toThrow(/is not a regular file/);
  });
});
