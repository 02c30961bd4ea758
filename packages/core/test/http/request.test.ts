import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { virtualClock } from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod/mini";
import {
  decide,
  exchange,
  POLICIES,
  parseBody,
  RequestFailure,
  type RequestPolicy,
  ResponseShapeError,
  waitHintMs,
} from "../../src/http/request.ts";

const POLICY: RequestPolicy = {
  service: "the test service",
  attempts: 4,
  totalMs: 60_000,
  timeoutMs: 5_000,
  backoffMs: 100,
  maxWaitMs: 10_000,
  unreachableHint: "check the test service",
};

describe("decide: which answers are tried again", () => {
  const at = (outcome: Partial<Parameters<typeof decide>[1]>) =>
    decide(POLICY, { attempt: 1, elapsedMs: 0, idempotent: true, ...outcome });

  it("tries a 429 again whatever the request, after the wait it asks for", () => {
    expect(at({ status: 429, idempotent: false, waitHintMs: 2000 })).toEqual({ retry: true, waitMs: 2000 });
    expect(at({ status: 429, idempotent: false })).toEqual({ retry: true, waitMs: 100 });
  });

  it.each([408, 500, 502, 503, 504, 520, 521, 522, 523, 524])(
    "tries %i again for an idempotent request only",
    (status) => {
      expect(at({ status })).toEqual({ retry: true, waitMs: 100 });
      expect(at({ status, idempotent: false })).toEqual({ retry: false, why: "final" });
    },
  );

  it.each([400, 401, 403, 404, 409, 422, 501])("never tries %i again", (status) => {
    expect(at({ status })).toEqual({ retry: false, why: "final" });
  });

  it("tries a connection never made again whatever the request; a timeout or reset only when idempotent", () => {
    for (const code of ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]) {
      expect(at({ networkCode: code, idempotent: false })).toEqual({ retry: true, waitMs: 100 });
    }
    for (const code of ["ECONNRESET", "TimeoutError", "UND_ERR_SOCKET"]) {
      expect(at({ networkCode: code, idempotent: false })).toEqual({ retry: false, why: "final" });
      expect(at({ networkCode: code })).toEqual({ retry: true, waitMs: 100 });
    }
  });

  it("doubles the pause, and stops at the tries, the whole time, and a wait longer than the cap", () => {
    expect(at({ status: 503, attempt: 3 })).toEqual({ retry: true, waitMs: 400 });
    expect(at({ status: 503, attempt: 4 })).toEqual({ retry: false, why: "attempts" });
    expect(at({ status: 503, elapsedMs: 59_950 })).toEqual({ retry: false, why: "time", waitMs: 100 });
    expect(at({ status: 429, waitHintMs: 10_001 })).toEqual({ retry: false, why: "wait-too-long", waitMs: 10_001 });
    expect(at({ status: 503, waitHintMs: 10_000 })).toEqual({ retry: true, waitMs: 10_000 });
  });

  it("gives every service a bounded policy", () => {
    for (const policy of Object.values(POLICIES)) {
      expect(policy.attempts).toBeGreaterThanOrEqual(1);
      expect(policy.maxWaitMs).toBeLessThanOrEqual(policy.totalMs);
      expect(policy.timeoutMs).toBeLessThanOrEqual(policy.totalMs);
    }
  });
});

describe("waitHintMs: the wait an answer asks for", () => {
  const now = Date.UTC(2026, 10, 23, 12, 0, 0);
  const hint = (headers: Record<string, string>, body?: unknown) => waitHintMs(new Headers(headers), now, body);

  it("reads Retry-After as seconds or as an HTTP date", () => {
    expect(hint({ "retry-after": "7" })).toBe(7000);
    expect(hint({ "retry-after": "1.5" })).toBe(1500);
    expect(hint({ "retry-after": new Date(now + 30_000).toUTCString() })).toBe(30_000);
  });

  it("reads DigitalOcean's RateLimit-Reset (epoch seconds), the draft's (seconds), and Discord's", () => {
    expect(hint({ "ratelimit-reset": String(now / 1000 + 42) })).toBe(42_000);
    expect(hint({ "ratelimit-reset": "12" })).toBe(12_000);
    expect(hint({ "x-ratelimit-reset-after": "0.25" })).toBe(250);
    expect(hint({ "retry-after": "9" }, { retry_after: 64.57, global: false })).toBe(64_570);
  });

  it("reads DigitalOcean's RateLimit-Reset (the hour's oldest request) only when the hour is used up (issue 31)", () => {
    // digitalocean/openapi description.yml "Rate Limit": 5,000 an hour and 250 a minute; RateLimit-Reset is when the
    // oldest request of the hour expires. A 429 with room left in the hour is the minute's: not an hour's wait.
    const hourAway = String(now / 1000 + 3000);
    expect(hint({ "ratelimit-limit": "5000", "ratelimit-remaining": "4816", "ratelimit-reset": hourAway })).toBe(
      undefined,
    );
    expect(hint({ "ratelimit-remaining": "0", "ratelimit-reset": hourAway, "retry-after": "29" })).toBe(29_000);
    expect(hint({ "ratelimit-remaining": "0", "ratelimit-reset": String(now / 1000 + 42) })).toBe(42_000);
    // The minute's 429 that names no wait waits DigitalOcean's minute, and is tried again.
    const minute = { attempt: 1, elapsedMs: 0, idempotent: true, status: 429 };
    expect(decide(POLICIES.digitalocean, { ...minute, waitHintMs: undefined })).toEqual({
      retry: true,
      waitMs: 60_000,
    });
    expect(decide(POLICIES.cloudflare, { ...minute, waitHintMs: undefined })).toEqual({ retry: true, waitMs: 500 });
  });

  it("reads a reset or a date already past (a clock ahead of the service's) as no wait named, not as none to wait", () => {
    // RateLimit-Remaining 0 with RateLimit-Reset 30 s ago by this machine's clock: the hour is used up and the reset
    // is near but not known. A wait of 0 made the 4 tries within a millisecond and gave up.
    const past = { "ratelimit-limit": "5000", "ratelimit-remaining": "0", "ratelimit-reset": String(now / 1000 - 30) };
    expect(hint(past)).toBeUndefined();
    expect(hint({ "retry-after": new Date(now - 5000).toUTCString() })).toBeUndefined();
    const verdict = decide(POLICIES.digitalocean, {
      attempt: 1,
      elapsedMs: 0,
      idempotent: true,
      status: 429,
      waitHintMs: hint(past),
    });
    expect(verdict).toEqual({ retry: true, waitMs: 60_000 });
  });

  it("reads Modrinth's X-RateLimit-Reset (seconds) when the allowance is used up, its 0 as a second", () => {
    // labrinth util/ratelimit.rs: every answer says limit, remaining and reset (whole seconds until the allowance is
    // whole); its 429 has remaining 0 and no Retry-After (modrinth/code apps/docs/public/openapi.yaml "Ratelimits").
    const modrinth = { "x-ratelimit-limit": "300", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "60" };
    expect(hint(modrinth)).toBe(60_000);
    expect(hint({ ...modrinth, "x-ratelimit-reset": "0" })).toBe(1000);
    // A 503 with allowance left: the reset is when the allowance is whole, not a wait asked for.
    expect(hint({ ...modrinth, "x-ratelimit-remaining": "12", "x-ratelimit-reset": "8" })).toBeUndefined();
    expect(hint({ ...modrinth, "x-ratelimit-reset": "soon" })).toBeUndefined();
    // An epoch reset (GitHub's, Laravel's) is a time; a Retry-After beside it says the wait itself.
    expect(hint({ ...modrinth, "x-ratelimit-reset": String(now / 1000 + 90) })).toBe(90_000);
    expect(hint({ ...modrinth, "x-ratelimit-reset": String(now / 1000 - 5) })).toBeUndefined();
    expect(hint({ ...modrinth, "retry-after": "3" })).toBe(3000);
  });

  it("says nothing when the answer names no wait", () => {
    expect(hint({})).toBeUndefined();
    expect(hint({ "retry-after": "soon" })).toBeUndefined();
  });
});

describe("exchange against a real server", () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  /** A loopback server answering each request with the next of `answers` (the last one repeats). */
  async function serve(
    answers: Array<(req: IncomingMessage, res: ServerResponse) => void>,
  ): Promise<{ url: string; seen: () => number }> {
    let count = 0;
    server = createServer((req, res) => {
      const answer = answers[Math.min(count, answers.length - 1)];
      count++;
      req.resume();
      answer?.(req, res);
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, seen: () => count };
  }
  const status =
    (code: number, headers: Record<string, string> = {}, body = "") =>
    (_req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(code, headers);
      res.end(body);
    };
  const post = (url: string) => (signal: AbortSignal) => fetch(url, { method: "POST", signal });

  it("waits out a 429 for its Retry-After, then returns the answer, body unread", async () => {
    const { url, seen } = await serve([status(429, { "retry-after": "3" }), status(200, {}, "done")]);
    const clock = virtualClock(0);
    const answer = await exchange(POLICY, { where: url, idempotent: false, clock, send: post(url) });
    expect(answer.attempts).toBe(2);
    expect(clock.now()).toBe(3000);
    expect(await answer.response.text()).toBe("done");
    expect(seen()).toBe(2);
  });

  it("never repeats a POST after a 500, and returns the error body", async () => {
    const { url, seen } = await serve([status(500, {}, '{"message":"boom"}')]);
    const answer = await exchange(POLICY, { where: url, idempotent: false, clock: virtualClock(0), send: post(url) });
    expect(answer.response.status).toBe(500);
    expect(answer.errorText).toBe('{"message":"boom"}');
    expect(seen()).toBe(1);
  });

  it("repeats a GET after 502s up to the tries, and returns the last answer", async () => {
    const { url, seen } = await serve([status(502, {}, "<html>Bad Gateway</html>")]);
    const clock = virtualClock(0);
    const answer = await exchange(POLICY, {
      where: url,
      idempotent: true,
      clock,
      send: (s) => fetch(url, { signal: s }),
    });
    expect(answer.response.status).toBe(502);
    expect(seen()).toBe(4);
    expect(clock.now()).toBe(100 + 200 + 400);
  });

  it("waits out Modrinth's 429 for its X-RateLimit-Reset (no Retry-After), then returns the answer", async () => {
    const limited = { "x-ratelimit-limit": "300", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "7" };
    const { url, seen } = await serve([status(429, limited, '{"error":"ratelimit_error"}'), status(200, {}, "[]")]);
    const clock = virtualClock(0);
    const waits: number[] = [];
    const answer = await exchange(POLICY, {
      where: url,
      idempotent: true,
      clock,
      send: (s) => fetch(url, { signal: s }),
      onRetry: ({ waitMs }) => void waits.push(waitMs),
    });
    expect(answer.response.status).toBe(200);
    expect(waits).toEqual([7000]);
    expect(clock.now()).toBe(7000);
    expect(seen()).toBe(2);
  });

  it("does not sleep through a rate limit longer than the cap: the 429 comes back with the wait", async () => {
    const { url, seen } = await serve([status(429, { "retry-after": "600" })]);
    const clock = virtualClock(0);
    const answer = await exchange(POLICY, { where: url, idempotent: true, clock, send: post(url) });
    expect(answer).toMatchObject({ waitTooLongMs: 600_000, attempts: 1 });
    expect(clock.now()).toBe(0);
    expect(seen()).toBe(1);
  });

  it("reads at most 64 KiB of an error page", async () => {
    const { url } = await serve([status(400, {}, "x".repeat(1024 * 1024))]);
    const answer = await exchange(POLICY, { where: url, idempotent: true, clock: virtualClock(0), send: post(url) });
    expect(answer.errorText.length).toBe(64 * 1024);
  });

  it("cuts a try that gets no answer at the policy's timeout, and says so after the tries", async () => {
    // The server never answers: every try ends at the timeout, however busy the machine (a try may even be cut before
    // its request reached the server, so the server's count is not asserted).
    const { url } = await serve([() => undefined]);
    const quick = { ...POLICY, timeoutMs: 50, attempts: 2 };
    const error = await exchange(quick, {
      where: "GET /slow",
      idempotent: true,
      clock: virtualClock(0),
      send: (signal) => fetch(url, { signal }),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestFailure);
    expect(error).toMatchObject({
      kind: "timeout",
      attempts: 2,
      message: "the test service did not answer in 0 s after 2 tries",
      where: "GET /slow",
    });
  });

  it("says a service nobody listens for cannot be reached, with the policy's hint, after the tries", async () => {
    const { url } = await serve([status(200)]);
    server?.close();
    const error = await exchange(POLICY, {
      where: url,
      idempotent: false,
      clock: virtualClock(0),
      send: post(url),
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      kind: "network",
      code: "ECONNREFUSED",
      message: "cannot reach the test service (ECONNREFUSED) after 4 tries",
      hint: "check the test service",
    });
  });

  it("stops at once when the caller interrupts", async () => {
    const { url } = await serve([() => undefined]);
    const controller = new AbortController();
    const pending = exchange(POLICY, {
      where: url,
      idempotent: true,
      signal: controller.signal,
      send: (signal) => fetch(url, { signal }),
    });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ kind: "interrupted", message: "interrupted" });
  });
});

describe("parseBody: a changed shape is one line naming the service, the route and the field", () => {
  const droplet = z.object({ droplet: z.object({ id: z.number(), networks: z.object({ v4: z.array(z.string()) }) }) });
  const where = { service: "DigitalOcean", route: "GET /droplets/7" };

  it("returns what the schema reads", () => {
    expect(parseBody(droplet, '{"droplet":{"id":7,"networks":{"v4":[]},"extra":1}}', where)).toEqual({
      droplet: { id: 7, networks: { v4: [] } },
    });
  });

  it.each([
    ['{"droplet":{"id":"7","networks":{"v4":[]}}}', 'droplet.id: expected number, got string "7"'],
    ['{"droplet":{"id":7,"networks":{}}}', "droplet.networks.v4: expected array, got missing"],
    ['{"droplets":[]}', "droplet: expected object, got missing"],
    ["[]", "the body: expected object, got an array"],
  ])("%s", (body, said) => {
    const error = (() => {
      try {
        parseBody(droplet, body, where);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ResponseShapeError);
    expect((error as Error).message).toBe(`DigitalOcean answered GET /droplets/7 in an unexpected shape: ${said}`);
  });

  it("says a body that is not JSON is not JSON", () => {
    expect(() => parseBody(droplet, "<html>502</html>", where)).toThrow(
      "DigitalOcean answered GET /droplets/7 with something that is not JSON",
    );
  });
});
