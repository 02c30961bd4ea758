/**
 * The DigitalOcean stand-in held to DigitalOcean's own answers. Each exchange in test/contracts/digitalocean/ is copied
 * from DigitalOcean's OpenAPI description (github.com/digitalocean/openapi; its `source` says which file; the folder's
 * README names the licence); it is replayed against the stand-in, brought into the state the exchange needs, and the
 * answer must have the real status, every header the real answer lists, and the real body's shape. A stand-in that
 * drifts from DigitalOcean fails here, naming the exchange and its source.
 *
 * An exchange may list `optional` fields: keys the source itself leaves out of `required` and shows absent elsewhere,
 * which the stand-in may leave out or answer null (each with the source's words as the reason).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Answer, RealExchange, ReplayState } from "../src/contract.ts";
import {
  contractProblems,
  named,
  realExchanges,
  replay,
  replayInState,
  routePattern,
  standIns,
} from "../src/contract.ts";
import type { DigitalOceanStandIn, DigitalOceanStandInOptions } from "../src/digitalocean.ts";
import { DIGITALOCEAN_ROUTES, startDigitalOceanStandIn } from "../src/digitalocean.ts";

const exchanges = realExchanges("digitalocean");

const TIMINGS = { createMs: 20, shutdownMs: 20, powerOffMs: 20, powerOnMs: 20, snapshotMs: 20 };
const stands = standIns((options?: DigitalOceanStandInOptions) =>
  startDigitalOceanStandIn({ timings: TIMINGS, ...options }),
);

afterEach(() => stands.closeAll());

/** The request body of droplets/examples.yml#/droplet_create_request, as the fixtures hold it. */
function createRequest(): unknown {
  const create = exchanges.find((e) => e.name === "create a droplet: 202 with links.actions");
  if (!create) throw new Error("the create exchange is missing");
  return create.request.body;
}

/**
 * Creates the example droplet (backups, IPv6, monitoring) and completes its create action: the action is held
 * ("action-hangs") and settled here, so nothing waits on the stand-in's timers.
 */
async function createExampleDroplet(d: DigitalOceanStandIn): Promise<void> {
  d.inject({ kind: "action-hangs", actionType: "create" });
  const res = await send(d, { method: "POST", path: "/v2/droplets", body: createRequest() });
  expect(res.status, "creating the example droplet").toBe(202);
  const action = d.actions().find((a) => a.type === "create" && a.status === "in-progress");
  if (!action) throw new Error("the create action is not in progress");
  d.settleAction(action.id, "completed");
  expect(d.droplets().map((x) => x.status)).toContain("active");
}

/** Takes the curl example's snapshot of the first droplet and completes the action (held and settled, as above). */
async function snapshotFirst(d: DigitalOceanStandIn): Promise<void> {
  d.inject({ kind: "action-hangs", actionType: "snapshot" });
  const snapshot = { type: "snapshot", name: "Nifty" };
  const res = await send(d, { method: "POST", path: "/v2/droplets/{droplet_id}/actions", body: snapshot });
  expect(res.status, "starting the snapshot").toBe(201);
  d.settleAction((res.body as { action: { id: number } }).action.id, "completed");
}

/** What an exchange needs before its request: stand-in options, the token to send, and steps against the stand-in. */
interface State extends ReplayState<DigitalOceanStandInOptions, DigitalOceanStandIn> {
  token?: string;
}

/** By exchange name; an exchange not named here runs against a fresh stand-in with its default droplet and keys. */
const STATES: Record<string, State> = {
  "droplet details: 200": { options: { droplets: [] }, before: createExampleDroplet },
  "list droplets: 200 with links and meta.total": { options: { droplets: [] }, before: createExampleDroplet },
  "list a droplet's actions: 200": { before: snapshotFirst },
  "droplet action details: 200": { before: snapshotFirst },
  "action details: 200": { before: snapshotFirst },
  "list droplet snapshots: 200": { options: { snapshots: [{ name: "web-01-1595954862243" }] } },
  "snapshot details: 200": { options: { snapshots: [{ name: "web-01-1595954862243" }] } },
  "delete a snapshot: 204": { options: { snapshots: [{ name: "web-01-1595954862243" }] } },
  "a wrong token: 401 unauthorized": { token: `dop_v1_${"0".repeat(64)}` },
  // The stand-in's own window: one request allowed, the exchange's request is the second.
  "over the rate limit: 429 too_many_requests with retry-after": {
    options: { rateLimit: { limit: 1, windowMs: 60_000 } },
    before: async (d) => {
      expect((await send(d, { method: "GET", path: "/v2/account" })).status, "the request before the limit").toBe(200);
    },
  },
  // The burst limit's 429 as the OpenAPI response lists it: the hour's headers, no Retry-After.
  "over the burst limit with room left in the hour: 429 with the hour's ratelimit-* and no retry-after": {
    before: async (d) => d.inject({ kind: "rate-limit", retryAfterSeconds: 29, withoutRetryAfter: true }),
  },
};

/** The stand-in's value for a placeholder, or undefined when it has none. */
async function placeholderValue(d: DigitalOceanStandIn, name: string): Promise<string | number | undefined> {
  const key = async (): Promise<{ id: number; fingerprint: string } | undefined> => {
    const res = await send(d, { method: "GET", path: "/v2/account/keys" });
    return (res.body as { ssh_keys: Array<{ id: number; fingerprint: string }> }).ssh_keys[0];
  };
  switch (name) {
    case "droplet_id":
      return d.droplets()[0]?.id;
    case "unknown_droplet_id":
      return 1;
    case "action_id":
      return d.actions()[0]?.id;
    case "snapshot_id":
      return d.snapshots()[0]?.id;
    case "ssh_key_id":
      return (await key())?.id;
    case "ssh_key_fingerprint":
      return (await key())?.fingerprint;
    default:
      return undefined;
  }
}

/**
 * A request as a DigitalOcean client makes it, with the stand-in's ids (in the body too): a bearer token, Accept
 * JSON, a JSON body (a string is sent as it is).
 */
function send(d: DigitalOceanStandIn, request: RealExchange["request"], token = d.token): Promise<Answer> {
  const headers = { Authorization: `Bearer ${token}`, Accept: "application/json" };
  return replay(d.url, request, { headers, value: (name) => placeholderValue(d, name), fillBody: true });
}

describe("DigitalOcean's own answers, replayed against the stand-in", () => {
  it("are named once each, optional keys with the source's reason, and on a route of DIGITALOCEAN_ROUTES; each route is listed once, with its source", () => {
    expect(contractProblems(exchanges, { routes: DIGITALOCEAN_ROUTES, states: STATES })).toEqual([]);
  });

  it.each(named(exchanges))("%s", (_name, real) =>
    replayInState(real, STATES, stands.start, (d, state) => send(d, real.request, state.token)),
  );

  it.each(named(DIGITALOCEAN_ROUTES))(
    "%s is answered by its own route, not the stand-in's 404 for unknown routes",
    async (_n, route) => {
      const d = await stands.start({ snapshots: [{ name: "old" }] });
      await snapshotFirst(d);
      const body = route.method === "POST" ? (route.path.endsWith("/actions") ? { type: "shutdown" } : {}) : undefined;
      const res = await send(d, { method: route.method, path: route.path, body });
      expect(res.status).not.toBe(404);
      const served = d.requests.at(-1)?.route;
      expect(served?.split(" ")[0]).toBe(route.method);
      expect(routePattern(route.path).test(served?.split(" ")[1]?.replace(/:[a-z_]+/g, "1") ?? "")).toBe(true);
    },
  );
});
