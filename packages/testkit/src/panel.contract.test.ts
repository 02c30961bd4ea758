/**
 * The Pterodactyl panel stand-in held to the panel's own answers. Each exchange in test/contracts/panel/ is built
 * from pterodactyl/panel's controllers, transformers, middleware and exception handler, and pterodactyl/wings' router
 * (its `source` says where; the folder's README names the snapshots and licences). It is replayed against the
 * stand-in, brought into the state the exchange needs, and the answer must have the real status, every header the
 * real answer lists, and the real body's shape. A stand-in that drifts from the panel fails here, naming the
 * exchange and its source.
 */
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { loadExchanges, missingHeaders, type RealExchange, shapeDifferences } from "./contract.ts";
import type { PanelStandIn, PanelStandInOptions } from "./panel.ts";
import { PANEL_ROUTES, startPanelStandIn } from "./panel.ts";

const exchanges = loadExchanges(fileURLToPath(new URL("../test/contracts/panel", import.meta.url)));

let panel: PanelStandIn | undefined;

afterEach(async () => {
  await panel?.close();
  panel = undefined;
});

async function start(options?: PanelStandInOptions): Promise<PanelStandIn> {
  panel = await startPanelStandIn(options);
  return panel;
}

/** What an exchange needs: stand-in options, the key it sends, steps before the request and checks after it. */
interface State {
  options?: PanelStandInOptions;
  /** The Authorization key: default the stand-in's client key; null sends none. */
  key?: string | null;
  before?: (p: PanelStandIn) => Promise<void> | void;
  after?: (p: PanelStandIn) => Promise<void> | void;
}

/** By exchange name; an exchange not named here runs against a fresh stand-in with one offline server. */
const STATES: Record<string, State> = {
  "details of a suspended server: 200, status suspended": { before: (p) => p.setStatus("suspended") },
  "details of an installing server: 200, status installing": { before: (p) => p.setStatus("installing") },
  "details of a server being transferred: 200, status null, is_transferring": {
    before: (p) => p.setStatus("transferring"),
  },
  "resources of a running server: 200 stats": {
    options: { servers: [{ state: "running", uptimeMs: 3_600_000 }] },
  },
  // The signal is acted on after the 204 (Wings answers 202 and acts in a goroutine): the server does start.
  "power signal start: 204 No Content": { after: (p) => p.waitForState("running") },
  "command to a running server: 204 No Content": { before: (p) => p.setState("running") },
  // setState leaves the server stopping until the test says otherwise.
  "command while the server stops: 204 No Content": { before: (p) => p.setState("stopping") },
  "command empty: 422 rule required": { before: (p) => p.setState("running") },
  "no API key: 401 AuthenticationException": { key: null },
  "wrong API key: 401 AuthenticationException": { key: `ptlc_${"0".repeat(43)}` },
  "application API key: 403 AccessDeniedHttpException": { key: `ptla_${"0".repeat(43)}` },
  "application API key on an unknown server: 404 NotFoundHttpException": { key: `ptla_${"0".repeat(43)}` },
  "power to a suspended server: 409 ServerStateConflictException": { before: (p) => p.setStatus("suspended") },
  "resources of an installing server: 409 ServerStateConflictException": {
    before: (p) => p.setStatus("installing"),
  },
  "command to a server being transferred: 409 ServerStateConflictException": {
    before: (p) => {
      p.setState("running");
      p.setStatus("transferring");
    },
  },
  // The stand-in's own window: one request allowed, the exchange's request is the second.
  "over the rate limit: 429 ThrottleRequestsException": {
    options: { rateLimit: { limit: 1, windowMs: 60_000 } },
    before: async (p) => {
      const first = await send(p, "GET", "/api/client/servers/{server}");
      expect(first.status).toBe(200);
      await first.body?.cancel();
    },
  },
  "daemon unreachable: 504 DaemonConnectionException": {
    before: (p) => p.inject({ kind: "status", status: 504, route: "resources" }),
  },
};

/** The path with its placeholders replaced by the stand-in's server; a placeholder left over is a fixture error. */
function resolvePath(p: PanelStandIn, path: string): string {
  const values: Record<string, string> = { server: p.server.identifier, "server.uuid": p.server.uuid };
  return path.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for ${whole} in ${path}`);
    return value;
  });
}

/**
 * A request as a client API client makes it: Accept JSON, a bearer key, a JSON body (a string is sent as it is, for
 * bodies that are not JSON).
 */
function send(
  p: PanelStandIn,
  method: string,
  path: string,
  body?: unknown,
  key: string | null = p.apiKey,
): Promise<Response> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (key !== null) headers.Authorization = `Bearer ${key}`;
  const init: RequestInit = { method, headers, signal: AbortSignal.timeout(5000) };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  return fetch(`${p.url}${resolvePath(p, path)}`, init);
}

async function bodyOf(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === "") return undefined;
  return res.headers.get("content-type")?.startsWith("application/json") ? JSON.parse(text) : text;
}

/** The table's path as a pattern matching a real request's path. */
function routePattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+");
  return new RegExp(`^${escaped}$`);
}

/** Laravel's answer to a path no route matches (the stand-in answers it the same way). */
function isUnknownRoute(status: number, body: unknown): boolean {
  const detail = (body as { errors?: Array<{ detail?: unknown }> } | undefined)?.errors?.[0]?.detail;
  return status === 404 && typeof detail === "string" && /^The route .+ could not be found\.$/.test(detail);
}

/** The exchange is on the route: its path, and its method (or another, answered 405 as the real panel does). */
const onRoute = (e: RealExchange, route: (typeof PANEL_ROUTES)[number]): boolean =>
  (route.method === e.request.method || e.response.status === 405) &&
  routePattern(route.path).test(e.request.path.split("?")[0] ?? "");

describe("the panel's own answers, replayed against the stand-in", () => {
  it("has real exchanges to replay, and every state names one of them", () => {
    expect(exchanges.length).toBeGreaterThan(0);
    const names = new Set(exchanges.map((e) => e.name));
    expect(names.size, "exchange names are unique").toBe(exchanges.length);
    expect(Object.keys(STATES).filter((name) => !names.has(name))).toEqual([]);
  });

  it.each(exchanges.map((e): [string, RealExchange] => [e.name, e]))("%s", async (_name, real) => {
    const state = STATES[real.name] ?? {};
    const p = await start(state.options);
    await state.before?.(p);
    const res = await send(p, real.request.method, real.request.path, real.request.body, state.key);
    const ours = await bodyOf(res);
    const where = `${real.name} (real answer from ${real.source})`;
    expect(res.status, `status: ${where}`).toBe(real.response.status);
    expect(missingHeaders(real.response.headers, res.headers), `headers missing: ${where}`).toEqual([]);
    if (real.response.body === undefined) expect(ours, `body: ${where}`).toBeUndefined();
    else expect(shapeDifferences(real.response.body, ours), `body shape: ${where}`).toEqual([]);
    await state.after?.(p);
  });

  it("every exchange is on a route of PANEL_ROUTES, but the one for a path no route has", () => {
    const outside = exchanges.filter(
      (e) => !isUnknownRoute(e.response.status, e.response.body) && !PANEL_ROUTES.some((route) => onRoute(e, route)),
    );
    expect(outside.map((e) => `${e.request.method} ${e.request.path}`)).toEqual([]);
  });

  it("every route of PANEL_ROUTES has a real exchange", () => {
    const bare = PANEL_ROUTES.filter((route) =>
      exchanges.every((e) => e.request.method !== route.method || !onRoute(e, route)),
    );
    expect(bare.map((r) => `${r.method} ${r.path}`)).toEqual([]);
  });
});

describe("PANEL_ROUTES", () => {
  const routes = PANEL_ROUTES.map((r): [string, (typeof PANEL_ROUTES)[number]] => [`${r.method} ${r.path}`, r]);

  it.each(routes)("%s names its source", (_name, route) => {
    expect(route.source.trim()).not.toBe("");
  });

  it.each(routes)("%s is answered, not the stand-in's 404 for unknown routes", async (_name, route) => {
    const p = await start({ servers: [{ state: "running" }] });
    const body = route.path.endsWith("/power") ? { signal: "kill" } : { command: "list" };
    const res = await send(p, route.method, route.path, route.method === "POST" ? body : undefined);
    const ours = await bodyOf(res);
    expect(isUnknownRoute(res.status, ours), `${res.status} ${JSON.stringify(ours)}`).toBe(false);
    expect(res.status).toBeLessThan(300);
  });
});
