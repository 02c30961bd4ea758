import type { Clock } from "@mcops/core/clock";
import { ConfigError, JobError, UsageError } from "@mcops/core/errors";
import { formatSpan } from "@mcops/core/format";
import { checkShape, POLICIES } from "@mcops/core/http/request";
import { parseGameAddress } from "@mcops/game-log/list-ping";
import { getDomain } from "tldts";
import * as z from "zod/mini";
import { type ApiOptions, createApi, type Method } from "./api.ts";

/**
 * DNS for the VM, on Cloudflare (docs/system.md 1.7): the zone and the two names come from SERVER_ADDR and PANEL_URL (no domain
 * variable), the zone found by the registrable domain (public-suffix aware through tldts: play.example.co.uk is in
 * example.co.uk). The panel name is proxied through the CDN; the play name is DNS only (the game's TCP cannot go through
 * the HTTP proxy). A record that is already right is not written.
 */
const CF_BASE = "https://api.cloudflare.com";

interface DnsName {
  name: string;
  zone: string;
  proxied: boolean;
  role: "panel" | "play";
}

export function dnsNames(serverAddr: string, panelUrl: string): DnsName[] {
  const play = parseGameAddress(serverAddr).host.toLowerCase();
  const panel = new URL(panelUrl).hostname.toLowerCase();
  return [
    { name: panel, zone: zoneOf(panel, "PANEL_URL"), proxied: true, role: "panel" },
    { name: play, zone: zoneOf(play, "SERVER_ADDR"), proxied: false, role: "play" },
  ];
}

function zoneOf(host: string, field: string): string {
  const zone = getDomain(host);
  if (!zone) {
    throw new ConfigError(`${host} has no registrable domain`, {
      where: field,
      hint: "use the public host name, e.g. play.example.com",
    });
  }
  return zone;
}

/**
 * Cloudflare's envelope (developers.cloudflare.com/api: success, errors, messages, result) as far as it is read.
 * `success` may be absent: a DNS record delete answers `{"result": {"id": ...}}` alone (the API schema's 200 example).
 */
export const envelopeSchema = z.object({
  success: z.optional(z.boolean()),
  errors: z.optional(z.array(z.object({ code: z.number(), message: z.string() }))),
  result: z.optional(z.unknown()),
});
type Envelope = z.infer<typeof envelopeSchema>;

export const dnsRecordSchema = z.object({
  id: z.string(),
  name: z.string(),
  type: z.string(),
  content: z.string(),
  proxied: z.boolean(),
});
type DnsRecord = z.infer<typeof dnsRecordSchema>;

export const zoneSchema = z.object({
  id: z.string(),
  name: z.string(),
  account: z.optional(z.object({ id: z.string() })),
});
export const verifySchema = z.object({ status: z.string(), expires_on: z.optional(z.nullable(z.string())) });
/** What a delete answers: the record's id. */
export const deletedSchema = z.object({ id: z.string() });
/** The whole body of an answer whose `result` `schema` reads (what the client checks after the envelope). */
export const resultSchema = <S extends z.ZodMiniType>(schema: S) => z.object({ result: schema });

/** Cloudflare does not take the token at all (401, or 1000/6003/9109): invalid, revoked, expired or of another kind. */
class TokenRefused extends JobError {}

/** Cloudflare's envelope errors in one line: a refused token (TokenRefused), a token that may not edit, the rest. */
function explainAnswer(base: string): ApiOptions["explain"] {
  return (status, body, method, path, waitMs) => {
    const errors = (body as Envelope | undefined)?.errors ?? [];
    const said = `${status}${errors.length ? `: ${errors.map((e) => `${e.code} ${e.message}`).join("; ")}` : ""}`;
    if (status === 401 || errors.some((e) => e.code === 1000 || e.code === 6003 || e.code === 9109)) {
      return new TokenRefused(`Cloudflare refused the token (${said})`, {
        where: "CLOUDFLARE_API_TOKEN",
        hint: "create an API token with Zone → DNS → Edit for the zone and put it in .env",
      });
    }
    if (status === 403) {
      return new JobError(`the Cloudflare token may not change this zone's DNS (${said})`, {
        where: `${method} ${path}`,
        hint: "give the token Zone → DNS → Edit on this zone (My Profile → API Tokens)",
      });
    }
    if (status === 429) {
      // Past 1200 calls in 5 minutes Cloudflare blocks every call of the token for the next 5 minutes
      // (cloudflare-docs fundamentals/api-rate-limits.mdx): running it again at once is refused again.
      const wait = waitMs === undefined ? "about 5 minutes" : `about ${formatSpan(waitMs)}`;
      return new JobError(`Cloudflare is rate limiting this token (${said})`, {
        where: `${method} ${base}${path}`,
        hint: `wait ${wait} (Cloudflare blocks the token for 5 minutes after 1200 calls in 5 minutes, also other tools using it), then run the same command again: it carries on where it stopped`,
      });
    }
    return new JobError(`Cloudflare answered ${said}`, {
      where: `${method} ${base}${path}`,
      hint: "run the same command again",
    });
  };
}

/** A request that answers the `result` of Cloudflare's envelope, as `schema` reads it. */
type Request = <S extends z.ZodMiniType>(
  method: Method,
  path: string,
  schema: S,
  json?: unknown,
) => Promise<z.infer<S>>;

/**
 * The `result` of an answer, as `schema` reads it. Cloudflare says a failure in the envelope too: a 200 whose success
 * is false is not a success; one that leaves success out (a record delete) is, when its result reads.
 */
function envelopeRequest(options: { base?: string | undefined; token: string; clock: Clock }): Request {
  const base = `${options.base ?? CF_BASE}/client/v4`;
  const explain = explainAnswer(base);
  const call = createApi({ base, token: options.token, clock: options.clock, policy: POLICIES.cloudflare, explain });
  return async (method, path, schema, json) => {
    const body = await call(method, path, envelopeSchema, json);
    if (body.success === false) throw explain(200, body, method.toUpperCase(), path);
    const route = `${method.toUpperCase()} ${path}`;
    const checked = checkShape(resultSchema(schema), body, { service: "Cloudflare", route });
    return (checked as { result: z.infer<typeof schema> }).result;
  };
}

/** The account a zone belongs to, as the token sees it; undefined when the token cannot see the zone. */
async function accountOf(request: Request, zone: string): Promise<string | undefined> {
  try {
    const zones = await request("get", `/zones?name=${encodeURIComponent(zone)}`, z.array(zoneSchema));
    return zones.find((found) => found.name === zone)?.account?.id;
  } catch (error) {
    if (error instanceof TokenRefused) return undefined;
    throw error;
  }
}

/**
 * Throws a clear error for an invalid, disabled or expired token, of either kind Cloudflare offers: a user token
 * verifies at /user/tokens/verify; an account-owned token is refused there (401, 1000) although every DNS call works,
 * and verifies at /accounts/{account_id}/tokens/verify, the account being the one `zone` belongs to.
 */
async function verifyToken(request: Request, zone: string): Promise<"user" | "account"> {
  let kind: "user" | "account" = "user";
  let token: z.infer<typeof verifySchema>;
  try {
    token = await request("get", "/user/tokens/verify", verifySchema);
  } catch (error) {
    if (!(error instanceof TokenRefused)) throw error;
    const accountId = await accountOf(request, zone);
    if (!accountId) {
      throw new TokenRefused(
        `Cloudflare refused the token as a user token and as an account token (${error.message.replace(/^Cloudflare refused the token \((.*)\)$/, "$1")})`,
        {
          where: "CLOUDFLARE_API_TOKEN",
          hint: `create an API token (My Profile or Manage Account → API Tokens) with Zone → DNS → Edit for ${zone} and put it in .env`,
        },
      );
    }
    token = await request("get", `/accounts/${accountId}/tokens/verify`, verifySchema);
    kind = "account";
  }
  if (token.status !== "active") {
    throw new JobError(
      `the Cloudflare ${kind === "account" ? "account " : ""}token is ${token.status}${token.expires_on ? ` (expired ${token.expires_on})` : ""}`,
      {
        where: "CLOUDFLARE_API_TOKEN",
        hint: "create a new API token with Zone → DNS → Edit for the zone and put it in .env",
      },
    );
  }
  return kind;
}

export function createCloudflare(options: { base?: string | undefined; token: string; clock: Clock }) {
  const request = envelopeRequest(options);
  return {
    verify: (zone: string) => verifyToken(request, zone),
    async zoneId(name: string): Promise<string> {
      const zones = await request("get", `/zones?name=${encodeURIComponent(name)}`, z.array(zoneSchema));
      const zone = zones.find((found) => found.name === name);
      if (!zone) {
        throw new JobError(`Cloudflare has no zone ${name} for this token`, {
          where: "CLOUDFLARE_API_TOKEN",
          hint: `add ${name} to Cloudflare, or give the token access to it`,
        });
      }
      return zone.id;
    },
    async aRecords(zoneId: string, name: string): Promise<DnsRecord[]> {
      return request(
        "get",
        `/zones/${zoneId}/dns_records?type=A&name=${encodeURIComponent(name)}`,
        z.array(dnsRecordSchema),
      );
    },
    async createA(zoneId: string, name: string, ip: string, proxied: boolean): Promise<void> {
      const record = { type: "A", name, content: ip, proxied, ttl: 1 };
      await request("post", `/zones/${zoneId}/dns_records`, dnsRecordSchema, record);
    },
    async updateA(zoneId: string, id: string, name: string, ip: string, proxied: boolean): Promise<void> {
      const record = { type: "A", name, content: ip, proxied, ttl: 1 };
      await request("patch", `/zones/${zoneId}/dns_records/${id}`, dnsRecordSchema, record);
    },
    async deleteRecord(zoneId: string, id: string): Promise<void> {
      await request("delete", `/zones/${zoneId}/dns_records/${id}`, deletedSchema);
    },
  };
}

export type Cloudflare = ReturnType<typeof createCloudflare>;

export interface DnsChange {
  name: string;
  role: "panel" | "play";
  /** What is there now ("none" when missing). */
  before: string;
  after: string;
  change: "create" | "update" | "none";
  /** Other A records of the name (an old address left behind): removed, since resolvers would hand them out too. */
  removed: string[];
}

function describe(ip: string | undefined, proxied: boolean | undefined): string {
  return ip === undefined ? "none" : `${ip} (${proxied ? "proxied" : "DNS only"})`;
}

/**
 * Points both names at `ip`: one A record each, the one that already has the address kept (or the first one updated),
 * any other A record of the name removed. Writes only what differs; with dryRun, only says what it would do.
 */
export async function syncDns(cf: Cloudflare, names: DnsName[], ip: string, dryRun: boolean): Promise<DnsChange[]> {
  if (!/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(ip) || ip.split(".").some((o) => Number(o) > 255)) {
    throw new UsageError(`"${ip}" is not an IPv4 address`, { hint: "e.g. --ip 203.0.113.7" });
  }
  await cf.verify((names[0] as DnsName).zone);
  const zones = new Map<string, string>();
  const changes: DnsChange[] = [];
  for (const entry of names) {
    const zoneId = zones.get(entry.zone) ?? (await cf.zoneId(entry.zone));
    zones.set(entry.zone, zoneId);
    const records = await cf.aRecords(zoneId, entry.name);
    const record = records.find((r) => r.content === ip) ?? records[0];
    const extra = records.filter((r) => r !== record);
    const after = describe(ip, entry.proxied);
    const right = record !== undefined && record.content === ip && record.proxied === entry.proxied;
    changes.push({
      name: entry.name,
      role: entry.role,
      before: describe(record?.content, record?.proxied),
      after,
      change: right ? "none" : record ? "update" : "create",
      removed: extra.map((r) => describe(r.content, r.proxied)),
    });
    if (dryRun) continue;
    if (record && !right) await cf.updateA(zoneId, record.id, entry.name, ip, entry.proxied);
    if (!record) await cf.createA(zoneId, entry.name, ip, entry.proxied);
    for (const r of extra) await cf.deleteRecord(zoneId, r.id);
  }
  return changes;
}
