/**
 * The Cloudflare stand-in held to Cloudflare's own answers. Each exchange in test/contracts/cloudflare/ is copied from
 * Cloudflare's OpenAPI schema, its documentation, or a recording of the live API (its `source` says where; the
 * folder's README names the licences); it is replayed against the stand-in, brought into the state the exchange
 * needs, and the answer must have the real status, every header the real answer lists, and the real body's shape. A
 * stand-in that drifts from Cloudflare fails here, naming the exchange and its source.
 *
 * An exchange may list `optional` fields: keys the source itself calls optional or nullable, which the stand-in may
 * leave out or answer null (each with the source's words as the reason). Every other key must be there.
 */
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { CloudflareStandIn, CloudflareStandInOptions } from "./cloudflare.ts";
import { CLOUDFLARE_ROUTES, startCloudflareStandIn } from "./cloudflare.ts";
import { loadExchanges, missingHeaders, type RealExchange, shapeDifferences } from "./contract.ts";

/** A real exchange, and the keys its source says may be absent or null ("$.result[].key", [] for any index). */
type Exchange = RealExchange & { optional?: Record<string, string> };

const exchanges = loadExchanges(fileURLToPath(new URL("../test/contracts/cloudflare", import.meta.url))) as Exchange[];

let cf: CloudflareStandIn | undefined;

afterEach(async () => {
  await cf?.close();
  cf = undefined;
});

async function start(options?: CloudflareStandInOptions): Promise<CloudflareStandIn> {
  cf = await startCloudflareStandIn(options);
  return cf;
}

/** A well-formed token the stand-in does not know. */
const WRONG_TOKEN = "Sn3lZJTBX6kkg7OdcBUAxOO963GEIyGQqnFTOFYY";
/** The writable fields of the ARecord example in Cloudflare's schema (what the fixtures' writes send). */
const EXAMPLE_RECORD = {
  type: "A",
  name: "example.com",
  content: "198.51.100.4",
  proxied: false,
  ttl: 3600,
  comment: "Domain verification record",
  tags: ["owner:dns-team"],
};
const VALIDITY = { tokenNotBefore: "2018-07-01T05:20:00Z", tokenExpiresOn: "2099-12-31T00:00:00Z" };

/** What an exchange needs before its request: stand-in options, the token to send, and steps against the stand-in. */
interface State {
  options?: CloudflareStandInOptions;
  token?: string;
  before?: (c: CloudflareStandIn) => Promise<void>;
}

/** Creates the schema's example record through the API, as a client would. */
async function createExample(c: CloudflareStandIn): Promise<void> {
  const res = await send(c, "POST", "/client/v4/zones/{zone_id}/dns_records", EXAMPLE_RECORD);
  expect(res.status, "creating the example record").toBe(200);
}

/** By exchange name; an exchange not named here runs against a fresh stand-in with one zone and no records. */
const STATES: Record<string, State> = {
  "verify an active token: 200 with its validity window": { options: VALIDITY },
  "verify an unknown token: 401 Invalid API Token (1000)": { token: WRONG_TOKEN },
  "verify an account-owned token: 200": { options: { tokenOwner: "account", ...VALIDITY } },
  "list DNS records: 200 with result_info": { before: createExample },
  "list DNS records: 200 as the live API answered": {
    options: { records: [{ zone: "example.co.uk", name: "mc", content: "192.0.2.1", proxied: true }] },
  },
  "DNS record details: 200": { before: createExample },
  "overwrite a DNS record (PUT): 200": { before: createExample },
  "edit a DNS record (PATCH): 200": { before: createExample },
  "delete a DNS record: 200 with its id": { before: createExample },
  "a write the token may not make: 403 with documentation_url": {
    options: { zones: [{ name: "example.co.uk", editable: false }] },
  },
  // The stand-in's own window: one call allowed, the exchange's call is the second.
  "over the rate limit: 429 with Retry-After": {
    options: {
      rateLimit: { limit: 1, windowMs: 60_000 },
      records: [{ zone: "example.co.uk", name: "mc", content: "192.0.2.1" }],
    },
    before: async (c) => {
      expect((await send(c, "GET", "/client/v4/zones")).status, "the call before the limit").toBe(200);
    },
  },
};

/** The path with its placeholders replaced by the stand-in's ids; a placeholder left over is a fixture error. */
async function resolvePath(c: CloudflareStandIn, path: string): Promise<string> {
  const zone = c.zones()[0];
  if (!zone) throw new Error("the stand-in has no zone");
  const values: Record<string, () => Promise<string | undefined> | string | undefined> = {
    zone_id: () => zone.id,
    dns_record_id: () => c.records()[0]?.id,
    unknown_record_id: () => "0".repeat(32),
    // The stand-in's account shows only in its zones, as on Cloudflare.
    account_id: async () => {
      const res = await fetch(`${c.url}/client/v4/zones/${zone.id}`, {
        headers: { Authorization: `Bearer ${c.token}` },
      });
      return ((await res.json()) as { result?: { account?: { id?: string } } }).result?.account?.id;
    },
  };
  let resolved = path;
  for (const [whole, name = ""] of path.matchAll(/\{([^}]+)\}/g)) {
    const value = await values[name]?.();
    if (value === undefined) throw new Error(`no value for ${whole} in ${path}`);
    resolved = resolved.replace(whole, value);
  }
  return resolved;
}

/** A request as a Cloudflare client makes it: a bearer token and a JSON body. */
async function send(
  c: CloudflareStandIn,
  method: string,
  path: string,
  body?: unknown,
  token: string = c.token,
): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  return fetch(`${c.url}${await resolvePath(c, path)}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
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

/** The table's path (relative to /client/v4) as a pattern matching a real request's path (query left off). */
function routePattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+");
  return new RegExp(`^/client/v4${escaped}$`);
}

describe("Cloudflare's own answers, replayed against the stand-in", () => {
  it("has real exchanges to replay, and every state names one of them", () => {
    expect(exchanges.length).toBeGreaterThan(0);
    const names = new Set(exchanges.map((e) => e.name));
    expect(names.size, "exchange names are unique").toBe(exchanges.length);
    expect(Object.keys(STATES).filter((name) => !names.has(name))).toEqual([]);
  });

  it.each(exchanges.map((e): [string, Exchange] => [e.name, e]))("%s", async (_name, real) => {
    const state = STATES[real.name] ?? {};
    const c = await start(state.options);
    await state.before?.(c);
    const res = await send(c, real.request.method, real.request.path, real.request.body, state.token);
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

  it("every exchange is on a route of CLOUDFLARE_ROUTES", () => {
    const outside = exchanges.filter(
      (e) =>
        !CLOUDFLARE_ROUTES.some(
          (r) => r.method === e.request.method && routePattern(r.path).test(e.request.path.split("?")[0] ?? ""),
        ),
    );
    expect(outside.map((e) => `${e.request.method} ${e.request.path}`)).toEqual([]);
  });
});

describe("CLOUDFLARE_ROUTES", () => {
  const routes = CLOUDFLARE_ROUTES.map((r): [string, (typeof CLOUDFLARE_ROUTES)[number]] => [
    `${r.method} ${r.path}`,
    r,
  ]);

  it("lists each route once", () => {
    expect(new Set(routes.map(([name]) => name)).size).toBe(routes.length);
  });

  it.each(routes)("%s names its source", (_name, route) => {
    expect(route.source.trim()).not.toBe("");
  });

  it.each(routes)("%s is answered, not the stand-in's 7000 for unknown routes or 405", async (_name, route) => {
    const c = await start({ records: [{ zone: "example.co.uk", name: "mc", content: "192.0.2.1" }] });
    const write = ["POST", "PUT", "PATCH"].includes(route.method);
    const res = await send(c, route.method, `/client/v4${route.path}`, write ? { content: "192.0.2.2" } : undefined);
    const body = (await bodyOf(res)) as { errors?: Array<{ code: number }> };
    expect(res.status).not.toBe(405);
    expect(body.errors?.map((e) => e.code) ?? []).not.toContain(7000);
    expect(c.requests.at(-1)?.route).not.toBe("other");
  });
});
