import { createServer, type IncomingMessage, type Server } from "node:http";
import { virtualClock } from "@mcops/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createHttpClient, HttpFailure } from "../../src/http/http-client.ts";

/** A loopback server answering from a script of [status, body] pairs, then 200 {"ok":true}. */
let server: Server;
let base: string;
let script: Array<[number, string, Record<string, string>?]> = [];
let seen: IncomingMessage[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req);
    const [status, body, headers] = script.shift() ?? [200, '{"ok":true}'];
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  script = [];
  seen = [];
});

describe("createHttpClient", () => {
  const http = createHttpClient({ userAgent: "mcops-test/1 (ops@example.com)", retryDelayMs: 5 });

  it("sends the User-Agent and retries 5xx and 429 (Retry-After) before answering", async () => {
    script = [
      [503, "{}"],
      [429, "{}", { "retry-after": "0" }],
      [502, "{}"],
    ];
    expect(await http.json(`${base}/x`)).toEqual({ ok: true });
    expect(seen).toHaveLength(4);
    expect(seen[0]?.headers["user-agent"]).toBe("mcops-test/1 (ops@example.com)");
  });

  it("does not retry a 404, and keeps what the service said", async () => {
    script = [[404, '{"error":"version_not_found"}']];
    const error = await http.json(`${base}/missing`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpFailure);
    expect(error).toMatchObject({ status: 404, body: '{"error":"version_not_found"}', url: `${base}/missing` });
    expect((error as Error).message).toMatch(/^127\.0\.0\.1:\d+ answered 404$/);
    expect(seen).toHaveLength(1);
  });

  it("waits a 429's X-RateLimit-Reset on its clock, and says the wait it takes", async () => {
    const clock = virtualClock(0);
    const waits: Array<{ url: string; status?: number; waitMs: number }> = [];
    const modrinth = createHttpClient({
      retryDelayMs: 5,
      clock,
      onRetry: ({ url, status, waitMs }) => void waits.push({ url, status, waitMs }),
    });
    script = [[429, "{}", { "x-ratelimit-limit": "300", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "60" }]];
    expect(await modrinth.json(`${base}/v2/project/x/version`)).toEqual({ ok: true });
    expect(clock.now()).toBe(60_000);
    expect(waits).toEqual([{ url: `${base}/v2/project/x/version`, status: 429, waitMs: 60_000 }]);
  });

  it("does not sleep through a reset beyond the cap: one failure naming the wait, asked once", async () => {
    const clock = virtualClock(0);
    const modrinth = createHttpClient({ retryDelayMs: 5, clock });
    script = [[429, '{"error":"ratelimit_error"}', { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "3600" }]];
    const error = await modrinth.json(`${base}/v2/version/x`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpFailure);
    expect(error).toMatchObject({ status: 429, waitMs: 3_600_000 });
    expect((error as Error).message).toMatch(
      /^127\.0\.0\.1:\d+ answered 429 and asks for a wait of 1 h, longer than the 2 min mcops waits$/,
    );
    expect(clock.now()).toBe(0);
    expect(seen).toHaveLength(1);
  });

  it("gives up after the retries", async () => {
    script = Array.from({ length: 4 }, () => [500, "{}"] as [number, string]);
    await expect(http.json(`${base}/down`)).rejects.toMatchObject({ status: 500 });
    expect(seen).toHaveLength(4);
  });

  it("says when the answer is not JSON, and when nobody answers", async () => {
    script = [[200, "<html>"]];
    await expect(http.json(`${base}/page`)).rejects.toThrow(/answered something that is not JSON/);
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
    const port = (gone.address() as { port: number }).port;
    await new Promise<void>((resolve) => gone.close(() => resolve()));
    const closed = createHttpClient({ retries: 0 });
    await expect(closed.json(`http://127.0.0.1:${port}/`)).rejects.toThrow(
      new RegExp(`^cannot reach 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)$`),
    );
  });
});
