import { createHmac } from "node:crypto";
import { statSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { Clock } from "@mcops/core/clock";
import { formatDuration } from "@mcops/core/format";
import { isErrno } from "@mcops/core/fs";
import type { Logger } from "@mcops/core/log";
import { readPasswdFile, verifyPassword } from "./passwd.ts";
import { describeError } from "./settings-store.ts";

/**
 * HTTP basic auth (RFC 7617) against dashboard.passwd, for every request. Failed sign-ins are slowed per client
 * address: the k-th failure in a row is answered only after `baseMs * 2^(k-1)` (at most `maxMs`), and until then that
 * address gets 429 at once, without its password being looked at, so guesses sent in parallel gain nothing. A proven
 * Authorization header is remembered (its HMAC, in memory, for `rememberMs`) so that pages and the stylesheet do not
 * run scrypt each time; a change to the password file forgets them all.
 */
export interface ThrottleOptions {
  /** First penalty (default 500 ms); doubles with each failure in a row. */
  baseMs?: number;
  /** Longest penalty (default 60 s). */
  maxMs?: number;
  /** An address's failures are forgotten after this long without one (default 15 min). */
  forgetMs?: number;
  /** Addresses remembered at most (oldest forgotten first). */
  maxAddresses?: number;
}

interface LoginThrottle {
  /** How long `address` must still wait before its credentials are looked at; 0: go ahead. */
  waitMs(address: string): number;
  /** One more failure: the penalty now in force. */
  failed(address: string): { failures: number; penaltyMs: number };
  succeeded(address: string): void;
}

export function createLoginThrottle(clock: Clock, options: ThrottleOptions = {}): LoginThrottle {
  const { baseMs = 500, maxMs = 60_000, forgetMs = 15 * 60_000, maxAddresses = 10_000 } = options;
  const seen = new Map<string, { failures: number; until: number; last: number }>();
  const current = (address: string) => {
    const entry = seen.get(address);
    if (entry && clock.now() - entry.last > forgetMs) {
      seen.delete(address);
      return undefined;
    }
    return entry;
  };
  return {
    waitMs(address) {
      return Math.max(0, (current(address)?.until ?? 0) - clock.now());
    },
    failed(address) {
      const failures = (current(address)?.failures ?? 0) + 1;
      const penaltyMs = Math.min(maxMs, baseMs * 2 ** Math.min(failures - 1, 30));
      seen.delete(address);
      seen.set(address, { failures, until: clock.now() + penaltyMs, last: clock.now() });
      if (seen.size > maxAddresses) seen.delete(seen.keys().next().value as string);
      return { failures, penaltyMs };
    },
    succeeded(address) {
      seen.delete(address);
    },
  };
}

export type AuthResult =
  | { ok: true; user: string }
  /** 401: no credentials, or wrong ones (after the penalty). */
  | { ok: false; status: 401 }
  /** 429: this address must wait. */
  | { ok: false; status: 429; retryAfterS: number }
  /** 503: the password file is missing or unusable; nobody can sign in. */
  | { ok: false; status: 503 };

interface AuthenticatorOptions {
  file: string;
  clock: Clock;
  logger: Logger;
  /** Server secret for the remembered-credentials keys. */
  secret: Buffer;
  throttle?: ThrottleOptions;
  /** How long a proven Authorization header is remembered (default 10 min). */
  rememberMs?: number;
  /**
   * Trust X-Real-IP from a proxy on the loopback address (nginx). Default false: the connection's address counts, so
   * that nobody on the machine escapes the slowdown by sending another X-Real-IP (server.ts: DASHBOARD_TRUST_PROXY=1).
   */
  trustProxy?: boolean;
}

/**
 * The client's address: the connection's, or, only when `trustProxy` (DASHBOARD_TRUST_PROXY=1) and the connection comes
 * from the loopback address (nginx), the proxy's X-Real-IP.
 */
export function clientAddress(req: IncomingMessage, trustProxy = false): string {
  const peer = (req.socket.remoteAddress ?? "unknown").replace(/^::ffff:/, "");
  const real = req.headers["x-real-ip"];
  const loopback = peer === "::1" || peer.startsWith("127.");
  if (trustProxy && loopback && typeof real === "string" && isIP(real.trim())) return real.trim();
  return peer;
}

/** user and password of a Basic Authorization header; undefined when there is none or it is malformed. */
export function parseBasic(header: string | undefined): { user: string; password: string } | undefined {
  const match = header === undefined ? null : /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header.trim());
  if (!match) return undefined;
  const text = Buffer.from(match[1] as string, "base64").toString("utf8");
  const colon = text.indexOf(":");
  if (colon < 0) return undefined;
  return { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** A user name from the wire, fit for one log line. */
const printable = (text: string) => JSON.stringify(text.replace(/[^\x20-\x7e]/g, "?").slice(0, 64));

export function createAuthenticator(options: AuthenticatorOptions) {
  const { file, clock, logger, secret, rememberMs = 10 * 60_000, trustProxy = false } = options;
  const throttle = createLoginThrottle(clock, options.throttle);
  const remembered = new Map<string, { user: string; until: number }>();
  /** Checks in progress per address: they run one after another. */
  const queues = new Map<string, { tail: Promise<unknown>; waiting: number }>();
  let stamp = "";
  let users: Map<string, string> | undefined;
  let problem: string | undefined;

  /** Reloads the file when it changed (a `dashboard passwd` takes effect without a restart). */
  function refresh(): void {
    let next: string;
    try {
      const s = statSync(file);
      next = `${s.ino}:${s.size}:${s.mtimeMs}:${s.mode}`;
    } catch (error) {
      next = isErrno(error, "ENOENT") ? "absent" : "unreadable";
    }
    if (next === stamp) return;
    stamp = next;
    remembered.clear();
    try {
      users = readPasswdFile(file);
      problem = users?.size ? undefined : `no password is set (${file}) — run: dashboard passwd`;
    } catch (error) {
      users = undefined;
      problem = describeError(error);
    }
    if (problem) logger.error(`nobody can sign in: ${problem}`);
  }

  /** Looks at the password (one check at a time per address); the penalty of a failure is waited out after it. */
  async function verify(address: string, user: string, password: string, key: string): Promise<AuthResult | number> {
    const wait = throttle.waitMs(address);
    if (wait > 0) return { ok: false, status: 429, retryAfterS: Math.ceil(wait / 1000) };
    const hash = users?.get(user);
    // An unknown user costs the same scrypt as a known one, so timing does not tell which names exist.
    const any = hash ?? (users?.values().next().value as string);
    const good = (await verifyPassword(password, any)) && hash !== undefined;
    if (good) {
      throttle.succeeded(address);
      remembered.set(key, { user, until: clock.now() + rememberMs });
      if (remembered.size > 64) remembered.delete(remembered.keys().next().value as string);
      return { ok: true, user };
    }
    const { failures, penaltyMs } = throttle.failed(address);
    // An unknown name is not written down: it is often the password, typed into the wrong field.
    const who = hash === undefined ? "an unknown user name" : printable(user);
    logger.warn(
      `failed sign-in as ${who} from ${address} (${failures} in a row); next try in ${formatDuration(penaltyMs)}`,
    );
    return penaltyMs;
  }

  return {
    /** How long `address` must still wait before its next sign-in is looked at (0: none); the slowdown's state. */
    waitMs(address: string): number {
      return throttle.waitMs(address);
    },
    async check(req: IncomingMessage): Promise<AuthResult> {
      refresh();
      if (problem) return { ok: false, status: 503 };
      const header = req.headers.authorization;
      const credentials = parseBasic(header);
      if (!credentials || header === undefined) return { ok: false, status: 401 };
      const key = createHmac("sha256", secret).update(header).digest("base64url");
      const known = remembered.get(key);
      if (known && known.until > clock.now()) return { ok: true, user: known.user };
      const address = clientAddress(req, trustProxy);
      const wait = throttle.waitMs(address);
      if (wait > 0) return { ok: false, status: 429, retryAfterS: Math.ceil(wait / 1000) };
      const queue = queues.get(address) ?? { tail: Promise.resolve(), waiting: 0 };
      if (queue.waiting >= 4) return { ok: false, status: 429, retryAfterS: 1 };
      queue.waiting++;
      queues.set(address, queue);
      const checked = queue.tail.then(() => verify(address, credentials.user, credentials.password, key));
      queue.tail = checked.catch(() => undefined);
      let result: AuthResult | number;
      try {
        result = await checked;
      } finally {
        if (--queue.waiting === 0) queues.delete(address);
      }
      if (typeof result !== "number") return result;
      await clock.sleep(result);
      return { ok: false, status: 401 };
    },
  };
}
