/**
 * The Discord webhook stand-in held to Discord's own answers. Each exchange in test/contracts/discord/ is copied from
 * discord/discord-api-docs or discord/discord-api-spec (its `source` says where; the folder's README names the
 * licences); it is replayed against the stand-in, brought into the state the exchange needs, and the answer must have
 * the real status, every header the real answer lists, and the real body's shape. A stand-in that drifts from Discord
 * fails here, naming the exchange and its source.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Answer, RealExchange, ReplayState } from "../src/contract.ts";
import { contractProblems, named, realExchanges, replay, replayInState, standIns } from "../src/contract.ts";
import type { DiscordStandIn, DiscordStandInOptions } from "../src/discord.ts";
import { DISCORD_ROUTES, startDiscordStandIn } from "../src/discord.ts";

const exchanges = realExchanges("discord");
const stands = standIns(startDiscordStandIn);

afterEach(() => stands.closeAll());

/** By exchange name; an exchange not named here runs against a fresh stand-in with one webhook. */
const STATES: Record<string, ReplayState<DiscordStandInOptions, DiscordStandIn>> = {
  "unknown webhook: 404 Unknown Webhook (10015)": { before: (d) => d.deleteWebhook(0) },
  "exceeded user rate limit: 429": {
    before: (d) => d.inject({ kind: "rate-limit", retryAfterSeconds: 64.57 }),
  },
  // The stand-in's own window: one post allowed, the exchange's post is the second.
  "exceeded resource rate limit: 429 shared": {
    options: { rateLimit: { limit: 1, windowMs: 60_000 } },
    before: async (d) => {
      const first = { method: "POST", path: "/api/webhooks/{webhook.id}/{webhook.token}", body: { content: "first" } };
      expect((await send(d, first)).status).toBe(204);
    },
  },
  "exceeded global rate limit: 429 global": {
    before: (d) => d.inject({ kind: "rate-limit", retryAfterSeconds: 64.57, global: true }),
  },
  "exceeded rate limit on the unversioned path: 429 with its waits in milliseconds": {
    before: (d) => d.inject({ kind: "rate-limit", retryAfterSeconds: 6.457, scope: "user" }),
  },
};

/**
 * The unit of a 429's waits: retry_after and Retry-After against X-RateLimit-Reset-After (seconds in every version).
 * Seconds make the ratio about 1 (64.57 / 64.57), milliseconds about 1000 (6457 / 7). The shape comparison cannot
 * see it: both are numbers.
 */
function waitUnits(answer: { headers: Headers | Record<string, string>; body?: unknown }): string[] {
  const headers = answer.headers instanceof Headers ? answer.headers : new Headers(answer.headers);
  const resetAfter = Number(headers.get("x-ratelimit-reset-after"));
  const unit = (value: number) => (value / resetAfter > 100 ? "ms" : "s");
  const retryAfter = (answer.body as { retry_after?: number } | undefined)?.retry_after;
  return [
    `retry_after in ${retryAfter === undefined ? "none" : unit(retryAfter)}`,
    `Retry-After in ${unit(Number(headers.get("retry-after")))}`,
  ];
}

/** A request as a webhook client makes it, to the stand-in's first webhook: a JSON body. */
function send(d: DiscordStandIn, request: RealExchange["request"]): Promise<Answer> {
  const hook = d.webhooks[0];
  if (!hook) throw new Error("the stand-in has no webhook");
  const values: Record<string, string> = {
    "webhook.id": hook.id,
    "webhook.token": hook.token,
    "wrong.token": `${hook.token.slice(0, -4)}xxxx`,
    version: "10",
  };
  return replay(d.url, request, { value: (name) => values[name] });
}

describe("Discord's own answers, replayed against the stand-in", () => {
  it("are named once each and on a route of DISCORD_ROUTES; each route is listed once, with its source", () => {
    expect(contractProblems(exchanges, { routes: DISCORD_ROUTES, states: STATES })).toEqual([]);
  });

  it.each(named(exchanges))("%s", (_name, real) =>
    replayInState(real, STATES, stands.start, (d) => send(d, real.request)),
  );

  const withWaits = named(exchanges).filter(
    ([, real]) => real.response.status === 429 && real.response.headers?.["X-RateLimit-Reset-After"] !== undefined,
  );
  it.each(withWaits)("%s: the waits in the real answer's units", async (_name, real) => {
    const state = STATES[real.name];
    const d = await stands.start(state?.options);
    await state?.before?.(d);
    const ours = await send(d, real.request);
    expect(waitUnits(ours)).toEqual(waitUnits({ headers: real.response.headers ?? {}, body: real.response.body }));
  });

  it.each(named(DISCORD_ROUTES))("%s is answered, not the stand-in's 404 for unknown routes", async (_name, route) => {
    const d = await stands.start();
    const res = await send(d, { ...route, body: route.method === "POST" ? { content: "x" } : undefined });
    const unknown = { status: 404, body: { message: "404: Not Found", code: 0 } };
    expect({ status: res.status, body: res.body }).not.toEqual(unknown);
  });
});
