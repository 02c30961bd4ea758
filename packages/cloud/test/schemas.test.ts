/**
 * The DigitalOcean and Cloudflare clients' schemas held to the vendors' real bodies (testkit test/contracts/digitalocean
 * and cloudflare, copied from their OpenAPI descriptions, documentation and recordings of the live APIs). Each row
 * of a table is a route the client calls and the schema it reads the answer with; every real 2xx body of that route
 * must pass, so a schema that asks for more than the vendor sends fails here, with the tool's own line.
 */
import { checkShape } from "@mcops/core/http";
import { bodiesRead, type RealExchange, realExchanges } from "@mcops/testkit";
import { describe, expect, it } from "vitest";
import * as z from "zod/mini";
import {
  deletedSchema,
  dnsRecordSchema,
  envelopeSchema,
  resultSchema,
  verifySchema,
  zoneSchema,
} from "../src/cloudflare.ts";
import {
  actionBodySchema,
  accountSchema as doAccountSchema,
  dropletBodySchema,
  dropletSchema,
  page,
  snapshotSchema,
  sshKeySchema,
} from "../src/digitalocean.ts";

/** The routes createDigitalOcean calls, and the schema each answer is read with (`page` as `all()` builds it). */
const DIGITALOCEAN_READS = [
  { name: "accountSchema", schema: doAccountSchema, method: "GET", path: "/v2/account" },
  { name: "page(droplets)", schema: page("droplets", dropletSchema), method: "GET", path: "/v2/droplets" },
  { name: "dropletBodySchema", schema: dropletBodySchema, method: "GET", path: "/v2/droplets/{droplet_id}" },
  { name: "dropletBodySchema", schema: dropletBodySchema, method: "POST", path: "/v2/droplets" },
  {
    name: "actionBodySchema",
    schema: actionBodySchema,
    method: "POST",
    path: "/v2/droplets/{droplet_id}/actions",
  },
  { name: "actionBodySchema", schema: actionBodySchema, method: "GET", path: "/v2/actions/{action_id}" },
  { name: "page(snapshots)", schema: page("snapshots", snapshotSchema), method: "GET", path: "/v2/snapshots" },
  { name: "page(ssh_keys)", schema: page("ssh_keys", sshKeySchema), method: "GET", path: "/v2/account/keys" },
].map((read) => ({ ...read, answers: "success" as const }));

/**
 * The routes createCloudflare calls, and the schema of the `result` it reads; every answer is first read with the
 * envelope's schema, then as `resultSchema(schema)`, as the client's request() does.
 */
const CLOUDFLARE_READS = [
  { name: "zoneSchema[]", schema: z.array(zoneSchema), method: "GET", path: "/client/v4/zones" },
  {
    name: "dnsRecordSchema[]",
    schema: z.array(dnsRecordSchema),
    method: "GET",
    path: "/client/v4/zones/{zone_id}/dns_records",
  },
  ...[
    "POST /client/v4/zones/{zone_id}/dns_records",
    "PATCH /client/v4/zones/{zone_id}/dns_records/{dns_record_id}",
  ].map((route) => {
    const [method = "", path = ""] = route.split(" ");
    return { name: "dnsRecordSchema", schema: dnsRecordSchema, method, path };
  }),
  {
    name: "deletedSchema",
    schema: deletedSchema,
    method: "DELETE",
    path: "/client/v4/zones/{zone_id}/dns_records/{dns_record_id}",
  },
  { name: "verifySchema", schema: verifySchema, method: "GET", path: "/client/v4/user/tokens/verify" },
  { name: "verifySchema", schema: verifySchema, method: "GET", path: "/client/v4/accounts/{account_id}/tokens/verify" },
].map((read) => ({ ...read, answers: "success" as const }));

const where = (real: RealExchange) => `${real.name} (real answer from ${real.source})`;
const route = (real: RealExchange) => `${real.request.method} ${real.request.path}`;

describe("the DigitalOcean client's schemas and DigitalOcean's real answers", () => {
  const { cases, unmatched } = bodiesRead(realExchanges("digitalocean"), DIGITALOCEAN_READS);

  it("has a real body for every row of the table", () => {
    expect(unmatched).toEqual([]);
  });

  it.each(cases)("%s", (_name, read, real) => {
    const check = () => checkShape(read.schema, real.response.body, { service: "DigitalOcean", route: route(real) });
    expect(check, where(real)).not.toThrow();
  });
});

describe("the Cloudflare client's schemas and Cloudflare's real answers", () => {
  const { cases, unmatched } = bodiesRead(realExchanges("cloudflare"), CLOUDFLARE_READS);

  it("has a real body for every row of the table", () => {
    expect(unmatched).toEqual([]);
  });

  it.each(cases)("%s", (_name, read, real) => {
    const service = { service: "Cloudflare", route: route(real) };
    expect(() => checkShape(envelopeSchema, real.response.body, service), where(real)).not.toThrow();
    expect(() => checkShape(resultSchema(read.schema), real.response.body, service), where(real)).not.toThrow();
  });
});
