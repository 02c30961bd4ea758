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
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { loadExchanges, missingHeaders, type RealExchange, shapeDifferences } from "./contract.ts";
import type { DigitalOceanStandIn, DigitalOceanStandInOptions } from "./digitalocean.ts";
import { DIGITALOCEAN_ROUTES, startDigitalOceanStandIn } from "./digitalocean.ts";

/** A real exchange, and the keys its source says may be absent or null ("$.links.pages", [] for any index). */
type Exchange = RealExchange & { optional?: Record<string, string> };

const exchanges = loadExchanges(
  fileURLToPath(new URL("../test/contracts/digitalocean", import.meta.url)),
) as Exchange[];

let stand: DigitalOceanStandIn | undefined;

afterEach(async () => {
  await stand?.close();
  stand = undefined;
});

const TIMINGS = { createMs: 20, shutdownMs: 20, powerOffMs: 20, powerOnMs: 20, snapshotMs: 20 };

async function start(options?: DigitalOceanStandInOptions): Promise<DigitalOceanStandIn> {
  stand = await startDigitalOceanStandIn({ timings: TIMINGS, ...options });
  return stand;
}

/** Waits (polling the stand-in, at most 2 s) until `probe` holds. */
async function until(what: string, probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`not reached within 2 s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The request body of droplets/examples.yml#/droplet_create_request, as the fixtures hold it. */
function createRequest(): unknown {
  const create = exchanges.find((e) => e.name === "create a droplet: 202 with links.actions");
  if (!create) throw new Error("the create exchange is missing");
  return create.request.body;
}

/** Creates the example droplet (backups, IPv6, monitoring) and waits until its create action completed. */
async function createExampleDroplet(d: DigitalOceanStandIn): Promise<void> {
  const res = await send(d, "POST", "/v2/droplets", createRequest());
  expect(res.status, "creating the example droplet").toBe(202);
  await until("the example droplet is active", () => d.droplets().some((x) => x.status === "active"));
}

/** Takes the curl example's snapshot of the first droplet and waits until the action completed. */
async function snapshotFirst(d: DigitalOceanStandIn): Promise<void> {
  const res = await send(d, "POST", "/v2/droplets/{droplet_id}/actions", { type: "snapshot", name: "Nifty" });
  expect(res.status, "starting the snapshot").toBe(201);
  await until("the snapshot action completed", () => d.actions().some((a) => a.status === "completed"));
}

/** What an exchange needs before its request: stand-in options, the token to send, and steps against the stand-in. */
interface State {
  options?: DigitalOceanStandInOptions;
  token?: string;
  before?: (d: DigitalOceanStandIn) => Promise<void>;
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
      expect((await send(d, "GET", "/v2/account")).status, "the request before the limit").toBe(200);
    },
  },
};

/** The stand-in's value for a placeholder, or undefined when it has none. */
async function valueOf(d: DigitalOceanStandIn, name: string): Promise<string | number | undefined> {
  const key = async (): Promise<{ id: number; fingerprint: string } | undefined> => {
    const res = await fetch(`${d.url}/v2/account/keys`, { headers: { Authorization: `Bearer ${d.token}` } });
    return ((await res.json()) as { ssh_keys: Array<{ id: number; fingerprint: string }> }).ssh_keys[0];
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

/** Placeholders filled with the stand-in's ids: in the path, and as whole string values in a JSON body. */
async function resolve(d: DigitalOceanStandIn, value: unknown, where: string): Promise<unknown> {
  if (typeof value === "string") {
    const whole = /^\{([a-z_]+)\}$/.exec(value);
    if (whole) {
      const found = await valueOf(d, whole[1] ?? "");
      if (found === undefined) throw new Error(`no value for ${value} in ${where}`);
      return found;
    }
    let path = value;
    for (const [placeholder, name = ""] of value.matchAll(/\{([a-z_]+)\}/g)) {
      const found = await valueOf(d, name);
      if (found === undefined) throw new Error(`no value for ${placeholder} in ${where}`);
      path = path.replace(placeholder, String(found));
    }
    return path;
  }
  if (Array.isArray(value)) return Promise.all(value.map((v) => resolve(d, v, where)));
  if (value !== null && typeof value === "object") {
    const entries = await Promise.all(
      Object.entries(value).map(async ([k, v]) => [k, await resolve(d, v, where)] as const),
    );
    return Object.fromEntries(entries);
  }
  return value;
}

/** A request as a DigitalOcean client makes it: a bearer token and a JSON body (a string is sent as it is). */
async function send(
  d: DigitalOceanStandIn,
  method: string,
  path: string,
  body?: unknown,
  token: string = d.token,
): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}`, Accept: "application/json" };
  let text: string | undefined;
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    text = typeof body === "string" ? body : JSON.stringify(await resolve(d, body, `the body of ${path}`));
  }
  return fetch(`${d.url}${await resolve(d, path, path)}`, {
    method,
    headers,
    body: text,
    signal: AbortSignal.timeout(5000),
  });
}

async function bodyOf(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === "") return undefined;
  return res.headers.get("content-type")?.startsWith("application/json") ? JSON.parse(text) : text;
}

/** The differences left once the fields the source calls optional may be absent or null in the stand-in. */
function beyondOptional(differences: string[], optional: Record<string, string> = {}): string[] {
  return differences.filter((difference) => {
    const at = difference.slice(0, difference.indexOf(": "));
    const absentOrNull = / missing in the stand-in$|, the stand-in null$/.test(difference);
    return !(absentOrNull && at.replace(/\[\d+\]/g, "[]") in optional);
  });
}

/** The table's path as a pattern matching a real request's path (query left off). */
function routePattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+");
  return new RegExp(`^${escaped}$`);
}

describe("DigitalOcean's own answers, replayed against the stand-in", () => {
  it("has real exchanges to replay, and every state names one of them", () => {
    expect(exchanges.length).toBeGreaterThan(0);
    const names = new Set(exchanges.map((e) => e.name));
    expect(names.size, "exchange names are unique").toBe(exchanges.length);
    expect(Object.keys(STATES).filter((name) => !names.has(name))).toEqual([]);
  });

  it.each(exchanges.map((e): [string, Exchange] => [e.name, e]))("%s", async (_name, real) => {
    const state = STATES[real.name] ?? {};
    const d = await start(state.options);
    await state.before?.(d);
    const res = await send(d, real.request.method, real.request.path, real.request.body, state.token);
    const ours = await bodyOf(res);
    const where = `${real.name} (real answer from ${real.source})`;
    expect(res.status, `status: ${where}`).toBe(real.response.status);
    expect(missingHeaders(real.response.headers, res.headers), `headers missing: ${where}`).toEqual([]);
    if (real.response.body === undefined) expect(ours, `body: ${where}`).toBeUndefined();
    else {
      const differences = beyondOptional(shapeDifferences(real.response.body, ours), real.optional);
      expect(differences, `body shape: ${where}`).toEqual([]);
    }
  });

  it("lists as optional only keys written as JSON paths, each with the source's reason", () => {
    const bad = exchanges.flatMap((e) =>
      Object.entries(e.optional ?? {})
        .filter(([path, reason]) => !/^\$(\.[a-z_]+(\[\])?)+$/.test(path) || reason.trim() === "")
        .map(([path]) => `${e.name}: ${path}`),
    );
    expect(bad).toEqual([]);
  });

  it("every exchange is on a route of DIGITALOCEAN_ROUTES", () => {
    const outside = exchanges.filter(
      (e) =>
        !DIGITALOCEAN_ROUTES.some(
          (r) => r.method === e.request.method && routePattern(r.path).test(e.request.path.split("?")[0] ?? ""),
        ),
    );
    expect(outside.map((e) => `${e.request.method} ${e.request.path}`)).toEqual([]);
  });
});

describe("DIGITALOCEAN_ROUTES", () => {
  const routes = DIGITALOCEAN_ROUTES.map((r): [string, (typeof DIGITALOCEAN_ROUTES)[number]] => [
    `${r.method} ${r.path}`,
    r,
  ]);

  it("lists each route once", () => {
    expect(new Set(routes.map(([name]) => name)).size).toBe(routes.length);
  });

  it.each(routes)("%s names its source", (_name, route) => {
    expect(route.source.trim()).not.toBe("");
  });

  it.each(routes)("%s is answered by its own route, not the stand-in's 404 for unknown routes", async (_n, route) => {
    const d = await start({ snapshots: [{ name: "old" }] });
    await snapshotFirst(d);
    const body = route.method === "POST" ? (route.path.endsWith("/actions") ? { type: "shutdown" } : {}) : undefined;
    const res = await send(d, route.method, route.path, body);
    expect(res.status).not.toBe(404);
    const served = d.requests.at(-1)?.route;
    expect(served?.split(" ")[0]).toBe(route.method);
    expect(routePattern(route.path).test(served?.split(" ")[1]?.replace(/:[a-z_]+/g, "1") ?? "")).toBe(true);
  });
});
