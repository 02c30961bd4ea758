/**
 * Discord's API versions and 429s (src/discord.ts), held to Discord's own answers in testkit's
 * test/contracts/discord: each recorded 429 read as the path it was answered on (a copied webhook address has no
 * version, and Discord's default version, v6, answers it in milliseconds).
 */
import { realExchanges } from "@mcops/testkit";
import { describe, expect, it } from "vitest";
import { apiVersion, discordRateLimit, versionedWebhookUrl } from "../src/discord.ts";

describe("versionedWebhookUrl", () => {
  it("puts /v10 into an address without a version, and keeps the rest of it", () => {
    expect(versionedWebhookUrl("https://discord.com/api/webhooks/123/tok-en_1?thread_id=9").href).toBe(
      "https://discord.com/api/v10/webhooks/123/tok-en_1?thread_id=9",
    );
    expect(versionedWebhookUrl("http://127.0.0.1:8080/api/webhooks/1/t").pathname).toBe("/api/v10/webhooks/1/t");
  });

  it("keeps an address that names its version", () => {
    for (const address of ["https://discord.com/api/v9/webhooks/1/t", "https://discord.com/api/v6/webhooks/1/t"]) {
      expect(versionedWebhookUrl(address).href).toBe(address);
    }
  });

  it("reads the version a path names, undefined for none", () => {
    expect(apiVersion("https://discord.com/api/webhooks/1/t")).toBeUndefined();
    expect(apiVersion("https://discord.com/api/v10/webhooks/1/t")).toBe(10);
    expect(apiVersion("https://discord.com/api/v6/webhooks/1/t")).toBe(6);
  });
});

describe("discordRateLimit", () => {
  const answers = realExchanges("discord").filter((e) => e.response.status === 429);
  /** The version the recorded request was answered as: v10 for `/api/v{version}` (the stand-in fills in 10). */
  const versionOf = (path: string) => (path.startsWith("/api/v{version}/") ? 10 : undefined);
  const read = (name: string) => {
    const real = answers.find((e) => e.name === name);
    if (!real) throw new Error(`no recorded answer named ${name}`);
    return discordRateLimit(new Headers(real.response.headers), real.response.body, versionOf(real.request.path));
  };

  it("reads Discord's recorded 429s: the wait and whom it holds", () => {
    expect(read("exceeded user rate limit: 429")).toEqual({ waitMs: 64_570, scope: "webhook" });
    // The resource's limit, not the bucket's: retry_after 1336.57 s, though X-RateLimit-Reset-After says 64.57.
    expect(read("exceeded resource rate limit: 429 shared")).toEqual({ waitMs: 1_336_570, scope: "webhook" });
    expect(read("exceeded global rate limit: 429 global")).toEqual({ waitMs: 64_570, scope: "global" });
    // The default version's answer: X-RateLimit-Reset-After 7 s, retry_after and Retry-After 6457 ms, never 6457 s.
    expect(read("exceeded rate limit on the unversioned path: 429 with its waits in milliseconds")).toEqual({
      waitMs: 7000,
      scope: "webhook",
    });
    expect(answers.length).toBe(4);
  });

  it("takes X-RateLimit-Reset-After (seconds) first, then retry_after, then Retry-After, in the path's units", () => {
    const headers = (h: Record<string, string>) => new Headers(h);
    const body = { message: "You are being rate limited.", retry_after: 1500, global: false };
    expect(discordRateLimit(headers({ "X-RateLimit-Reset-After": "1.5" }), body, undefined).waitMs).toBe(1500);
    expect(discordRateLimit(headers({ "X-RateLimit-Reset-After": "1.5" }), body, 10).waitMs).toBe(1500);
    expect(discordRateLimit(headers({}), body, undefined).waitMs).toBe(1500);
    expect(discordRateLimit(headers({}), body, 6).waitMs).toBe(1500);
    expect(discordRateLimit(headers({}), { ...body, retry_after: 1.5 }, 10).waitMs).toBe(1500);
    expect(discordRateLimit(headers({ "Retry-After": "1500" }), {}, undefined).waitMs).toBe(1500);
    expect(discordRateLimit(headers({ "Retry-After": "2" }), "not json", 10).waitMs).toBe(2000);
    expect(discordRateLimit(headers({}), undefined, 10).waitMs).toBeUndefined();
  });

  it("holds the machine for X-RateLimit-Scope: global, X-RateLimit-Global or a body's global: true; else the webhook", () => {
    const wait = { "Retry-After": "1" };
    expect(discordRateLimit(new Headers({ ...wait, "X-RateLimit-Scope": "global" }), {}, 10).scope).toBe("global");
    expect(discordRateLimit(new Headers({ ...wait, "X-RateLimit-Global": "true" }), {}, 10).scope).toBe("global");
    expect(discordRateLimit(new Headers(wait), { global: true }, 10).scope).toBe("global");
    expect(discordRateLimit(new Headers({ ...wait, "X-RateLimit-Scope": "shared" }), {}, 10).scope).toBe("webhook");
    expect(discordRateLimit(new Headers({ ...wait, "X-RateLimit-Scope": "user" }), {}, 10).scope).toBe("webhook");
  });
});
