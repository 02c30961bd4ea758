/**
 * A loopback stand-in for the DNS parts of Cloudflare's API v4 (what is https://api.cloudflare.com/client/v4):
 * token verification, zone lookup and DNS record list/read/create/overwrite/edit/delete, answered in Cloudflare's
 * envelope (`{success, errors, messages, result, result_info?}`) with its status and error codes, a per-token rate
 * limit (1200 requests per 5 minutes, then every call is refused for the window) and fault injection.
 *
 * Where the API reference is silent, the stand-in follows what the live API has been seen to answer:
 * - no credentials: 400, 9106; a malformed Authorization header or token (not `Bearer ` + at least 40 of
 *   A-Z a-z 0-9 - _): 400, 6003 with error_chain 6111; an X-Auth-Key instead of a token: 400, 6003/6103;
 * - a well-formed but unknown token: 401, 1000 "Invalid API Token" on /user/tokens/verify, 403, 9109 "Invalid access
 *   token" everywhere else; a disabled or expired token: verify answers 200 with that status (the documented
 *   schema), every other call 403, 9109;
 * - a write to a zone the token may only read (`editable: false`) or any call on a zone id the token cannot see:
 *   403, 10000 "Authentication error"; a zone or record id that is not 32 hex digits: 400, 7003 + 7000; an unknown
 *   record id: 404, 81044;
 * - DNS validation: 9005/9006 (bad A/AAAA content), 9000 (bad name), 9020 (type), and 1004 "DNS Validation Error"
 *   with an error_chain of 9007 (CNAME content), 9021 (TTL), 9004 (proxied on a type that cannot be), all 400; an
 *   identical record: 400, 81058; A/AAAA next to a CNAME: 81054; a CNAME next to A/AAAA/CNAME: 81053; a body that
 *   is not JSON: 6007; JSON of the wrong shape (a field of the wrong JSON type): 9207;
 * - 429 carries 971 "Please wait and consider throttling your request speed" and `Retry-After` (seconds, rounded
 *   up); every authenticated answer carries `Ratelimit` and `Ratelimit-Policy`.
 * Records support the types A, AAAA, CNAME and TXT; a name is stored as a lower-case FQDN ("@" is the apex, a name
 * outside the zone gets the zone appended, as Cloudflare does). The list filter `name` is an exact, case-insensitive
 * match on the FQDN: `name=mc` does not find `mc.example.co.uk`.
 *
 * Every route names the public source it follows in CLOUDFLARE_ROUTES; `test/cloudflare.contract.test.ts` runs the
 * vendor's own example answers (`test/contracts/cloudflare/`) against this stand-in, so a drift fails a test.
 * A 403 that denies a call carries `documentation_url`, the API reference page of the denied route (Cloudflare's
 * changelog "Enriched 403 responses for the Cloudflare API", 2026-08-20).
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isIPv4, isIPv6 } from "node:net";
import type { RouteSource } from "./contract.ts";
import type { Fault, HeaderMap, JsonParse, Loopback, RateLimitFault, StatusFault } from "./http.ts";
import {
  applyFault,
  FaultQueue,
  isPlainObject,
  listenLoopback,
  parseJson,
  randomString,
  readBody,
  reasonPhrase,
  SlidingWindowLimiter,
  sendAny,
  sendJson,
  TimerSet,
} from "./http.ts";

export type DnsRecordType = "A" | "AAAA" | "CNAME" | "TXT";
export type TokenStatus = "active" | "disabled" | "expired";
/** verify: GET /user/tokens/verify; zones: GET /zones[/{id}]; dns_records: GET on dns_records; dns_write: the rest. */
export type CloudflareRoute = "verify" | "zones" | "dns_records" | "dns_write";
/** A fault, optionally only for one route. A status fault without a body sends Cloudflare's envelope. */
export type CloudflareFault = Fault & { route?: CloudflareRoute };

export interface CloudflareError {
  code: number;
  message: string;
  /** On a 403 denial: the API reference page of the denied route. */
  documentation_url?: string;
  error_chain?: CloudflareError[];
}

export interface CloudflareStandInOptions {
  /** Default: 40 random characters. */
  token?: string;
  /** Zones the token can see. Default: [{ name: "example.co.uk" }]. `editable: false` makes DNS writes 403 (a token scoped to another zone or read-only). */
  zones?: Array<{ name: string; editable?: boolean }>;
  /** DNS records that exist at start. */
  records?: Array<{
    zone: string;
    name: string;
    type?: DnsRecordType;
    content: string;
    proxied?: boolean;
    ttl?: number;
  }>;
  /** Token status for its verify route: default "active". */
  tokenStatus?: TokenStatus;
  /**
   * The token's validity window as its verify route reports it (`not_before`, `expires_on`, ISO 8601), when the token
   * was created with one. Default: none (an expired token without `tokenExpiresOn` reports a day ago).
   */
  tokenNotBefore?: string;
  tokenExpiresOn?: string;
  /**
   * Who owns the token (default "user"). A user token verifies at GET /user/tokens/verify; an account-owned token
   * (Manage Account → API Tokens) verifies at GET /accounts/{account_id}/tokens/verify, and /user/tokens/verify answers
   * it 401, 1000 "Invalid API Token" although every zone and DNS call works. Sources: developers.cloudflare.com/api,
   * "Verify Token" under User → Tokens and under Accounts → Tokens.
   */
  tokenOwner?: "user" | "account";
  /** Default 1200 per 300 000 ms. */
  rateLimit?: { limit: number; windowMs: number };
  /**
   * The clock of the rate limit (default Date.now): its window, the block that follows going over it, and the waits
   * its headers give (Ratelimit's t=, Retry-After). A test that moves its own clock decides exactly which calls are
   * still in the window, however slow the machine is. The times the stand-in records and writes (`at`, created_on,
   * modified_on) and its delays stay real time.
   */
  now?: () => number;
}

/** A DNS record as the API returns it. */
export interface DnsRecord {
  id: string;
  zone_id: string;
  zone_name: string;
  /** Lower-case FQDN. */
  name: string;
  type: DnsRecordType;
  content: string;
  proxiable: boolean;
  proxied: boolean;
  /** 1 = automatic. */
  ttl: number;
  locked: boolean;
  meta: { auto_added: boolean; managed_by_apps: boolean; managed_by_argo_tunnel: boolean; source: string };
  settings: Record<string, unknown>;
  comment: string | null;
  tags: string[];
  created_on: string;
  modified_on: string;
}

export interface CloudflareRequestRecord {
  /** Date.now() when the request arrived. */
  at: number;
  method: string;
  /** As requested, query included ("/client/v4/zones?name=example.co.uk"). */
  path: string;
  /** The status answered; 0 while pending or when a "drop" fault closed the connection. */
  status: number;
  /** The request body: parsed JSON, or the text when it is not JSON; absent when empty. */
  body?: unknown;
  route: CloudflareRoute | "other";
  /** The injected fault that answered (or delayed) this request. */
  fault?: Fault["kind"];
}

/** One DNS write Cloudflare accepted: the record as it is after POST/PUT/PATCH, as it was for DELETE. */
export interface CloudflareWrite {
  method: string;
  name: string;
  content?: string;
  /** Absent for DELETE. */
  proxied?: boolean;
}

export interface CloudflareStandIn {
  /** http://127.0.0.1:PORT; the API is at url + "/client/v4". */
  url: string;
  token: string;
  zones(): Array<{ id: string; name: string }>;
  /** Current records (the API's objects, copies), of one zone (its name or id) or of all. */
  records(zone?: string): DnsRecord[];
  /** Every request, in arrival order, with the status answered. */
  requests: CloudflareRequestRecord[];
  /** Writes (POST, PUT, PATCH, DELETE) to dns_records that Cloudflare accepted, in order. */
  writes(): CloudflareWrite[];
  setTokenStatus(status: TokenStatus): void;
  inject(fault: CloudflareFault): void;
  /** Forget requests, writes, pending faults and the rate-limit window (records and token status stay). */
  reset(): void;
  close(): Promise<void>;
}

interface Zone {
  id: string;
  name: string;
  editable: boolean;
  createdOn: string;
}

interface RouteMatch {
  route: CloudflareRoute;
  methods: string[];
  /** The path as the vendor writes it ("/zones/{zone_id}/dns_records"), for the route's documentation. */
  template: string;
  zoneId?: string;
  recordId?: string;
  /** GET /accounts/{account_id}/tokens/verify */
  accountId?: string | undefined;
}

const API = "/client/v4";
const SCHEMA = "cloudflare/api-schemas openapi.json @ cca3064f1aba08cc6cef52fc7b3d3064a9eafcc9 (2024-08-06)";
const REFERENCE = "https://developers.cloudflare.com/api/resources";

/** Each route: the API reference page (also what a 403 names as `documentation_url`) and the schema's operation. */
const ROUTE_TABLE: ReadonlyArray<{ method: string; path: string; docs: string; operation: string }> = [
  {
    method: "GET",
    path: "/user/tokens/verify",
    docs: `${REFERENCE}/user/subresources/tokens/methods/verify/`,
    operation: `${SCHEMA} paths["/user/tokens/verify"].get (user-api-tokens-verify-token); cloudflare/cloudflare-docs src/content/docs/fundamentals/api/troubleshooting.mdx`,
  },
  {
    method: "GET",
    path: "/accounts/{account_id}/tokens/verify",
    docs: `${REFERENCE}/accounts/subresources/tokens/methods/verify/`,
    operation: "not in that schema version; the reference page is the source",
  },
  {
    method: "GET",
    path: "/zones",
    docs: `${REFERENCE}/zones/methods/list/`,
    operation: `${SCHEMA} paths["/zones"].get (zones-get)`,
  },
  {
    method: "GET",
    path: "/zones/{zone_id}",
    docs: `${REFERENCE}/zones/methods/get/`,
    operation: `${SCHEMA} paths["/zones/{zone_id}"].get (zones-0-get)`,
  },
  {
    method: "GET",
    path: "/zones/{zone_id}/dns_records",
    docs: `${REFERENCE}/dns/subresources/records/methods/list/`,
    operation: `${SCHEMA} paths["/zones/{zone_id}/dns_records"].get (dns-records-for-a-zone-list-dns-records)`,
  },
  {
    method: "POST",
    path: "/zones/{zone_id}/dns_records",
    docs: `${REFERENCE}/dns/subresources/records/methods/create/`,
    operation: `${SCHEMA} paths["/zones/{zone_id}/dns_records"].post (dns-records-for-a-zone-create-dns-record)`,
  },
  {
    method: "GET",
    path: "/zones/{zone_id}/dns_records/{dns_record_id}",
    docs: `${REFERENCE}/dns/subresources/records/methods/get/`,
    operation: `${SCHEMA} paths["/zones/{zone_id}/dns_records/{dns_record_id}"].get (dns-records-for-a-zone-dns-record-details)`,
  },
  {
    method: "PUT",
    path: "/zones/{zone_id}/dns_records/{dns_record_id}",
    docs: `${REFERENCE}/dns/subresources/records/methods/update/`,
    operation: `${SCHEMA} paths["/zones/{zone_id}/dns_records/{dns_record_id}"].put (dns-records-for-a-zone-update-dns-record)`,
  },
  {
    method: "PATCH",
    path: "/zones/{zone_id}/dns_records/{dns_record_id}",
    docs: `${REFERENCE}/dns/subresources/records/methods/edit/`,
    operation: `${SCHEMA} paths["/zones/{zone_id}/dns_records/{dns_record_id}"].patch (dns-records-for-a-zone-patch-dns-record)`,
  },
  {
    method: "DELETE",
    path: "/zones/{zone_id}/dns_records/{dns_record_id}",
    docs: `${REFERENCE}/dns/subresources/records/methods/delete/`,
    operation: `${SCHEMA} paths["/zones/{zone_id}/dns_records/{dns_record_id}"].delete (dns-records-for-a-zone-delete-dns-record)`,
  },
];

/**
 * Every route the stand-in answers (paths relative to /client/v4, as Cloudflare writes them) and the public source it
 * follows: the API reference page and the operation in Cloudflare's OpenAPI schema. Where the sources are silent the
 * stand-in follows the live API as the header comment above says.
 */
export const CLOUDFLARE_ROUTES: readonly RouteSource[] = ROUTE_TABLE.map(({ method, path, docs, operation }) => ({
  method,
  path,
  source: `${docs} ; ${operation}`,
}));

/** The API reference page of a route, for a 403's `documentation_url`. */
function docsOf(method: string, template: string | undefined): string | undefined {
  return ROUTE_TABLE.find((r) => r.method === method && r.path === template)?.docs;
}
const RECORD_TYPES: readonly string[] = ["A", "AAAA", "CNAME", "TXT"];
const PROXIABLE: readonly string[] = ["A", "AAAA", "CNAME"];
const HEX_ID = /^[0-9a-f]{32}$/;
const TOKEN_FORMAT = /^[A-Za-z0-9_-]{40,}$/;
const SAME_NAME_DOCS =
  "For more details, refer to <https://developers.cloudflare.com/dns/manage-dns-records/troubleshooting/records-with-same-name/>.";

const ERR = {
  missingAuth: { code: 9106, message: "Missing X-Auth-Key, X-Auth-Email or Authorization headers" },
  badHeaders: (chain: CloudflareError[]): CloudflareError => ({
    code: 6003,
    message: "Invalid request headers",
    error_chain: chain,
  }),
  badAuthorization: { code: 6111, message: "Invalid format for Authorization header" },
  badAuthKey: { code: 6103, message: "Invalid format for X-Auth-Key header" },
  invalidApiToken: { code: 1000, message: "Invalid API Token" },
  invalidAccessToken: { code: 9109, message: "Invalid access token" },
  authentication: { code: 10000, message: "Authentication error" },
  /** A 403 denial names the API reference page of what was denied (changelog 2026-08-20, "contextual 403s"). */
  denied: (docs: string | undefined): CloudflareError =>
    docs === undefined
      ? { code: 10000, message: "Authentication error" }
      : { code: 10000, message: "Authentication error", documentation_url: docs },
  methodNotAllowed: (method: string): CloudflareError => ({
    code: 10000,
    message: `${method} method not allowed for the api_token authentication scheme`,
  }),
  rateLimited: { code: 971, message: "Please wait and consider throttling your request speed" },
  noRoute: (path: string): CloudflareError[] => [
    { code: 7003, message: `Could not route to ${path}, perhaps your object identifier is invalid?` },
    { code: 7000, message: "No route for that URI" },
  ],
  recordMissing: { code: 81044, message: "Record does not exist." },
  identical: { code: 81058, message: "An identical record already exists." },
  cnameExists: { code: 81054, message: `A CNAME record with that host already exists. ${SAME_NAME_DOCS}` },
  hostExists: { code: 81053, message: `An A, AAAA, or CNAME record with that host already exists. ${SAME_NAME_DOCS}` },
  malformedJson: { code: 6007, message: "Malformed JSON in request body" },
  badShape: { code: 9207, message: "Content-type must be application/json." },
  badName: { code: 9000, message: "DNS name is invalid." },
  badType: { code: 9020, message: "Invalid DNS record type" },
  badIpv4: { code: 9005, message: "Content for A record must be a valid IPv4 address." },
  badIpv6: { code: 9006, message: "Content for AAAA record must be a valid IPv6 address." },
  validation: (chain?: CloudflareError): CloudflareError => ({
    code: 1004,
    message: "DNS Validation Error",
    ...(chain ? { error_chain: [chain] } : {}),
  }),
  badCname: { code: 9007, message: "Content for CNAME record is invalid." },
  badTtl: { code: 9021, message: "TTL must be between 60 and 86400 seconds, or 1 for Automatic." },
  notProxiable: { code: 9004, message: "This record type cannot be proxied." },
} as const;

/** Cloudflare's failure envelope. */
function cloudflareError(...errors: CloudflareError[]): {
  success: false;
  errors: CloudflareError[];
  messages: unknown[];
  result: null;
} {
  return { success: false, errors, messages: [], result: null };
}

interface ResultInfo {
  page: number;
  per_page: number;
  count: number;
  total_count: number;
  total_pages: number;
}

function success(result: unknown, extra: { messages?: unknown[]; resultInfo?: ResultInfo } = {}): unknown {
  return {
    success: true,
    errors: [],
    messages: extra.messages ?? [],
    result,
    ...(extra.resultInfo ? { result_info: extra.resultInfo } : {}),
  };
}

const hexId = (): string => randomBytes(16).toString("hex");
/** Cloudflare writes timestamps with microseconds: 2024-06-18T12:34:56.123456Z. */
const timestamp = (ms: number = Date.now()): string => new Date(ms).toISOString().replace(/Z$/, "000Z");

/** What the stand-in keeps between requests. */
interface Cloudflare {
  token: string;
  tokenId: string;
  accountId: string;
  ownerId: string;
  tokenStatus: TokenStatus;
  tokenOwner: "user" | "account";
  tokenNotBefore: string | undefined;
  tokenExpiresOn: string | undefined;
  rate: { limit: number; windowMs: number };
  /** The rate limit's clock. */
  clock: () => number;
  limiter: SlidingWindowLimiter;
  /** Once over the limit, every call is refused until then (the rate limit's clock). */
  blockedUntil: number;
  faults: FaultQueue<CloudflareFault>;
  timers: TimerSet;
  requests: CloudflareRequestRecord[];
  writeLog: CloudflareWrite[];
  zones: Zone[];
  records: DnsRecord[];
}

export async function startCloudflareStandIn(options: CloudflareStandInOptions = {}): Promise<CloudflareStandIn> {
  const rate = options.rateLimit ?? { limit: 1200, windowMs: 300_000 };
  const clock = options.now ?? Date.now;
  const cloudflare: Cloudflare = {
    token: options.token ?? randomString(40),
    tokenId: hexId(),
    accountId: hexId(),
    ownerId: hexId(),
    tokenStatus: options.tokenStatus ?? "active",
    tokenOwner: options.tokenOwner ?? "user",
    tokenNotBefore: options.tokenNotBefore,
    tokenExpiresOn: options.tokenExpiresOn,
    rate,
    clock,
    limiter: new SlidingWindowLimiter({ ...rate, countRejected: false, now: clock }),
    blockedUntil: 0,
    faults: new FaultQueue<CloudflareFault>(),
    timers: new TimerSet(),
    requests: [],
    writeLog: [],
    zones: zonesOf(options.zones ?? [{ name: "example.co.uk" }]),
    records: [],
  };
  seedRecords(cloudflare, options.records ?? []);
  const server = await listenLoopback((req, res) => handle(cloudflare, req, res));
  return standIn(cloudflare, server);
}

function zonesOf(zones: NonNullable<CloudflareStandInOptions["zones"]>): Zone[] {
  const made = zones.map((zone) => ({
    id: hexId(),
    name: zone.name.toLowerCase().replace(/\.$/, ""),
    editable: zone.editable ?? true,
    createdOn: timestamp(),
  }));
  if (made.length === 0) throw new RangeError("the Cloudflare stand-in needs at least one zone");
  return made;
}

function zoneNamed(cloudflare: Cloudflare, nameOrId: string): Zone | undefined {
  const wanted = nameOrId.toLowerCase().replace(/\.$/, "");
  return cloudflare.zones.find((z) => z.name === wanted || z.id === wanted);
}

/** The records that exist at start, checked as a create would be. */
function seedRecords(cloudflare: Cloudflare, seeds: NonNullable<CloudflareStandInOptions["records"]>): void {
  for (const seed of seeds) {
    const zone = zoneNamed(cloudflare, seed.zone);
    if (!zone) throw new RangeError(`the Cloudflare stand-in has no zone "${seed.zone}"`);
    const checked = checkRecord(zone, cloudflare.records, undefined, {
      type: seed.type ?? "A",
      name: seed.name,
      content: seed.content,
      ...(seed.proxied === undefined ? {} : { proxied: seed.proxied }),
      ...(seed.ttl === undefined ? {} : { ttl: seed.ttl }),
    });
    if (!checked.ok) {
      throw new RangeError(
        `invalid seed record ${seed.name}: ${checked.errors.map((e) => `${e.code} ${e.message}`).join("; ")}`,
      );
    }
    cloudflare.records.push(newRecord(zone, checked.fields));
  }
}

/** The test's handle on the stand-in. */
function standIn(cloudflare: Cloudflare, server: Loopback): CloudflareStandIn {
  const { records, requests, writeLog } = cloudflare;
  return {
    url: server.url,
    token: cloudflare.token,
    zones: () => cloudflare.zones.map((z) => ({ id: z.id, name: z.name })),
    records(zone) {
      if (zone === undefined) return structuredClone(records);
      const found = zoneNamed(cloudflare, zone);
      if (!found) throw new RangeError(`the Cloudflare stand-in has no zone "${zone}"`);
      return structuredClone(records.filter((r) => r.zone_id === found.id));
    },
    requests,
    writes: () => writeLog.map((w) => ({ ...w })),
    setTokenStatus(status) {
      cloudflare.tokenStatus = status;
    },
    inject: (fault) => cloudflare.faults.push(fault),
    reset() {
      requests.length = 0;
      writeLog.length = 0;
      cloudflare.faults.clear();
      cloudflare.limiter.reset();
      cloudflare.blockedUntil = 0;
    },
    async close() {
      cloudflare.timers.clearAll();
      await server.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// A request, step by step

/** One request on its way through the steps below, and how to answer it. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  url: URL;
  entry: CloudflareRequestRecord;
  /** The body, when there is one. */
  parsed: JsonParse | undefined;
  /** Its route, when it is on one (a path under /client/v4). */
  match: RouteMatch | undefined;
  /** The rate limit's headers, on every answer after it. */
  limitHeaders: HeaderMap;
  answer(status: number, body: unknown, headers?: HeaderMap): void;
}

async function handle(cloudflare: Cloudflare, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const x = await receive(cloudflare, req, res);
  if ((await injectedFault(cloudflare, x)) === "handled") return;
  if (!authenticated(cloudflare, x) || !throttled(cloudflare, x)) return;
  const { status, body } = route(cloudflare, x);
  x.answer(status, body);
}

/** What a route answers: a status and Cloudflare's envelope. */
interface Reply {
  status: number;
  body: unknown;
}

const ok = (result: unknown, extra?: Parameters<typeof success>[1]): Reply => ({
  status: 200,
  body: success(result, extra),
});
const fail = (status: number, ...errors: CloudflareError[]): Reply => ({ status, body: cloudflareError(...errors) });

/** The route the request is on, and the zone it names (a 403 for one the token cannot see, or may not write to). */
function route(cloudflare: Cloudflare, x: Exchange): Reply {
  const { match, method } = x;
  if (!match) return fail(400, ...ERR.noRoute(x.url.pathname));
  if (!match.methods.includes(method)) return fail(405, ERR.methodNotAllowed(method));

  // Routes: CLOUDFLARE_ROUTES names each one's reference page and schema operation.
  if (match.route === "verify") return verifyToken(cloudflare, match);
  if (match.zoneId === undefined) return listZones(cloudflare, x.url.searchParams);
  if (!HEX_ID.test(match.zoneId)) return fail(400, ...ERR.noRoute(x.url.pathname));
  const zone = cloudflare.zones.find((z) => z.id === match.zoneId);
  const denied = ERR.denied(docsOf(method, match.template));
  if (!zone) return fail(403, denied);
  // GET /zones/{zone_id} (zones-0-get).
  if (match.recordId === undefined && match.route === "zones") return ok(zoneObject(cloudflare, zone));
  if (match.route === "dns_write" && !zone.editable) return fail(403, denied);
  return dnsRecords(cloudflare, x, zone, match.recordId);
}

async function receive(cloudflare: Cloudflare, req: IncomingMessage, res: ServerResponse): Promise<Exchange> {
  const at = Date.now();
  const method = (req.method ?? "GET").toUpperCase();
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const text = await readBody(req);
  const entry: CloudflareRequestRecord = { at, method, path: req.url ?? "/", status: 0, route: "other" };
  const parsed = text.trim() === "" ? undefined : parseJson(text);
  if (parsed) entry.body = parsed.ok ? parsed.value : text;
  cloudflare.requests.push(entry);
  const match = url.pathname.startsWith(`${API}/`)
    ? matchRoute(url.pathname.slice(API.length).replace(/\/+$/, ""), method)
    : undefined;
  if (match) entry.route = match.route;
  const exchange: Exchange = {
    req,
    res,
    method,
    url,
    entry,
    parsed,
    match,
    limitHeaders: {},
    answer(status, body, headers = {}) {
      entry.status = status;
      sendJson(res, status, body, { ...exchange.limitHeaders, ...headers });
    },
  };
  return exchange;
}

/** The next queued fault for the route: "handled" when it answered (or dropped) the request. */
function injectedFault(cloudflare: Cloudflare, x: Exchange): Promise<"handled" | "continue"> {
  const { entry, res } = x;
  const fault = cloudflare.faults.take((f) => f.route === undefined || f.route === x.match?.route);
  if (fault) entry.fault = fault.kind;
  return applyFault(fault, res, cloudflare.timers, {
    status: (f) => {
      entry.status = f.status;
      const body = f.body === undefined ? faultBody(f, x.match, x.method, x.url.pathname) : f.body;
      sendAny(res, f.status, body, f.headers ?? {});
    },
    rateLimit: (f) => {
      entry.status = 429;
      sendJson(res, 429, cloudflareError(ERR.rateLimited), rateLimitFaultHeaders(f, cloudflare.rate));
    },
    dropped: () => {
      entry.status = 0;
    },
  });
}

/** Whether the request presents the token and the token works; when not, its 400, 401 or 403 was answered. */
function authenticated(cloudflare: Cloudflare, x: Exchange): boolean {
  const refuse = (status: number, error: CloudflareError): false => {
    x.answer(status, cloudflareError(error));
    return false;
  };
  const authorization = x.req.headers.authorization;
  if (authorization === undefined) {
    if (x.req.headers["x-auth-key"] !== undefined) return refuse(400, ERR.badHeaders([ERR.badAuthKey]));
    return refuse(400, ERR.missingAuth);
  }
  const presented = /^Bearer (\S+)$/i.exec(authorization.trim())?.[1];
  if (presented === undefined || (presented !== cloudflare.token && !TOKEN_FORMAT.test(presented))) {
    return refuse(400, ERR.badHeaders([ERR.badAuthorization]));
  }
  const verify = x.match?.route === "verify";
  if (presented !== cloudflare.token)
    return verify ? refuse(401, ERR.invalidApiToken) : refuse(403, ERR.invalidAccessToken);
  if (cloudflare.tokenStatus !== "active" && !verify) return refuse(403, ERR.invalidAccessToken);
  return true;
}

/** The rate limit, per token; once over, every call is refused for the window. False when the call got its 429. */
function throttled(cloudflare: Cloudflare, x: Exchange): boolean {
  const { rate } = cloudflare;
  const now = cloudflare.clock();
  const policy = `"default";q=${rate.limit};w=${Math.ceil(rate.windowMs / 1000)}`;
  const refuse = (wait: number): false => {
    x.limitHeaders = { Ratelimit: `"default";r=0;t=${wait}`, "Ratelimit-Policy": policy };
    x.answer(429, cloudflareError(ERR.rateLimited), { "Retry-After": String(wait) });
    return false;
  };
  if (now < cloudflare.blockedUntil) return refuse(Math.ceil((cloudflare.blockedUntil - now) / 1000));
  const decision = cloudflare.limiter.hit(cloudflare.token, now);
  if (!decision.allowed) {
    cloudflare.blockedUntil = now + rate.windowMs;
    return refuse(Math.ceil(rate.windowMs / 1000));
  }
  x.limitHeaders = {
    Ratelimit: `"default";r=${decision.remaining};t=${Math.ceil(decision.resetAfterMs / 1000)}`,
    "Ratelimit-Policy": policy,
  };
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// The routes, by resource (CLOUDFLARE_ROUTES names each one's sources)

/** GET /user/tokens/verify and GET /accounts/{account_id}/tokens/verify. */
function verifyToken(cloudflare: Cloudflare, match: RouteMatch): Reply {
  // Each kind of token verifies at its own owner's route only; at the other one it is an unknown token.
  const owner = match.accountId === undefined ? "user" : "account";
  if (owner !== cloudflare.tokenOwner || (match.accountId !== undefined && match.accountId !== cloudflare.accountId)) {
    return fail(401, ERR.invalidApiToken);
  }
  const messages =
    cloudflare.tokenStatus === "active"
      ? [{ code: 10000, message: "This API Token is valid and active", type: null }]
      : [];
  return ok(verifyResult(cloudflare), { messages });
}

// GET /user/tokens/verify: iam_response_single_segment (id, status, not_before and expires_on when the token has them).
function verifyResult(cloudflare: Cloudflare): Record<string, unknown> {
  const expiresOn =
    cloudflare.tokenExpiresOn ??
    (cloudflare.tokenStatus === "expired" ? timestamp(Date.now() - 86_400_000).replace(/\.\d+Z$/, "Z") : undefined);
  return {
    id: cloudflare.tokenId,
    status: cloudflare.tokenStatus,
    ...(cloudflare.tokenNotBefore === undefined ? {} : { not_before: cloudflare.tokenNotBefore }),
    ...(expiresOn === undefined ? {} : { expires_on: expiresOn }),
  };
}

/** GET /zones (zones-get): zones_zone objects with result_info. */
function listZones(cloudflare: Cloudflare, q: URLSearchParams): Reply {
  const name = q.get("name");
  const status = q.get("status");
  const any = q.get("match") === "any";
  const found = cloudflare.zones.filter((zone) => {
    const checks: boolean[] = [];
    if (name !== null) checks.push(nameFilter(zone.name, name));
    if (status !== null) checks.push(status === "active");
    return checks.length === 0 || (any ? checks.some(Boolean) : checks.every(Boolean));
  });
  const { slice, info } = paginate(found, q, 20, 50);
  return ok(
    slice.map((zone) => zoneObject(cloudflare, zone)),
    { resultInfo: info },
  );
}

/** A zone as GET /zones and GET /zones/{zone_id} answer it. */
function zoneObject(cloudflare: Cloudflare, zone: Zone): Record<string, unknown> {
  return {
    id: zone.id,
    name: zone.name,
    status: "active",
    paused: false,
    type: "full",
    development_mode: 0,
    name_servers: ["ada.ns.cloudflare.com", "bob.ns.cloudflare.com"],
    original_name_servers: null,
    original_registrar: null,
    original_dnshost: null,
    created_on: zone.createdOn,
    modified_on: zone.createdOn,
    activated_on: zone.createdOn,
    // meta and owner as zones_zone in Cloudflare's schema (see CLOUDFLARE_ROUTES) has them.
    meta: {
      step: 2,
      custom_certificate_quota: 0,
      page_rule_quota: 3,
      phishing_detected: false,
      cdn_only: false,
      dns_only: false,
      foundation_dns: false,
    },
    owner: { id: cloudflare.ownerId, name: "Stand-in user", type: "user" },
    account: { id: cloudflare.accountId, name: "Stand-in account" },
    tenant: { id: null, name: null },
    tenant_unit: { id: null },
    permissions: zone.editable
      ? ["#dns_records:edit", "#dns_records:read", "#zone:read"]
      : ["#dns_records:read", "#zone:read"],
    plan: {
      id: "0feeeeeeeeeeeeeeeeeeeeeeeeeeeeee",
      name: "Free Website",
      price: 0,
      currency: "USD",
      frequency: "",
      is_subscribed: false,
      can_subscribe: false,
      legacy_id: "free",
      legacy_discount: false,
      externally_managed: false,
    },
  };
}

/**
 * /zones/{zone_id}/dns_records[/{dns_record_id}]: dns-records_dns_response_single / _collection; DELETE answers {id}
 * (api-response-single-id).
 */
function dnsRecords(cloudflare: Cloudflare, x: Exchange, zone: Zone, recordId: string | undefined): Reply {
  const { records } = cloudflare;
  let existing: DnsRecord | undefined;
  if (recordId !== undefined) {
    if (!HEX_ID.test(recordId)) return fail(400, ...ERR.noRoute(x.url.pathname));
    existing = records.find((r) => r.id === recordId && r.zone_id === zone.id);
    if (!existing) return fail(404, ERR.recordMissing);
  }
  if (x.method === "GET") {
    if (existing) return ok(structuredClone(existing));
    const inZone = records.filter((r) => r.zone_id === zone.id);
    const found = inZone.filter((r) => recordFilter(r, x.url.searchParams));
    const { slice, info } = paginate(found, x.url.searchParams, 100, 5_000_000);
    return ok(structuredClone(slice), { resultInfo: info });
  }
  if (x.method === "DELETE" && existing) {
    records.splice(records.indexOf(existing), 1);
    cloudflare.writeLog.push({ method: x.method, name: existing.name, content: existing.content });
    return ok({ id: existing.id });
  }
  return writeRecord(cloudflare, x, zone, existing);
}

/** POST (a new record), PUT (an overwrite) or PATCH (an edit: missing fields keep their values). */
function writeRecord(cloudflare: Cloudflare, x: Exchange, zone: Zone, existing: DnsRecord | undefined): Reply {
  const { parsed, method } = x;
  if (!parsed?.ok) return fail(400, ERR.malformedJson);
  if (!isPlainObject(parsed.value)) return fail(400, ERR.badShape);
  const { records } = cloudflare;
  const checked = checkRecord(zone, records, method === "PATCH" ? existing : undefined, parsed.value, existing);
  if (!checked.ok) return fail(400, ...checked.errors);
  let record: DnsRecord;
  if (existing) {
    record = newRecord(zone, checked.fields, existing);
    records[records.indexOf(existing)] = record;
  } else {
    record = newRecord(zone, checked.fields);
    records.push(record);
  }
  cloudflare.writeLog.push({ method, name: record.name, content: record.content, proxied: record.proxied });
  return ok(structuredClone(record));
}

// ---------------------------------------------------------------------------------------------------------------
// Routes, filters, pages

/** The routes of CLOUDFLARE_ROUTES; the contract test checks that each one is answered. */
function matchRoute(path: string, method: string): RouteMatch | undefined {
  const verify = "/user/tokens/verify";
  if (path === verify) return { route: "verify", methods: ["GET"], template: verify };
  const account = /^\/accounts\/([^/]+)\/tokens\/verify$/.exec(path);
  if (account) {
    return {
      route: "verify",
      methods: ["GET"],
      template: "/accounts/{account_id}/tokens/verify",
      accountId: account[1],
    };
  }
  if (path === "/zones") return { route: "zones", methods: ["GET"], template: "/zones" };
  const match = /^\/zones\/([^/]+)(?:\/dns_records(?:\/([^/]+))?)?$/.exec(path);
  if (!match) return undefined;
  const [whole = "", zoneId = "", recordId] = match;
  const route: CloudflareRoute = method === "GET" ? "dns_records" : "dns_write";
  if (!whole.includes("/dns_records"))
    return { route: "zones", methods: ["GET"], template: "/zones/{zone_id}", zoneId };
  if (recordId === undefined) {
    return { route, methods: ["GET", "POST"], template: "/zones/{zone_id}/dns_records", zoneId };
  }
  const template = "/zones/{zone_id}/dns_records/{dns_record_id}";
  return { route, methods: ["GET", "PUT", "PATCH", "DELETE"], template, zoneId, recordId };
}

/** The zone list's `name`: exact (case-insensitive) by default, or `operator:value` as the API reference lists. */
function nameFilter(zoneName: string, filter: string): boolean {
  const operator = /^(equal|not_equal|starts_with|ends_with|contains)(_case_sensitive)?:(.*)$/.exec(filter);
  if (!operator) return zoneName === filter.toLowerCase().replace(/\.$/, "");
  const [, op = "equal", caseSensitive, raw = ""] = operator;
  const value = caseSensitive ? raw : raw.toLowerCase();
  switch (op) {
    case "not_equal":
      return zoneName !== value;
    case "starts_with":
      return zoneName.startsWith(value);
    case "ends_with":
      return zoneName.endsWith(value);
    case "contains":
      return zoneName.includes(value);
    default:
      return zoneName === value;
  }
}

/** type, name (= name.exact), name.contains/startswith/endswith, content (= content.exact) and friends, proxied, match. */
function recordFilter(record: DnsRecord, q: URLSearchParams): boolean {
  const checks: boolean[] = [];
  const lower = (value: string): string => value.toLowerCase();
  const fqdn = (value: string): string => lower(value).replace(/\.$/, "");
  const type = q.get("type");
  if (type !== null) checks.push(record.type === type.toUpperCase());
  for (const key of ["name", "name.exact"]) {
    const value = q.get(key);
    if (value !== null) checks.push(record.name === fqdn(value));
  }
  const text: Array<[string, string, (have: string, want: string) => boolean]> = [
    ["name.contains", record.name, (have, want) => have.includes(want)],
    ["name.startswith", record.name, (have, want) => have.startsWith(want)],
    ["name.endswith", record.name, (have, want) => have.endsWith(want)],
    ["content", record.content, (have, want) => have === want],
    ["content.exact", record.content, (have, want) => have === want],
    ["content.contains", record.content, (have, want) => have.includes(want)],
    ["content.startswith", record.content, (have, want) => have.startsWith(want)],
    ["content.endswith", record.content, (have, want) => have.endsWith(want)],
  ];
  for (const [key, have, test] of text) {
    const value = q.get(key);
    if (value !== null) checks.push(test(lower(have), lower(value)));
  }
  const proxied = q.get("proxied");
  if (proxied !== null) checks.push(String(record.proxied) === proxied);
  if (checks.length === 0) return true;
  return q.get("match") === "any" ? checks.some(Boolean) : checks.every(Boolean);
}

function paginate<T>(
  items: T[],
  q: URLSearchParams,
  defaultPerPage: number,
  maxPerPage: number,
): { slice: T[]; info: ResultInfo } {
  const int = (value: string | null, fallback: number, max: number): number => {
    if (value === null || !/^\d+$/.test(value)) return fallback;
    return Math.min(max, Math.max(1, Number(value)));
  };
  const page = int(q.get("page"), 1, Number.MAX_SAFE_INTEGER);
  const perPage = int(q.get("per_page"), defaultPerPage, maxPerPage);
  const slice = items.slice((page - 1) * perPage, page * perPage);
  return {
    slice,
    info: {
      page,
      per_page: perPage,
      count: slice.length,
      total_count: items.length,
      total_pages: Math.ceil(items.length / perPage),
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// DNS records

interface RecordFields {
  type: DnsRecordType;
  name: string;
  content: string;
  proxied: boolean;
  ttl: number;
  comment: string | null;
  tags: string[];
}

type Checked = { ok: true; fields: RecordFields } | { ok: false; errors: CloudflareError[] };

/**
 * Validate a create (base undefined), an overwrite (base undefined, `self` the record replaced) or an edit (base =
 * self = the record edited, missing fields keep their values) the way Cloudflare does, conflicts included.
 */
function checkRecord(
  zone: Zone,
  all: readonly DnsRecord[],
  base: DnsRecord | undefined,
  input: Record<string, unknown>,
  self: DnsRecord | undefined = base,
): Checked {
  const fail = (...errors: CloudflareError[]): Checked => ({ ok: false, errors });
  const shapes: Array<[string, (value: unknown) => boolean]> = [
    ["type", (v) => typeof v === "string"],
    ["name", (v) => typeof v === "string"],
    ["content", (v) => typeof v === "string"],
    ["proxied", (v) => typeof v === "boolean"],
    ["ttl", (v) => typeof v === "number"],
    ["comment", (v) => v === null || typeof v === "string"],
    ["tags", (v) => Array.isArray(v) && v.every((tag) => typeof tag === "string")],
  ];
  for (const [key, fits] of shapes) {
    if (input[key] !== undefined && !fits(input[key])) return fail(ERR.badShape);
  }
  const pick = <T>(key: keyof RecordFields, fallback: T): T =>
    (input[key] !== undefined ? input[key] : base ? base[key] : fallback) as T;

  const type = pick<string | undefined>("type", undefined);
  if (type === undefined || !RECORD_TYPES.includes(type)) return fail(ERR.badType);
  const rawName = pick<string | undefined>("name", undefined);
  const name = rawName === undefined ? undefined : toFqdn(rawName, zone.name);
  if (name === undefined || !validName(name)) return fail(ERR.badName);
  const content = pick<string | undefined>("content", undefined);
  if (type === "A" && (content === undefined || !isIPv4(content))) return fail(ERR.badIpv4);
  if (type === "AAAA" && (content === undefined || !isIPv6(content))) return fail(ERR.badIpv6);
  if (type === "CNAME" && (content === undefined || !validName(content.toLowerCase().replace(/\.$/, "")))) {
    return fail(ERR.validation(ERR.badCname));
  }
  if (content === undefined || content === "") return fail(ERR.validation());
  const ttl = pick<number>("ttl", 1);
  if (!Number.isInteger(ttl) || (ttl !== 1 && (ttl < 60 || ttl > 86_400))) return fail(ERR.validation(ERR.badTtl));
  const proxied = pick<boolean>("proxied", false);
  if (proxied && !PROXIABLE.includes(type)) return fail(ERR.validation(ERR.notProxiable));

  const normalized =
    type === "CNAME" ? content.toLowerCase().replace(/\.$/, "") : type === "AAAA" ? content.toLowerCase() : content;
  const others = all.filter((r) => r.zone_id === zone.id && r.id !== self?.id && r.name === name);
  if (others.some((r) => r.type === type && r.content === normalized)) return fail(ERR.identical);
  if ((type === "A" || type === "AAAA") && others.some((r) => r.type === "CNAME")) return fail(ERR.cnameExists);
  if (type === "CNAME" && others.some((r) => PROXIABLE.includes(r.type))) return fail(ERR.hostExists);

  return {
    ok: true,
    fields: {
      type: type as DnsRecordType,
      name,
      content: normalized,
      proxied,
      // A proxied record's TTL is always automatic.
      ttl: proxied ? 1 : ttl,
      comment: pick<string | null>("comment", null),
      tags: [...pick<string[]>("tags", [])],
    },
  };
}

function newRecord(zone: Zone, fields: RecordFields, replacing?: DnsRecord): DnsRecord {
  const now = timestamp();
  return {
    id: replacing?.id ?? hexId(),
    zone_id: zone.id,
    zone_name: zone.name,
    name: fields.name,
    type: fields.type,
    content: fields.content,
    proxiable: PROXIABLE.includes(fields.type),
    proxied: fields.proxied,
    ttl: fields.ttl,
    locked: false,
    meta: { auto_added: false, managed_by_apps: false, managed_by_argo_tunnel: false, source: "primary" },
    settings: fields.type === "CNAME" ? { flatten_cname: false } : {},
    comment: fields.comment,
    tags: fields.tags,
    created_on: replacing?.created_on ?? now,
    modified_on: now,
  };
}

/** "@" is the apex; a name outside the zone gets the zone appended (Cloudflare treats it as relative). */
function toFqdn(name: string, zone: string): string {
  const lower = name.trim().toLowerCase().replace(/\.$/, "");
  if (lower === "@") return zone;
  if (lower === "" || lower === zone || lower.endsWith(`.${zone}`)) return lower;
  return `${lower}.${zone}`;
}

function validName(name: string): boolean {
  if (name === "" || name.length > 253) return false;
  return name.split(".").every((label, i) => (label === "*" && i === 0) || /^[a-z0-9_-]{1,63}$/.test(label));
}

// ---------------------------------------------------------------------------------------------------------------
// Faults

/** The envelope a status fault without a body sends: the error Cloudflare gives with that status on that route. */
function faultBody(fault: StatusFault, match: RouteMatch | undefined, method: string, path: string): unknown {
  const route = match?.route;
  switch (fault.status) {
    case 400:
      return cloudflareError(route === "dns_write" ? ERR.validation() : ERR.badHeaders([ERR.badAuthorization]));
    case 401:
      return cloudflareError(route === "verify" ? ERR.invalidApiToken : ERR.authentication);
    case 403:
      return cloudflareError(route === "verify" ? ERR.invalidAccessToken : ERR.denied(docsOf(method, match?.template)));
    case 404:
      return route === "dns_records" || route === "dns_write"
        ? cloudflareError(ERR.recordMissing)
        : cloudflareError(...ERR.noRoute(path));
    case 429:
      return cloudflareError(ERR.rateLimited);
    default:
      return cloudflareError({ code: fault.status, message: reasonPhrase(fault.status) });
  }
}

function rateLimitFaultHeaders(fault: RateLimitFault, rate: { limit: number; windowMs: number }): HeaderMap {
  const wait = Math.ceil(Math.max(0, fault.retryAfterSeconds));
  if (fault.viaHeaderOnly) return { "Retry-After": String(wait) };
  return {
    "Retry-After": String(wait),
    Ratelimit: `"default";r=0;t=${wait}`,
    "Ratelimit-Policy": `"default";q=${rate.limit};w=${Math.ceil(rate.windowMs / 1000)}`,
  };
}
