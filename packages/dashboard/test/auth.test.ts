import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import type { Clock } from "@mcops/core/clock";
import { silentLogger } from "@mcops/core/log";
import { tempDir, virtualClock } from "@mcops/testkit";
import { describe, expect, it } from "vitest";
import { clientAddress, createAuthenticator, createLoginThrottle, parseBasic } from "../src/auth.ts";
import { createCsrf, crossOriginReason, sessionFrom } from "../src/csrf.ts";
import { setPassword } from "../src/passwd.ts";

const request = (headers: Record<string, string>, remoteAddress = "127.0.0.1") =>
  ({ headers, socket: { remoteAddress } }) as unknown as IncomingMessage;

describe("the failed sign-in slowdown", () => {
  it("doubles the wait with each failure in a row, up to its bound, per address", () => {
    const clock = virtualClock(0);
    const throttle = createLoginThrottle(clock, { baseMs: 500, maxMs: 4000 });
    expect(throttle.waitMs("1.2.3.4")).toBe(0);
    const penalties = [1, 2, 3, 4, 5, 6].map(() => throttle.failed("1.2.3.4").penaltyMs);
    expect(penalties).toEqual([500, 1000, 2000, 4000, 4000, 4000]);
    expect(throttle.waitMs("1.2.3.4")).toBe(4000);
    expect(throttle.waitMs("5.6.7.8")).toBe(0);
    clock.advance(4000);
    expect(throttle.waitMs("1.2.3.4")).toBe(0);
  });

  it("starts again after a success, or after a long quiet spell", () => {
    const clock = virtualClock(0);
    const throttle = createLoginThrottle(clock, { baseMs: 100, forgetMs: 60_000 });
    throttle.failed("a");
    throttle.failed("a");
    throttle.succeeded("a");
    expect(throttle.failed("a").failures).toBe(1);
    clock.advance(61_000);
    expect(throttle.failed("a")).toEqual({ failures: 1, penaltyMs: 100 });
  });

  it("remembers a bounded number of addresses", () => {
    const throttle = createLoginThrottle(virtualClock(0), { maxAddresses: 2 });
    for (const a of ["a", "b", "c"]) throttle.failed(a);
    expect(throttle.waitMs("a")).toBe(0);
    expect(throttle.waitMs("c")).toBeGreaterThan(0);
  });
});

describe("basic auth and the client address", () => {
  it("reads user and password, a colon in the password included, and nothing else", () => {
    const header = (text: string) => `Basic ${Buffer.from(text).toString("base64")}`;
    expect(parseBasic(header("admin:pa:ss wörd"))).toEqual({ user: "admin", password: "pa:ss wörd" });
    expect(parseBasic(header("no colon"))).toBeUndefined();
    expect(parseBasic("Bearer abc")).toBeUndefined();
    expect(parseBasic(undefined)).toBeUndefined();
  });

  it("takes X-Real-IP only when told to trust the proxy, and then only from the loopback address", () => {
    expect(clientAddress(request({ "x-real-ip": "203.0.113.9" }))).toBe("127.0.0.1");
    expect(clientAddress(request({ "x-real-ip": "203.0.113.9" }), false)).toBe("127.0.0.1");
    expect(clientAddress(request({ "x-real-ip": "203.0.113.9" }), true)).toBe("203.0.113.9");
    expect(clientAddress(request({ "x-real-ip": "203.0.113.9" }, "198.51.100.1"), true)).toBe("198.51.100.1");
    expect(clientAddress(request({ "x-real-ip": "not an address" }), true)).toBe("127.0.0.1");
    expect(clientAddress(request({ "x-forwarded-for": "203.0.113.9" }), true)).toBe("127.0.0.1");
  });
});

describe("the slowdown's address", () => {
  const PASSWORD = "correct horse battery";
  /** Time stands still, and a penalty's wait lasts until the test lets it end: the slowdown's state can be looked at. */
  function heldClock(): { clock: Clock; release(): void } {
    const waiting: Array<() => void> = [];
    return {
      clock: { now: () => 1_000_000, sleep: () => new Promise<void>((resolve) => waiting.push(resolve)) },
      release: () => {
        for (const resolve of waiting.splice(0)) resolve();
      },
    };
  }
  /** Waits (in steps of the event loop, for scrypt's thread) until `condition` holds. */
  async function until(condition: () => boolean): Promise<void> {
    for (let i = 0; i < 2000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(condition()).toBe(true);
  }
  const guess = (realIp: string, password: string) =>
    request({
      authorization: `Basic ${Buffer.from(`admin:${password}`).toString("base64")}`,
      "x-real-ip": realIp,
    });

  async function authenticator(trustProxy: boolean | undefined) {
    const dir = tempDir("mcops-auth-");
    const file = join(dir.path, "dashboard.passwd");
    await setPassword(file, "admin", PASSWORD, { ln: 10, r: 8, p: 1 });
    const held = heldClock();
    const auth = createAuthenticator({
      file,
      clock: held.clock,
      logger: silentLogger,
      secret: Buffer.alloc(32, 7),
      throttle: { baseMs: 500 },
      ...(trustProxy === undefined ? {} : { trustProxy }),
    });
    return { auth, release: held.release, cleanup: dir.cleanup };
  }

  it("is the connection's by default: two X-Real-IPs from the loopback address share one slowdown", async () => {
    const { auth, release, cleanup } = await authenticator(undefined);
    try {
      const first = auth.check(guess("203.0.113.1", "first guess"));
      await until(() => auth.waitMs("127.0.0.1") > 0);
      expect(auth.waitMs("127.0.0.1")).toBe(500);
      expect(auth.waitMs("203.0.113.1")).toBe(0);
      // Another X-Real-IP is the same client: it waits, its password not even looked at.
      await expect(auth.check(guess("203.0.113.2", "second guess"))).resolves.toEqual({
        ok: false,
        status: 429,
        retryAfterS: 1,
      });
      expect(auth.waitMs("203.0.113.2")).toBe(0);
      release();
      await expect(first).resolves.toEqual({ ok: false, status: 401 });
    } finally {
      cleanup();
    }
  });

  it("is nginx's X-Real-IP when the proxy is trusted: each address has its own slowdown", async () => {
    const { auth, release, cleanup } = await authenticator(true);
    try {
      const first = auth.check(guess("203.0.113.1", "first guess"));
      await until(() => auth.waitMs("203.0.113.1") > 0);
      const second = auth.check(guess("203.0.113.2", "second guess"));
      await until(() => auth.waitMs("203.0.113.2") > 0);
      expect([auth.waitMs("203.0.113.1"), auth.waitMs("203.0.113.2"), auth.waitMs("127.0.0.1")]).toEqual([500, 500, 0]);
      release();
      await expect(Promise.all([first, second])).resolves.toEqual([
        { ok: false, status: 401 },
        { ok: false, status: 401 },
      ]);
    } finally {
      cleanup();
    }
  });
});

describe("CSRF", () => {
  it("accepts the token of the session and user it was made for, and no other", () => {
    const csrf = createCsrf(Buffer.alloc(32, 1));
    const session = csrf.newSession();
    const token = csrf.tokenFor(session, "admin");
    expect(csrf.verify(session, "admin", token)).toBe(true);
    expect(csrf.verify(session, "alice", token)).toBe(false);
    expect(csrf.verify(csrf.newSession(), "admin", token)).toBe(false);
    const forged = `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`;
    expect(csrf.verify(session, "admin", forged)).toBe(false);
    expect(csrf.verify(session, "admin", undefined)).toBe(false);
    expect(createCsrf(Buffer.alloc(32, 2)).verify(session, "admin", token)).toBe(false);
  });

  it("finds the session cookie among others", () => {
    const id = "a".repeat(43);
    expect(sessionFrom(request({ cookie: `x=1; mcops_dashboard=${id}; y=2` }))).toBe(id);
    expect(sessionFrom(request({ cookie: "mcops_dashboard=short" }))).toBeUndefined();
  });

  it("wants a post to come from a page of the same host", () => {
    const host = "dash.example.com";
    expect(crossOriginReason(request({ host, origin: "https://dash.example.com" }))).toBeUndefined();
    expect(crossOriginReason(request({ host, referer: "https://dash.example.com/" }))).toBeUndefined();
    expect(crossOriginReason(request({ host, origin: "https://evil.example" }))).toBe(
      "sent from evil.example, not dash.example.com",
    );
    expect(crossOriginReason(request({ host: "127.0.0.1:8088", origin: "http://127.0.0.1:9999" }))).toMatch(
      /sent from/,
    );
    expect(crossOriginReason(request({ host, origin: "null" }))).toMatch(/null/);
    expect(crossOriginReason(request({ host }))).toBe("neither Origin nor Referer was sent");
    // Origin wins over a Referer that would pass.
    expect(
      crossOriginReason(request({ host, origin: "https://evil.example", referer: `https://${host}/` })),
    ).toBeDefined();
  });
});
