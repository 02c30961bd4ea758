/**
 * The Pterodactyl panel stand-in held to the panel's own answers. Each exchange in test/contracts/panel/ is built
 * from pterodactyl/panel's controllers, transformers, middleware and exception handler, and pterodactyl/wings' router
 * (its `source` says where; the folder's README names the snapshots and licences). It is replayed against the
 * stand-in, brought into the state the exchange needs, and the answer must have the real status, every header the
 * real answer lists, and the real body's shape. A stand-in that drifts from the panel fails here, naming the
 * exchange and its source.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Answer, RealExchange, ReplayState, RouteSource } from "../src/contract.ts";
import { contractProblems, named, onRoute, realExchanges, replay, replayInState, standIns } from "../src/contract.ts";
import type { PanelStandIn, PanelStandInOptions } from "../src/panel.ts";
import { PANEL_ROUTES, startPanelStandIn } from "../src/panel.ts";

const exchanges = realExchanges("panel");
/** Another client key of the stand-in's user. */
const OTHER_KEY = `ptlc_${"1".repeat(43)}`;
const stands = standIns(startPanelStandIn);

afterEach(() => stands.closeAll());

/** What an exchange needs: stand-in options, the key it sends, steps before the request and checks after it. */
interface State extends ReplayState<PanelStandInOptions, PanelStandIn> {
  /** The Authorization key: default the stand-in's client key; null sends none. */
  key?: string | null;
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
      expect((await send(p, { method: "GET", path: "/api/client/servers/{server}" })).status).toBe(200);
    },
  },
  "daemon unreachable: 504 DaemonConnectionException": {
    before: (p) => p.inject({ kind: "status", status: 504, route: "resources" }),
  },
  // The same user's other key spent the window: the window is the user's, not the key's.
  "over the rate limit with another key of the same user: 429 ThrottleRequestsException": {
    options: { rateLimit: { limit: 1, windowMs: 60_000 }, otherKeys: [OTHER_KEY] },
    before: async (p) => {
      const other = await send(p, { method: "GET", path: "/api/client/servers/{server}" }, OTHER_KEY);
      expect(other.status).toBe(200);
    },
  },
  "command while the server starts, before Wings has started its container: 502 HttpException": {
    options: { timings: { startMs: 600_000, stopMs: 50, containerMs: 600_000 } },
    before: async (p) => {
      await send(p, { method: "POST", path: "/api/client/servers/{server}/power", body: { signal: "start" } });
      await p.waitForState("starting");
    },
  },
  "resources when Wings' answer has no state: 200 stats, current_state stopped": {
    before: (p) => p.setStateReported(false),
    after: async (p) => {
      const res = await send(p, { method: "GET", path: "/api/client/servers/{server}/resources" });
      expect((res.body as { attributes: { current_state: string } }).attributes.current_state).toBe("stopped");
    },
  },
  "resources while Wings has not loaded the server: 504 DaemonConnectionException (code: 404)": {
    before: (p) => p.inject({ kind: "wings", status: 404, route: "resources" }),
  },
  "power while Wings has not loaded the server: 404 DaemonConnectionException": {
    before: (p) => p.inject({ kind: "wings", status: 404 }),
  },
  "power while Wings refuses the node token: 403 DaemonConnectionException": {
    before: (p) => p.inject({ kind: "wings", status: 403 }),
  },
  "power through a proxy in front of Wings that gets no answer from it: 502 DaemonConnectionException (code: 502)": {
    options: { servers: [{ state: "running" }] },
    before: (p) => p.inject({ kind: "wings", status: 502, route: "power" }),
  },
  "command without a container: 500 DaemonConnectionException": { before: (p) => p.removeContainer() },
  "startup without the permission startup.read: 403 AccessDeniedHttpException": {
    options: { servers: [{ permissions: ["control.console"] }] },
  },
  "switch while an administrator set the image by hand: 400 BadRequestHttpException": {
    before: (p) => p.setDockerImage("registry.example.com/custom-java:latest"),
  },
  "switch without the permission startup.docker-image: 403 AccessDeniedHttpException": {
    options: { servers: [{ permissions: ["startup.read"] }] },
    after: (p) => expect(p.dockerImage()).toBe("ghcr.io/pterodactyl/yolks:java_21"),
  },
  "switch to another of the egg's images: 204 No Content": {
    after: (p) =>
      expect(p.imageChanges()).toEqual([
        { from: "ghcr.io/pterodactyl/yolks:java_21", to: "ghcr.io/pterodactyl/yolks:java_17" },
      ]),
  },
};

/**
 * A request as a client API client makes it, to the stand-in's server: Accept JSON, a bearer key (default the
 * stand-in's client key; null sends none), a JSON body.
 */
function send(p: PanelStandIn, request: RealExchange["request"], key: string | null = p.apiKey): Promise<Answer> {
  const values: Record<string, string> = { server: p.server.identifier, "server.uuid": p.server.uuid };
  const headers: Record<string, string> = { Accept: "application/json" };
  if (key !== null) headers.Authorization = `Bearer ${key}`;
  return replay(p.url, request, { headers, value: (name) => values[name] });
}

/** Laravel's answer to a path no route matches (the stand-in answers it the same way). */
function isUnknownRoute(status: number, body: unknown): boolean {
  const detail = (body as { errors?: Array<{ detail?: unknown }> } | undefined)?.errors?.[0]?.detail;
  return status === 404 && typeof detail === "string" && /^The route .+ could not be found\.$/.test(detail);
}

/** The exchange is on the route: its path, and its method (or another, answered 405 as the real panel does). */
const onRouteOr405 = (e: RealExchange, route: RouteSource): boolean =>
  onRoute(e, e.response.status === 405 ? { ...route, method: e.request.method } : route);

describe("the panel's own answers, replayed against the stand-in", () => {
  it("are named once each and on a route of PANEL_ROUTES (but the unknown path); each route is listed once, with its source and a real exchange", () => {
    const table = { routes: PANEL_ROUTES, states: STATES, on: onRouteOr405, everyRouteReal: true };
    const offTable = (e: RealExchange) => isUnknownRoute(e.response.status, e.response.body);
    expect(contractProblems(exchanges, { ...table, offTable })).toEqual([]);
  });

  it.each(named(exchanges))("%s", (_name, real) =>
    replayInState(real, STATES, stands.start, (p, state) => send(p, real.request, state.key)),
  );

  it.each(named(PANEL_ROUTES))("%s is answered, not the stand-in's 404 for unknown routes", async (_name, route) => {
    const p = await stands.start({ servers: [{ state: "running" }] });
    const body = route.path.endsWith("/power")
      ? { signal: "kill" }
      : route.path.endsWith("/docker-image")
        ? { docker_image: "ghcr.io/pterodactyl/yolks:java_17" }
        : { command: "list" };
    const res = await send(p, { ...route, body: route.method === "GET" ? undefined : body });
    expect(isUnknownRoute(res.status, res.body), `${res.status} ${JSON.stringify(res.body)}`).toBe(false);
    expect(res.status).toBeLessThan(300);
  });
});
