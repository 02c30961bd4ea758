import {
  type CloudflareStandIn,
  type DigitalOceanStandIn,
  startCloudflareStandIn,
  startDigitalOceanStandIn,
  virtualClock,
} from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { createCloudflare } from "../src/cloudflare.ts";
import { createDigitalOcean } from "../src/digitalocean.ts";

/**
 * The vendors' rate limits as their own pages describe them (issue 31): DigitalOcean's 250-a-minute burst limit
 * answered with the hour's RateLimit-Reset (test/contracts/digitalocean/errors.json), Cloudflare's 5-minute block
 * (test/contracts/cloudflare/errors.json). Time is virtual: a wait of a minute takes milliseconds.
 */
let digitalocean: DigitalOceanStandIn | undefined;
let cloudflare: CloudflareStandIn | undefined;
afterEach(async () => {
  await digitalocean?.close();
  await cloudflare?.close();
  digitalocean = undefined;
  cloudflare = undefined;
});

describe("DigitalOcean's burst limit", () => {
  it("waits a minute for a 429 whose RateLimit-Reset is the hour's oldest request, and carries on", async () => {
    const clock = virtualClock(Date.UTC(2026, 10, 26, 12));
    digitalocean = await startDigitalOceanStandIn({ now: clock.now });
    const client = createDigitalOcean({ base: digitalocean.url, token: digitalocean.token, clock });
    digitalocean.inject({
      kind: "rate-limit",
      retryAfterSeconds: 29,
      withoutRetryAfter: true,
      route: "GET /v2/droplets",
    });
    const started = clock.now();
    expect(await client.droplets()).toHaveLength(1);
    expect(clock.now() - started).toBe(60_000);
    expect(digitalocean.requests.map((r) => r.status)).toEqual([429, 200]);
  });

  it("waits its Retry-After when it names one, however far RateLimit-Reset is", async () => {
    const clock = virtualClock(Date.UTC(2026, 10, 26, 12));
    digitalocean = await startDigitalOceanStandIn({ now: clock.now, burstLimit: { limit: 1, windowMs: 60_000 } });
    const client = createDigitalOcean({ base: digitalocean.url, token: digitalocean.token, clock });
    await client.verify();
    clock.advance(45_000);
    expect(await client.droplets()).toHaveLength(1);
    expect(digitalocean.requests.map((r) => r.status)).toEqual([200, 429, 200]);
    expect(clock.now() - Date.UTC(2026, 10, 26, 12)).toBe(60_000);
  });
});

describe("Cloudflare's 5-minute block", () => {
  it("says to wait about 5 minutes before running the command again", async () => {
    const clock = virtualClock(Date.now());
    cloudflare = await startCloudflareStandIn({ zones: [{ name: "example.co.uk" }] });
    const client = createCloudflare({ base: cloudflare.url, token: cloudflare.token, clock });
    cloudflare.inject({ kind: "rate-limit", retryAfterSeconds: 300, route: "zones" });
    const error = await client.zoneId("example.co.uk").catch((e: unknown) => e);
    expect(error).toMatchObject({
      message: expect.stringMatching(/^Cloudflare is rate limiting this token \(429: 971 /),
      hint: expect.stringMatching(/^wait about 5 min \(Cloudflare blocks the token for 5 minutes/),
    });
  });
});
