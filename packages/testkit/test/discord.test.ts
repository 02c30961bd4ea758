import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DiscordStandIn, DiscordStandInOptions } from "../src/discord.ts";
import { computePings, describeMessage, startDiscordStandIn } from "../src/discord.ts";
import { clockTime } from "../src/http.ts";

let discord: DiscordStandIn | undefined;

afterEach(async () => {
  await discord?.close();
  discord = undefined;
});

async function start(options?: DiscordStandInOptions): Promise<DiscordStandIn> {
  discord = await startDiscordStandIn(options);
  return discord;
}

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

// biome-ignore lint/suspicious/noExplicitAny: the answer's JSON as the vendor documents it; a wrong guess at its shape fails the assertion that reads it
const json = (res: Response): Promise<any> => res.json();

describe("posting", () => {
  it("answers 204 with no body and records the message without ?wait", async () => {
    const d = await start();
    const res = await post(d.webhookUrl(), { content: "hello" });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect(d.messages).toHaveLength(1);
    expect(d.messages[0]).toMatchObject({ webhookId: d.webhooks[0]?.id, wait: false, body: { content: "hello" } });
  });

  it("answers 200 with the created message object with ?wait=true", async () => {
    const d = await start();
    const embed = { title: "Backup done", color: 5763719, timestamp: "2026-11-21T06:00:01Z" };
    const res = await post(`${d.webhookUrl()}?wait=true`, { content: "hi", embeds: [embed] });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const message = await json(res);
    expect(message).toMatchObject({
      type: 0,
      content: "hi",
      webhook_id: d.webhooks[0]?.id,
      embeds: [{ type: "rich", title: "Backup done", color: 5763719, timestamp: "2026-11-21T06:00:01.000000+00:00" }],
      mention_everyone: false,
    });
    expect(message.id).toMatch(/^\d{17,20}$/);
    expect(message.channel_id).toMatch(/^\d+$/);
    expect(Date.parse(message.timestamp)).toBeGreaterThan(Date.now() - 60_000);
    expect(d.messages[0]?.wait).toBe(true);
    expect(d.messages[0]?.id).toBe(message.id);
  });

  it("accepts the versioned path and ignores thread_id", async () => {
    const d = await start();
    const hook = d.webhooks[0];
    const res = await post(`${d.url}/api/v10/webhooks/${hook?.id}/${hook?.token}?thread_id=123`, { content: "x" });
    expect(res.status).toBe(204);
  });

  it("builds a default webhook with an 18-digit id and a 68-character token", async () => {
    const d = await start();
    expect(d.webhooks[0]?.id).toMatch(/^[1-9]\d{17}$/);
    expect(d.webhooks[0]?.token).toMatch(/^[A-Za-z0-9_-]{68}$/);
    expect(d.webhookUrl()).toBe(`${d.url}/api/webhooks/${d.webhooks[0]?.id}/${d.webhooks[0]?.token}`);
    expect(d.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });
});

describe("addresses and methods", () => {
  it("answers 404 Unknown Webhook (10015) for an unknown id", async () => {
    const d = await start();
    const res = await post(`${d.url}/api/webhooks/123456789012345678/${d.webhooks[0]?.token}`, { content: "x" });
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({ message: "Unknown Webhook", code: 10015 });
  });

  it("answers 401 Invalid Webhook Token (50027) for a known id with the wrong token", async () => {
    const d = await start();
    const res = await post(`${d.url}/api/webhooks/${d.webhooks[0]?.id}/wrong-token`, { content: "x" });
    expect(res.status).toBe(401);
    expect(await json(res)).toEqual({ message: "Invalid Webhook Token", code: 50027 });
    expect(d.messages).toHaveLength(0);
  });

  it("answers 404 Unknown Webhook once the webhook is deleted", async () => {
    const d = await start({
      webhooks: [
        { id: "111111111111111111", token: "a" },
        { id: "222222222222222222", token: "b" },
      ],
    });
    d.deleteWebhook(0);
    expect((await post(d.webhookUrl(0), { content: "x" })).status).toBe(404);
    expect((await post(d.webhookUrl(1), { content: "x" })).status).toBe(204);
  });

  it("answers 405 to other methods on a webhook address", async () => {
    const d = await start();
    const res = await fetch(d.webhookUrl(), { method: "GET" });
    expect(res.status).toBe(405);
    expect(await json(res)).toEqual({ message: "405: Method Not Allowed", code: 0 });
  });

  it("answers 404: Not Found for unknown paths", async () => {
    const d = await start();
    const res = await fetch(`${d.url}/api/channels/1/messages`);
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({ message: "404: Not Found", code: 0 });
  });

  it("records every request with the token redacted", async () => {
    const d = await start();
    await post(`${d.webhookUrl()}?wait=true`, { content: "x" });
    await post(`${d.url}/api/webhooks/${d.webhooks[0]?.id}/nope`, { content: "x" });
    expect(d.requests.map((r) => [r.method, r.path, r.status])).toEqual([
      ["POST", `/api/webhooks/${d.webhooks[0]?.id}/***?wait=true`, 200],
      ["POST", `/api/webhooks/${d.webhooks[0]?.id}/***`, 401],
    ]);
    expect(JSON.stringify(d.requests)).not.toContain(d.webhooks[0]?.token);
  });
});

describe("payload validation", () => {
  it("answers 50109 for a body that is not valid JSON", async () => {
    const d = await start();
    const res = await post(d.webhookUrl(), "{not json");
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ message: "The request body contains invalid JSON.", code: 50109 });
  });

  it.each([
    ["no content and no embeds", {}],
    ["empty content and empty embeds", { content: "", embeds: [] }],
    ["whitespace content", { content: "   " }],
  ])("answers 50006 Cannot send an empty message for %s", async (_name, body) => {
    const d = await start();
    const res = await post(d.webhookUrl(), body);
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ message: "Cannot send an empty message", code: 50006 });
    expect(d.messages).toHaveLength(0);
  });

  it("treats a body without a JSON Content-Type as an empty message", async () => {
    const d = await start();
    const res = await fetch(d.webhookUrl(), { method: "POST", body: JSON.stringify({ content: "x" }) });
    expect(res.status).toBe(400);
    expect((await json(res)).code).toBe(50006);
  });

  it("accepts content of 2000 characters and refuses 2001 with BASE_TYPE_MAX_LENGTH", async () => {
    const d = await start();
    expect((await post(d.webhookUrl(), { content: "a".repeat(2000) })).status).toBe(204);
    const res = await post(d.webhookUrl(), { content: "a".repeat(2001) });
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({
      message: "Invalid Form Body",
      code: 50035,
      errors: { content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] } },
    });
  });

  it("counts length in code points, not UTF-16 units", async () => {
    const d = await start();
    expect((await post(d.webhookUrl(), { content: "🎮".repeat(2000) })).status).toBe(204);
  });

  it("puts embed field errors at their nested path", async () => {
    const d = await start();
    const res = await post(d.webhookUrl(), {
      embeds: [{ title: "ok" }, { title: "t".repeat(257), description: "d".repeat(4097) }],
    });
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.code).toBe(50035);
    expect(body.errors).toEqual({
      embeds: {
        "1": {
          title: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 256 or fewer in length." }] },
          description: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 4096 or fewer in length." }] },
        },
      },
    });
    const footer = await post(d.webhookUrl(), { embeds: [{ footer: { text: "f".repeat(2049) } }] });
    expect((await json(footer)).errors).toEqual({
      embeds: {
        "0": {
          footer: {
            text: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2048 or fewer in length." }] },
          },
        },
      },
    });
  });

  it("accepts the exact embed limits", async () => {
    const d = await start();
    const res = await post(d.webhookUrl(), {
      embeds: [{ title: "t".repeat(256), description: "d".repeat(4096), footer: { text: "f".repeat(1648) } }],
    });
    expect(res.status).toBe(204);
  });

  it("refuses more than 10 embeds", async () => {
    const d = await start();
    const embeds = Array.from({ length: 11 }, (_, i) => ({ title: `e${i}` }));
    const res = await post(d.webhookUrl(), { embeds });
    expect(res.status).toBe(400);
    expect((await json(res)).errors.embeds._errors).toEqual([
      { code: "BASE_TYPE_MAX_LENGTH", message: "Must be 10 or fewer in length." },
    ]);
  });

  it("refuses embeds whose text adds up to more than 6000 characters", async () => {
    const d = await start();
    const res = await post(d.webhookUrl(), {
      embeds: [
        { description: "a".repeat(4000) },
        { title: "b".repeat(200), fields: [{ name: "n", value: "v".repeat(1000) }], description: "c".repeat(800) },
      ],
    });
    expect(res.status).toBe(400);
    expect((await json(res)).errors).toEqual({
      embeds: { _errors: [{ code: "MAX_EMBED_SIZE_EXCEEDED", message: "Embed size exceeds maximum size of 6000" }] },
    });
  });

  it.each([
    [16777216, "NUMBER_TYPE_MAX", "int value should be less than or equal to 16777215."],
    [-1, "NUMBER_TYPE_MIN", "int value should be greater than or equal to 0."],
    ["#ff00ff", "NUMBER_TYPE_COERCE", 'Value "#ff00ff" is not int.'],
    [1.5, "NUMBER_TYPE_COERCE", 'Value "1.5" is not int.'],
  ])("refuses color %j with %s", async (color, code, message) => {
    const d = await start();
    const res = await post(d.webhookUrl(), { embeds: [{ title: "x", color }] });
    expect(res.status).toBe(400);
    expect((await json(res)).errors).toEqual({ embeds: { "0": { color: { _errors: [{ code, message }] } } } });
  });

  it.each([0, 16777215, 3447003])("accepts color %i", async (color) => {
    const d = await start();
    expect((await post(d.webhookUrl(), { embeds: [{ title: "x", color }] })).status).toBe(204);
  });

  it("refuses a timestamp that is not ISO 8601 and accepts one that is", async () => {
    const d = await start();
    const bad = await post(d.webhookUrl(), { embeds: [{ title: "x", timestamp: "21/11/2026 06:00" }] });
    expect(bad.status).toBe(400);
    expect((await json(bad)).errors.embeds["0"].timestamp._errors).toEqual([
      { code: "DATE_TYPE_PARSE", message: "Could not parse 21/11/2026 06:00. Should be ISO8601." },
    ]);
    const good = await post(d.webhookUrl(), { embeds: [{ title: "x", timestamp: new Date().toISOString() }] });
    expect(good.status).toBe(204);
  });

  it("refuses unknown allowed_mentions.parse values", async () => {
    const d = await start();
    const res = await post(d.webhookUrl(), { content: "x", allowed_mentions: { parse: ["users", "channels"] } });
    expect(res.status).toBe(400);
    expect((await json(res)).errors).toEqual({
      allowed_mentions: {
        parse: {
          "1": { _errors: [{ code: "ENUM_TYPE_COERCE", message: 'Value "channels" is not a valid enum value.' }] },
        },
      },
    });
  });

  it("refuses parse users together with a users list", async () => {
    const d = await start();
    const res = await post(d.webhookUrl(), { content: "x", allowed_mentions: { parse: ["users"], users: ["123"] } });
    expect(res.status).toBe(400);
    expect((await json(res)).errors.allowed_mentions._errors[0].code).toBe("MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE");
  });
});

describe("rate limit", () => {
  const rateLimit = { limit: 5, windowMs: 500 };
  // The window runs on a clock the test moves: which posts are still in it does not depend on how busy the machine is.
  let now = 0;
  const clock = () => now;
  beforeEach(() => {
    now = Date.now();
  });

  it("sends the X-RateLimit headers with a stable bucket per webhook and counts Remaining down", async () => {
    const d = await start({ rateLimit, now: clock });
    const first = now;
    const remaining: Array<string | null> = [];
    const resetAfters: Array<string | null> = [];
    const buckets = new Set<string | null>();
    for (let i = 0; i < 5; i++) {
      const res = await post(d.webhookUrl(), { content: `m${i}` });
      expect(res.status).toBe(204);
      remaining.push(res.headers.get("x-ratelimit-remaining"));
      resetAfters.push(res.headers.get("x-ratelimit-reset-after"));
      buckets.add(res.headers.get("x-ratelimit-bucket"));
      expect(res.headers.get("x-ratelimit-limit")).toBe("5");
      // The window frees its first place when the first post leaves it, whichever post is asking.
      expect(res.headers.get("x-ratelimit-reset")).toBe(((first + 500) / 1000).toFixed(3));
      now += 10;
    }
    expect(remaining).toEqual(["4", "3", "2", "1", "0"]);
    expect(resetAfters).toEqual(["0.500", "0.490", "0.480", "0.470", "0.460"]);
    expect(buckets.size).toBe(1);
    expect([...buckets][0]).toMatch(/^[0-9a-f]{32}$/);
  });

  it("answers 429 over the limit with retry_after, Retry-After and scope, and records no message", async () => {
    const d = await start({ rateLimit, now: clock });
    for (let i = 0; i < 5; i++) await post(d.webhookUrl(), { content: `m${i}` });
    const res = await post(d.webhookUrl(0, 10), { content: "one too many" });
    expect(res.status).toBe(429);
    const body = await json(res);
    expect(body.message).toBe("You are being rate limited.");
    expect(body.global).toBe(false);
    expect(body.retry_after).toBe(0.5);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(res.headers.get("x-ratelimit-scope")).toBe("shared");
    expect(d.messages).toHaveLength(5);
    expect(d.requests.at(-1)?.status).toBe(429);

    now += body.retry_after * 1000;
    expect((await post(d.webhookUrl(), { content: "after the wait" })).status).toBe(204);
  });

  it("answers a 429 on the unversioned path with its waits in milliseconds, X-RateLimit-Reset-After in seconds", async () => {
    // Discord's default version (v6) answers an address without a version: retry_after and Retry-After in ms.
    const d = await start({ rateLimit, now: clock });
    for (let i = 0; i < 5; i++) await post(d.webhookUrl(0, 10), { content: `m${i}` });
    const res = await post(d.webhookUrl(), { content: "one too many" });
    expect(res.status).toBe(429);
    expect(await json(res)).toEqual({ message: "You are being rate limited.", retry_after: 500, global: false });
    expect(res.headers.get("retry-after")).toBe("500");
    expect(res.headers.get("x-ratelimit-reset-after")).toBe("0.500");
    for (const version of [6, 7]) {
      const old = await post(d.webhookUrl(0, version), { content: "one too many" });
      expect((await json(old)).retry_after).toBe(500);
    }
  });

  it("counts a request refused by the limit against the window", async () => {
    const d = await start({ rateLimit, now: clock });
    for (let i = 0; i < 5; i++) await post(d.webhookUrl(), { content: `m${i}` });
    now += 250;
    expect((await post(d.webhookUrl(), { content: "refused" })).status).toBe(429);
    now += 250;
    // The five accepted posts left the window; the refused one is still in it.
    const res = await post(d.webhookUrl(), { content: "later" });
    expect(res.status).toBe(204);
    expect(res.headers.get("x-ratelimit-remaining")).toBe("3");
  });

  it("keeps one window per webhook", async () => {
    const d = await start({
      rateLimit,
      now: clock,
      webhooks: [
        { id: "111111111111111111", token: "a" },
        { id: "222222222222222222", token: "b" },
      ],
    });
    for (let i = 0; i < 5; i++) await post(d.webhookUrl(0), { content: `m${i}` });
    expect((await post(d.webhookUrl(0), { content: "x" })).status).toBe(429);
    const other = await post(d.webhookUrl(1), { content: "x" });
    expect(other.status).toBe(204);
    expect(other.headers.get("x-ratelimit-remaining")).toBe("4");
  });
});

describe("faults", () => {
  it("answers an injected status once, with Discord's body by default, then works again", async () => {
    const d = await start();
    d.inject({ kind: "status", status: 503 });
    const res = await post(d.webhookUrl(), { content: "x" });
    expect(res.status).toBe(503);
    expect(await json(res)).toEqual({ message: "503: Service Unavailable", code: 0 });
    expect((await post(d.webhookUrl(), { content: "x" })).status).toBe(204);
    expect(d.messages).toHaveLength(1);
    expect(d.requests.map((r) => [r.status, r.fault])).toEqual([
      [503, "status"],
      [204, undefined],
    ]);
  });

  it("uses a status fault `times` times with the given body and headers", async () => {
    const d = await start();
    d.inject({ kind: "status", status: 502, body: "<html>Bad Gateway</html>", headers: { "X-Test": "1" }, times: 2 });
    for (let i = 0; i < 2; i++) {
      const res = await post(d.webhookUrl(), { content: "x" });
      expect(res.status).toBe(502);
      expect(res.headers.get("x-test")).toBe("1");
      expect(await res.text()).toBe("<html>Bad Gateway</html>");
    }
    expect((await post(d.webhookUrl(), { content: "x" })).status).toBe(204);
  });

  it("answers an injected 429 with retry_after and a rounded-up Retry-After", async () => {
    const now = Date.now();
    const d = await start({ now: () => now });
    d.inject({ kind: "rate-limit", retryAfterSeconds: 1.5 });
    const res = await post(d.webhookUrl(0, 10), { content: "x" });
    expect(res.status).toBe(429);
    expect(await json(res)).toEqual({ message: "You are being rate limited.", retry_after: 1.5, global: false });
    expect(res.headers.get("retry-after")).toBe("2");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(res.headers.get("x-ratelimit-reset-after")).toBe("1.500");
    expect(res.headers.get("x-ratelimit-reset")).toBe(((now + 1500) / 1000).toFixed(3));
    expect(res.headers.get("x-ratelimit-scope")).toBe("shared");
    expect(d.messages).toHaveLength(0);

    d.inject({ kind: "rate-limit", retryAfterSeconds: 1.5, scope: "user" });
    const unversioned = await post(d.webhookUrl(), { content: "x" });
    expect(await json(unversioned)).toEqual({
      message: "You are being rate limited.",
      retry_after: 1500,
      global: false,
    });
    expect(unversioned.headers.get("retry-after")).toBe("1500");
    expect(unversioned.headers.get("x-ratelimit-reset-after")).toBe("1.500");
    expect(unversioned.headers.get("x-ratelimit-scope")).toBe("user");
  });

  it("marks an injected global 429", async () => {
    const d = await start();
    d.inject({ kind: "rate-limit", retryAfterSeconds: 0.25, global: true });
    const res = await post(d.webhookUrl(), { content: "x" });
    expect((await json(res)).global).toBe(true);
    expect(res.headers.get("x-ratelimit-global")).toBe("true");
    expect(res.headers.get("x-ratelimit-scope")).toBe("global");
  });

  it("says how long to wait only in Retry-After with viaHeaderOnly", async () => {
    const d = await start();
    d.inject({ kind: "rate-limit", retryAfterSeconds: 3, viaHeaderOnly: true, times: 2 });
    const res = await post(d.webhookUrl(0, 10), { content: "x" });
    expect(res.status).toBe(429);
    const body = await json(res);
    expect(body).not.toHaveProperty("retry_after");
    expect(res.headers.get("retry-after")).toBe("3");
    // Unversioned: milliseconds (discord-api-docs issue #2360).
    expect((await post(d.webhookUrl(), { content: "x" })).headers.get("retry-after")).toBe("3000");
    expect(res.headers.get("x-ratelimit-remaining")).toBeNull();
  });

  it("drops the connection so fetch fails, then answers the next post", async () => {
    const d = await start();
    d.inject({ kind: "drop" });
    await expect(post(d.webhookUrl(), { content: "x" })).rejects.toThrow();
    expect(d.messages).toHaveLength(0);
    expect(d.requests[0]).toMatchObject({ status: 0, fault: "drop" });
    expect((await post(d.webhookUrl(), { content: "x" })).status).toBe(204);
  });

  it("delays the answer by the given time", async () => {
    const d = await start();
    d.inject({ kind: "delay", ms: 200 });
    const began = performance.now();
    const res = await post(d.webhookUrl(), { content: "x" });
    expect(res.status).toBe(204);
    expect(performance.now() - began).toBeGreaterThanOrEqual(190);
    expect(d.requests[0]).toMatchObject({ status: 204, fault: "delay" });
    // The fault is spent: the next request is answered as any other (no fault recorded for it).
    expect((await post(d.webhookUrl(), { content: "y" })).status).toBe(204);
    expect(d.requests[1]).toMatchObject({ status: 204 });
    expect(d.requests[1]?.fault).toBeUndefined();
  });

  it("consumes faults in the order they were queued", async () => {
    const d = await start();
    d.inject({ kind: "status", status: 500 });
    d.inject({ kind: "status", status: 502 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await post(d.webhookUrl(), { content: "x" })).status);
    expect(statuses).toEqual([500, 502, 204]);
  });
});

describe("mentions", () => {
  const cases: Array<[string, Record<string, unknown>, { everyone: boolean; users: string[]; roles: string[] }]> = [
    [
      "everything pings without allowed_mentions",
      { content: "@everyone <@1> <@!2> <@&3>" },
      { everyone: true, users: ["1", "2"], roles: ["3"] },
    ],
    ["@here counts as everyone", { content: "hey @here" }, { everyone: true, users: [], roles: [] }],
    [
      "parse [] silences everything",
      { content: "@everyone <@1> <@&3>", allowed_mentions: { parse: [] } },
      { everyone: false, users: [], roles: [] },
    ],
    [
      "allowed_mentions without parse silences everything",
      { content: "@everyone <@1>", allowed_mentions: {} },
      { everyone: false, users: [], roles: [] },
    ],
    [
      "parse users pings users only",
      { content: "@everyone <@1> <@&3>", allowed_mentions: { parse: ["users"] } },
      { everyone: false, users: ["1"], roles: [] },
    ],
    [
      "a users list pings only the listed ids",
      { content: "<@1> <@2>", allowed_mentions: { users: ["2"] } },
      { everyone: false, users: ["2"], roles: [] },
    ],
    [
      "a roles list pings only the listed roles",
      { content: "<@&3> <@&4>", allowed_mentions: { roles: ["4"] } },
      { everyone: false, users: [], roles: ["4"] },
    ],
    [
      "parse everyone pings @everyone only",
      { content: "@everyone <@1>", allowed_mentions: { parse: ["everyone"] } },
      { everyone: true, users: [], roles: [] },
    ],
    [
      "embeds never ping",
      { embeds: [{ title: "@everyone", description: "<@1> <@&3>" }] },
      { everyone: false, users: [], roles: [] },
    ],
    ["a backslash keeps @everyone from pinging", { content: "\\@everyone" }, { everyone: false, users: [], roles: [] }],
    ["a repeated user pings once", { content: "<@1> <@!1>" }, { everyone: false, users: ["1"], roles: [] }],
  ];

  it.each(cases)("%s", (_name, payload, expected) => {
    expect(computePings(payload)).toEqual(expected);
  });

  it("records the pings on each received message", async () => {
    const d = await start();
    await post(d.webhookUrl(), { content: "@everyone <@42>", allowed_mentions: { parse: [] } });
    await post(`${d.webhookUrl()}?wait=true`, { content: "@here <@42>" });
    expect(d.messages.map((m) => m.pings)).toEqual([
      { everyone: false, users: [], roles: [] },
      { everyone: true, users: ["42"], roles: [] },
    ]);
  });
});

describe("helpers", () => {
  it("waitForMessages resolves once enough messages arrived", async () => {
    const d = await start();
    const waiting = d.waitForMessages(2, 30_000);
    setTimeout(() => {
      void post(d.webhookUrl(), { content: "a" }).then(() => post(d.webhookUrl(), { content: "b" }));
    }, 20);
    const messages = await waiting;
    expect(messages.map((m) => m.body.content)).toEqual(["a", "b"]);
  });

  it("waitForMessages rejects with a clear error on timeout", async () => {
    const d = await start();
    await post(d.webhookUrl(), { content: "only one" });
    await expect(d.waitForMessages(2, 100)).rejects.toThrow(/expected 2 message\(s\) within 100 ms, got 1/);
  });

  it("reset forgets messages, requests, windows and faults", async () => {
    const d = await start({ rateLimit: { limit: 1, windowMs: 60_000 } });
    await post(d.webhookUrl(), { content: "x" });
    d.inject({ kind: "status", status: 500 });
    d.reset();
    expect(d.messages).toHaveLength(0);
    expect(d.requests).toHaveLength(0);
    expect((await post(d.webhookUrl(), { content: "y" })).status).toBe(204);
  });

  it("close ends keep-alive connections and stops answering", async () => {
    const d = await start();
    await post(d.webhookUrl(), { content: "x" });
    await d.close();
    await expect(post(d.webhookUrl(), { content: "x" })).rejects.toThrow();
  });
});

describe("describeMessage", () => {
  it("renders an embed with colour name, title, description and footer with the local time", () => {
    const timestamp = "2026-11-21T06:00:01Z";
    const text = describeMessage({
      embeds: [
        {
          title: "Backup done",
          description: "Took 12 s\nSize 1.2 GiB",
          color: 10181046,
          footer: { text: "play.example.test" },
          timestamp,
        },
      ],
    });
    expect(text).toBe(
      `■ purple  Backup done\n  Took 12 s\n  Size 1.2 GiB\n  — play.example.test · ${clockTime(new Date(timestamp))}`,
    );
  });

  it.each([
    [5763719, "green"],
    [15548997, "red"],
    [16776960, "yellow"],
    [3447003, "blue"],
    [10181046, "purple"],
    [0xabcdef, "#abcdef"],
    [255, "#0000ff"],
  ])("names colour %i as %s", (color, name) => {
    expect(describeMessage({ embeds: [{ title: "T", color }] })).toBe(`■ ${name}  T`);
  });

  it("renders plain content as it is, before the embeds", () => {
    expect(describeMessage({ content: "Server restarting in 5 minutes" })).toBe("Server restarting in 5 minutes");
    expect(describeMessage({ content: "hi", embeds: [{ title: "T", color: 3447003 }] })).toBe("hi\n■ blue  T");
  });
});
