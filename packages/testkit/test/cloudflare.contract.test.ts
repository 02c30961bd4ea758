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
import { afterEach, describe, expect, it } from "vitest";
import type { CloudflareStandIn, CloudflareStandInOptions } from "../src/cloudflare.ts";
import { CLOUDFLARE_ROUTES, startCloudflareStandIn } from "../src/cloudflare.ts";
import type { Answer, RealExchange, ReplayState } from "../src/contract.ts";
import { contractProblems, named, realExchanges, replay, replayInState, standIns } from "../src/contract.ts";

const exchanges = realExchanges("cloudflare");
const stands = standIns(startCloudflareStandIn);

afterEach(() => stands.closeAll());

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
interface State extends ReplayState<CloudflareStandInOptions, CloudflareStandIn> {
  token?: string;
}

/** Creates the schema's example record through the API, as a client would. */
async function createExample(c: CloudflareStandIn): Promise<void> {
  const create = { method: "POST", path: "/client/v4/zones/{zone_id}/dns_records", body: EXAMPLE_RECORD };
  expect((await send(c, create)).status, "creating the example record").toBe(200);
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
      expect((await send(c, { method: "GET", path: "/client/v4/zones" })).status, "the call before the limit").toBe(
        200,
      );
    },
  },
};

/** The stand-in's value for a placeholder, or undefined when it has none. */
async function placeholderValue(c: CloudflareStandIn, name: string): Promise<string | undefined> {
  const zone = c.zones()[0];
  if (!zone) throw new Error("the stand-in has no zone");
  switch (name) {
    case "zone_id":
      return zone.id;
    case "dns_record_id":
      return c.records()[0]?.id;
    case "unknown_record_id":
      return "0".repeat(32);
    case "account_id": {
      // The stand-in's account shows only in its zones, as on Cloudflare.
      const res = await send(c, { method: "GET", path: `/client/v4/zones/${zone.id}` });
      return (res.body as { result?: { account?: { id?: string } } }).result?.account?.id;
    }
    default:
      return undefined;
  }
}

/** A request as a Cloudflare client makes it, with the stand-in's ids: a bearer token and a JSON body. */
function send(c: CloudflareStandIn, request: RealExchange["request"], token = c.token): Promise<Answer> {
  const headers = { Authorization: `Bearer ${token}` };
  return replay(c.url, request, { headers, value: (name) => placeholderValue(c, name) });
}

describe("Cloudflare's own answers, replayed against the stand-in", () => {
  it("are named once each, optional keys with the source's reason, and on a route of CLOUDFLARE_ROUTES; each route is listed once, with its source and a real exchange", () => {
    const table = { routes: CLOUDFLARE_ROUTES, states: STATES, prefix: "/client/v4", everyRouteReal: true };
    expect(contractProblems(exchanges, table)).toEqual([]);
  });

  it.each(named(exchanges))("%s", (_name, real) =>
    replayInState(real, STATES, stands.start, (c, state) => send(c, real.request, state.token)),
  );

  it.each(named(CLOUDFLARE_ROUTES))(
    "%s is answered, not the stand-in's 7000 for unknown routes or 405",
    async (_n, route) => {
      const c = await stands.start({ records: [{ zone: "example.co.uk", name: "mc", content: "192.0.2.1" }] });
      const write = ["POST", "PUT", "PATCH"].includes(route.method);
      const path = `/client/v4${route.path}`;
      const res = await send(c, { method: route.method, path, body: write ? { content: "192.0.2.2" } : undefined });
      expect(res.status).not.toBe(405);
      expect((res.body as { errors?: Array<{ code: number }> }).errors?.map((e) => e.code) ?? []).not.toContain(7000);
      expect(c.requests.at(-1)?.route).not.toBe("other");
    },
  );
});
