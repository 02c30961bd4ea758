import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { readConfigText } from "@mcops/core/env-file";
import { ConfigError, UsageError } from "@mcops/core/errors";
import { writeFileAtomic } from "@mcops/core/fs";
import type { Paths } from "@mcops/core/paths";

/**
 * The sign-in file, `/etc/mc-backup/dashboard.passwd` (mode 600, like every file holding a secret): one line per user,
 * `user:$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (base64, PHC-style). scrypt from node:crypto, a random 16-byte salt per
 * password, 32-byte hash, compared with timingSafeEqual. The cost is stored with each hash, so a later default can
 * change without invalidating what is there.
 */
interface ScryptCost {
  /** log2 of scrypt's N. */
  ln: number;
  r: number;
  p: number;
}

/** N = 32768, r = 8: 32 MiB and about 0.1 s per check on the reference VM (OWASP's minimum is N = 2^17 with r = 8
 * and p = 1 for a server with memory to spare; a 4 GB VM that also runs the game is not that server, and the sign-in is
 * slowed per address on top). */
const DEFAULT_COST: ScryptCost = { ln: 15, r: 8, p: 1 };

const KEY_LENGTH = 32;
const MIN_PASSWORD = 10;
const MAX_PASSWORD = 1024;
const USER_NAME = /^[A-Za-z0-9._-]{1,64}$/;

export const passwdFile = (paths: Paths): string => join(paths.configDir, "dashboard.passwd");

function derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const N = 2 ** cost.ln;
  return new Promise((resolve, reject) =>
    scrypt(
      Buffer.from(password.normalize("NFC"), "utf8"),
      salt,
      KEY_LENGTH,
      { N, r: cost.r, p: cost.p, maxmem: 256 * N * cost.r },
      (error, key) => (error ? reject(error) : resolve(key)),
    ),
  );
}

const b64 = (buffer: Buffer) => buffer.toString("base64").replace(/=+$/, "");

export async function hashPassword(password: string, cost: ScryptCost = DEFAULT_COST): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, cost);
  return `$scrypt$ln=${cost.ln},r=${cost.r},p=${cost.p}$${b64(salt)}$${b64(key)}`;
}

const HASH = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]{16,})\$([A-Za-z0-9+/]{32,})$/;

interface ParsedHash {
  cost: ScryptCost;
  salt: Buffer;
  key: Buffer;
}

/** A stored hash, or a description of what is wrong with it. Costs are bounded so a crafted file cannot stall us. */
function parseHash(encoded: string): ParsedHash | string {
  const match = HASH.exec(encoded);
  if (!match) return "is not a $scrypt$ hash";
  const [ln, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (ln < 10 || ln > 20 || r < 1 || r > 32 || p < 1 || p > 16) return "has a scrypt cost outside the accepted range";
  const key = Buffer.from(match[5] as string, "base64");
  if (key.length !== KEY_LENGTH) return `has a ${key.length}-byte hash, not ${KEY_LENGTH}`;
  return { cost: { ln, r, p }, salt: Buffer.from(match[4] as string, "base64"), key };
}

export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const parsed = parseHash(encoded);
  if (typeof parsed === "string") return false;
  const key = await derive(password, parsed.salt, parsed.cost);
  return timingSafeEqual(key, parsed.key);
}

/** user → hash, in file order; undefined when the file does not exist. Refused (exit 78) when others may read it. */
export function readPasswdFile(file: string): Map<string, string> | undefined {
  const text = readConfigText(file, { secret: true });
  if (text === undefined) return undefined;
  const users = new Map<string, string>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const colon = line.indexOf(":");
    const user = line.slice(0, Math.max(0, colon));
    const problem = colon <= 0 || !USER_NAME.test(user) ? "is not a user:hash line" : parseHash(line.slice(colon + 1));
    if (typeof problem === "string") {
      throw new ConfigError(`line ${index + 1} ${problem}`, {
        where: file,
        hint: `set the password again with: dashboard passwd --user ${USER_NAME.test(user) ? user : "admin"}`,
      });
    }
    users.set(user, line.slice(colon + 1));
  });
  return users;
}

function checkNewPassword(password: string): void {
  if (password.length < MIN_PASSWORD) {
    throw new UsageError(`the password is too short (${password.length} characters)`, {
      hint: `use at least ${MIN_PASSWORD}; a few random words make a good one`,
    });
  }
  if (password.length > MAX_PASSWORD) {
    throw new UsageError(`the password is too long (${password.length} characters)`, {
      hint: `use at most ${MAX_PASSWORD}`,
    });
  }
  if (/[\r\n]/.test(password)) throw new UsageError("the password has a line break in it", { hint: "use one line" });
}

/** Sets (adds or replaces) one user's password; the file is rewritten whole, atomically, mode 600. */
export async function setPassword(
  file: string,
  user: string,
  password: string,
  cost: ScryptCost = DEFAULT_COST,
): Promise<"added" | "changed"> {
  if (!USER_NAME.test(user)) {
    throw new UsageError(`"${user.slice(0, 64)}" is not a user name`, {
      where: "--user",
      hint: "use letters, digits, dot, dash and underscore (at most 64)",
    });
  }
  checkNewPassword(password);
  const users = readPasswdFile(file) ?? new Map<string, string>();
  const had = users.has(user);
  users.set(user, await hashPassword(password, cost));
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const lines = [...users].map(([name, hash]) => `${name}:${hash}`);
  writeFileAtomic(file, `${lines.join("\n")}\n`, 0o600);
  return had ? "changed" : "added";
}
