/**
 * The Discord webhook stand-in held to Discord's own answers. Each exchange in test/contracts/discord/ is copied from
 * discord/discord-api-docs or discord/discord-api-spec (its `source` says where; the folder's README names the
 * licences); it is replayed against the stand-in, brought into the state the exchange needs, and the answer must have
 * the real status, every header the real answer lists, and the real body's shape. A stand-in that drifts from Discord
 * fails here, naming the exchange and its source.
 */
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { loadExchanges, missingHeaders, type RealExchange, shapeDifferences } from "./contract.ts";
import type { DiscordStandIn, DiscordStandInOptions } from "./discord.ts";
import { DISCORD_ROUTES, startDiscordStandIn } from "./discord.ts";

const exchanges = loadExchanges(fileURLToPath(new URL("../test/contracts/discord", import.meta.url)));

let discord: DiscordStandIn | undefined;

afterEach(async () => {
  await discord?.close();
  discord = undefined;
});

async function start(options?: DiscordStandInOptions): Promise<DiscordStandIn> {
  discord = await startDiscordStandIn(options);
  return discord;
}

/** What an exchange needs before its request: stand-in options, and steps against the running stand-in. */
interface State {
  options?: DiscordStandInOptions;
  before?: (d: DiscordStandIn) => Promise<void> | void;
}

/** By exchange name; an exchange not named here runs against a fresh stand-in with one webhook. */
const STATES: Record<string, State> = {
  "unknown webhook: 404 Unknown Webhook (10015)": { before: (d) => d.deleteWebhook(0) },
  "exceeded user rate limit: 429": {
    before: (d) => d.inject({ kind: "rate-limit", retryAfterSeconds: 64.57 }),
  },
  // The stand-in's own window: one post allowed, the exchange's post is the second.
  "exceeded resource rate limit: 429 shared": {
    options: { rateLimit: { limit: 1, windowMs: 60_000 } },
    before: async (d) => {
      const first = await send(d, "POST", "/api/webhooks/{webhook.id}/{webhook.token}", { content: "first" });
      expect(first.status).toBe(204);
    },
  },
  "exceeded global rate limit: 429 global": {
    before: (d) => d.inject({ kind: "rate-limit", retryAfterSeconds: 64.57, global: true }),
  },
};

/** The path with its placeholders replaced by the stand-in's webhook; a placeholder left over is a fixture error. */
function resolvePath(d: DiscordStandIn, path: string): string {
  const hook = d.webhooks[0];
  if (!hook) throw new Error("the stand-in has no webhook");
  const values: Record<string, string> = {
    "webhook.id": hook.id,
    "webhook.token": hook.token,
    "wrong.token": `${hook.token.slice(0, -4)}xxxx`,
    version: "10",
  };
  return path.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for ${whole} in ${path}`);
    return value;
  });
}

/** A request as a webhook client makes it: a JSON body (a string is sent as it is, for bodies that are not JSON). */
function send(d: DiscordStandIn, method: string, path: string, body?: unknown): Promise<Response> {
  const init: RequestInit = { method, signal: AbortSignal.timeout(5000) };
  if (body !== undefined) {
    init.headers = { "Content-Type": "application/json" };
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  return fetch(`${d.url}${resolvePath(d, path)}`, init);
}

async function bodyOf(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === "") return undefined;
  return res.headers.get("content-type")?.startsWith("application/json") ? JSON.parse(text) : text;
}

/** The table's path as a pattern matching a real request's path (query left off). */
function routePattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+");
  return new RegExp(`^${escaped}$`);
}

describe("Discord's own answers, replayed against the stand-in", () => {
  it("has real exchanges to replay, and every state names one of them", () => {
    expect(exchanges.length).toBeGreaterThan(0);
    const names = new Set(exchanges.map((e) => e.name));
    expect(Object.keys(STATES).filter((name) => !names.has(name))).toEqual([]);
  });

  it.each(exchanges.map((e): [string, RealExchange] => [e.name, e]))("%s", async (_name, real) => {
    const state = STATES[real.name] ?? {};
    const d = await start(state.options);
    await state.before?.(d);
    const res = await send(d, real.request.method, real.request.path, real.request.body);
    const ours = await bodyOf(res);
    const where = `${real.name} (real answer from ${real.source})`;
    expect(res.status, `status: ${where}`).toBe(real.response.status);
    expect(missingHeaders(real.response.headers, res.headers), `headers missing: ${where}`).toEqual([]);
    if (real.response.body === undefined) expect(ours, `body: ${where}`).toBeUndefined();
    else expect(shapeDifferences(real.response.body, ours), `body shape: ${where}`).toEqual([]);
  });

  it("every exchange is on a route of DISCORD_ROUTES", () => {
    const outside = exchanges.filter(
      (e) =>
        !DISCORD_ROUTES.some(
          (r) => r.method === e.request.method && routePattern(r.path).test(e.request.path.split("?")[0] ?? ""),
        ),
    );
    expect(outside.map((e) => `${e.request.method} ${e.request.path}`)).toEqual([]);
  });
});

describe("DISCORD_ROUTES", () => {
  const routes = DISCORD_ROUTES.map((r): [string, (typeof DISCORD_ROUTES)[number]] => [`${r.method} ${r.path}`, r]);

  it.each(routes)("%s names its source", (_name, route) => {
    expect(route.source.trim()).not.toBe("");
  });

  it.each(routes)("%s is answered, not the stand-in's 404 for unknown routes", async (_name, route) => {
    const d = await start();
    const res = await send(d, route.method, route.path, route.method === "POST" ? { content: "x" } : undefined);
    const body = await bodyOf(res);
    expect({ status: res.status, body }).not.toEqual({ status: 404, body: { message: "404: Not Found", code: 0 } });
  });
});
