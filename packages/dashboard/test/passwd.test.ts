import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, formatErrorLine, type McopsError, UsageError } from "@mcops/core/errors";
import { type TempDir, tempDir } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hashPassword, readPasswdFile, setPassword, verifyPassword } from "../src/passwd.ts";

const CHEAP = { ln: 10, r: 8, p: 1 };
/** The one line the tool would print for what `fn` throws. */
function errorLine(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return formatErrorLine("dashboard", error as McopsError);
  }
  return "(nothing thrown)";
}

let dir: TempDir;
let file: string;
beforeEach(() => {
  dir = tempDir("mcops-passwd-");
  file = join(dir.path, "etc", "dashboard.passwd");
});
afterEach(() => dir.cleanup());

describe("password hashes", () => {
  it("are salted scrypt that accepts the password and nothing else", async () => {
    const a = await hashPassword("correct horse battery", CHEAP);
    const b = await hashPassword("correct horse battery", CHEAP);
    expect(a).toMatch(/^\$scrypt\$ln=10,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword("correct horse battery", a)).toBe(true);
    expect(await verifyPassword("correct horse batterY", a)).toBe(false);
    expect(await verifyPassword("", a)).toBe(false);
  });

  it("use the default cost of N = 2^15 unless told", async () => {
    expect(await hashPassword("correct horse battery")).toMatch(/^\$scrypt\$ln=15,r=8,p=1\$/);
  });

  it("treat the same text typed in other Unicode forms as the same password", async () => {
    const hash = await hashPassword("Mot de passe \u00e9t\u00e9", CHEAP);
    expect(await verifyPassword("Mot de passe e\u0301te\u0301", hash)).toBe(true);
  });

  it("refuse a malformed hash or a crafted cost instead of running it", async () => {
    const hash = await hashPassword("correct horse battery", CHEAP);
    expect(await verifyPassword("correct horse battery", hash.replace("ln=10", "ln=30"))).toBe(false);
    expect(await verifyPassword("correct horse battery", "plain")).toBe(false);
  });
});

describe("dashboard.passwd", () => {
  it("is written atomically at mode 600, one user:hash line per user, replacing a user's old line", async () => {
    expect(await setPassword(file, "admin", "first password", CHEAP)).toBe("added");
    expect(await setPassword(file, "alice", "alice's password", CHEAP)).toBe("added");
    const before = readFileSync(file, "utf8");
    expect(await setPassword(file, "admin", "second password", CHEAP)).toBe("changed");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(dir.path, "etc"))).toEqual(["dashboard.passwd"]);
    const users = readPasswdFile(file);
    expect([...(users?.keys() ?? [])]).toEqual(["admin", "alice"]);
    expect(await verifyPassword("second password", users?.get("admin") as string)).toBe(true);
    expect(readFileSync(file, "utf8").split("\n")[1]).toBe(before.split("\n")[1]);
  });

  it("is refused when others may read it, like every file holding a secret", async () => {
    await setPassword(file, "admin", "first password", CHEAP);
    chmodSync(file, 0o644);
    expect(() => readPasswdFile(file)).toThrow(ConfigError);
    expect(errorLine(() => readPasswdFile(file))).toMatch(/readable by group and others .*chmod 600/);
  });

  it("names the line that is not a user:hash line", async () => {
    await setPassword(file, "admin", "first password", CHEAP);
    writeFileSync(file, `${readFileSync(file, "utf8")}bob:secret\n`, { mode: 0o600 });
    expect(errorLine(() => readPasswdFile(file))).toMatch(
      /line 2 is not a \$scrypt\$ hash .*dashboard passwd --user bob/,
    );
  });

  it("does not exist until a password is set", () => {
    expect(readPasswdFile(file)).toBeUndefined();
  });

  it("takes no short password and no odd user name", async () => {
    await expect(setPassword(file, "admin", "short", CHEAP)).rejects.toThrow(UsageError);
    await expect(setPassword(file, "ad min", "long enough password", CHEAP)).rejects.toThrow(/is not a user name/);
  });
});
