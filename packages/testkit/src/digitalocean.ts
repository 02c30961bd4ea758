/**
 * A loopback stand-in for the DigitalOcean API v2 (https://api.digitalocean.com/v2), the part a server-hosting tool
 * uses: the account and its SSH keys, droplets (list, get, create, destroy), droplet actions (shutdown, power_off,
 * power_on, snapshot) that take time and end "completed" or "errored", actions, and droplet snapshots. The answers
 * keep DigitalOcean's shapes, status codes and error bodies (`{"id","message","request_id"}`), every answer carries
 * RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset (a per-token sliding window, like DigitalOcean's per-request
 * expiry), and faults can be injected: per request (status, rate limit, drop, delay, optionally for one route; or the
 * request done and then answered with an error status, as when DigitalOcean's answer is lost) or per action (the next
 * action of a type errors, or hangs "in-progress" forever). The droplet list can lag behind creates (`listLag`): a
 * droplet just created is missing from `GET /v2/droplets` for a number of list requests or milliseconds, as
 * DigitalOcean's list sometimes is for a few seconds (Gamocosm #138).
 *
 * The API lives at `url + "/v2"`. Requests need `Authorization: Bearer <token>`.
 *
 * Every route names the public source it follows in DIGITALOCEAN_ROUTES (DigitalOcean's OpenAPI description,
 * github.com/digitalocean/openapi); `test/digitalocean.contract.test.ts` runs the examples of that description
 * (`test/contracts/digitalocean/`) against this stand-in, so a drift fails a test.
 */
import { createHash, randomBytes, randomInt, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RouteSource } from "./contract.ts";
import type { Fault, HeaderMap, JsonParse, Loopback, RateDecision, RateLimitOptions, StatusFault } from "./http.ts";
import {
  applyFault,
  FaultQueue,
  isPlainObject,
  listenLoopback,
  parseJson,
  readBody,
  reasonPhrase,
  SlidingWindowLimiter,
  sendAny,
  sendEmpty,
  sendJson,
  TimerSet,
} from "./http.ts";

// ---------------------------------------------------------------------------------------------------------------
// The API's objects

export type DropletStatus = "new" | "active" | "off" | "archive";
export type ActionStatus = "in-progress" | "completed" | "errored";
/** The droplet actions the stand-in performs (and "create", the action a droplet creation starts). */
export type DigitalOceanActionType = "create" | "shutdown" | "power_off" | "power_on" | "snapshot";

export interface Region {
  slug: string;
  name: string;
  features: string[];
  available: boolean;
  sizes: string[];
}

export interface Size {
  slug: string;
  memory: number;
  vcpus: number;
  disk: number;
  transfer: number;
  price_monthly: number;
  price_hourly: number;
  regions: string[];
  available: boolean;
  description: string;
}

export interface Image {
  id: number;
  name: string;
  distribution: string;
  slug: string | null;
  public: boolean;
  regions: string[];
  created_at: string;
  type: "snapshot" | "base";
  min_disk_size: number;
  size_gigabytes: number;
  description: string;
  tags: string[];
  status: "available";
  error_message: string;
}

export interface NetworkV4 {
  ip_address: string;
  netmask: string;
  gateway: string;
  type: "public" | "private";
}

export interface NetworkV6 {
  ip_address: string;
  netmask: number;
  gateway: string;
  type: "public";
}

export interface Droplet {
  id: number;
  name: string;
  memory: number;
  vcpus: number;
  disk: number;
  /** The droplet's disks: one "local" disk of `disk` GiB. */
  disk_info: Array<{ type: "local"; size: { amount: number; unit: "gib" } }>;
  locked: boolean;
  status: DropletStatus;
  kernel: null;
  created_at: string;
  features: string[];
  backup_ids: number[];
  /** Set once a droplet created with `backups: true` is active; null otherwise. */
  next_backup_window: { start: string; end: string } | null;
  snapshot_ids: number[];
  image: Image;
  volume_ids: string[];
  size: Size;
  size_slug: string;
  networks: { v4: NetworkV4[]; v6: NetworkV6[] };
  region: Region;
  tags: string[];
  vpc_uuid: string;
}

export interface Snapshot {
  /** A string, unlike a droplet's snapshot_ids (numbers). */
  id: string;
  name: string;
  regions: string[];
  created_at: string;
  /** The droplet's id as a string. */
  resource_id: string;
  resource_type: "droplet";
  min_disk_size: number;
  size_gigabytes: number;
  tags: string[];
}

export interface Action {
  id: number;
  status: ActionStatus;
  /** "create", "shutdown", "power_off", "power_on", "snapshot" or "destroy". */
  type: string;
  started_at: string;
  completed_at: string | null;
  resource_id: number;
  resource_type: "droplet";
  region: Region;
  region_slug: string;
}

export interface SshKey {
  id: number;
  /** MD5 of the key blob, colon-separated hex, as DigitalOcean shows it. */
  fingerprint: string;
  public_key: string;
  name: string;
}

export interface Account {
  droplet_limit: number;
  floating_ip_limit: number;
  reserved_ip_limit: number;
  volume_limit: number;
  email: string;
  name: string;
  uuid: string;
  email_verified: boolean;
  status: "active" | "warning" | "locked";
  status_message: string;
  team: { uuid: string; name: string };
}

/** DigitalOcean's error body. */
export interface DigitalOceanErrorBody {
  id: string;
  message: string;
  request_id: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Options, faults and the handle

export interface DigitalOceanDropletOptions {
  name: string;
  /** Default "s-2vcpu-4gb". */
  size?: string;
  /** Default "fra1". */
  region?: string;
  /** Default []. */
  tags?: string[];
  /** Default "active". */
  status?: "active" | "off";
  /** What a snapshot of this droplet weighs (its size_gigabytes). Default: the droplet's disk. */
  sizeGigabytes?: number;
}

export interface DigitalOceanSnapshotOptions {
  name: string;
  /** Default: min_disk_size. */
  sizeGigabytes?: number;
  /** Default "fra1". */
  region?: string;
  /** ISO 8601. Default: a day ago. */
  createdAt?: string;
  /** The id of the droplet it was taken of (one that no longer exists). Default: a made-up id. */
  resourceId?: number;
}

export interface DigitalOceanStandInOptions {
  /** Default: "dop_v1_" + 64 hex chars. */
  token?: string;
  /**
   * Droplets that exist at start. Default: one active droplet "mc" (s-2vcpu-4gb, fra1, tags ["mcops"], an Ubuntu
   * 22.04 image, a public IPv4 from 203.0.113.0/24).
   */
  droplets?: DigitalOceanDropletOptions[];
  /** Snapshots that exist at start (droplet snapshots). Default none. */
  snapshots?: DigitalOceanSnapshotOptions[];
  /** SSH keys on the account. Default: two keys ("laptop", "ci"). */
  sshKeys?: Array<{ name: string }>;
  /** How long actions take. Defaults: create 150, shutdown 100, power_off 50, power_on 100, snapshot 150 ms. */
  timings?: { createMs?: number; shutdownMs?: number; powerOffMs?: number; powerOnMs?: number; snapshotMs?: number };
  /** Per token, sliding window. Default 5000 per hour, like DigitalOcean. */
  rateLimit?: RateLimitOptions;
  /**
   * DigitalOcean's second limit, the burst (250 requests per minute, description.yml "Rate Limit"): its 429 carries
   * Retry-After (until the minute lets one through) and the hour's RateLimit-* (RateLimit-Reset: when the hour's oldest
   * request expires, up to an hour away). Off by default: tests that poll in virtual time send many a real minute.
   */
  burstLimit?: RateLimitOptions;
  /** Droplets created from now on are missing from list answers for a while (default: listed at once). */
  listLag?: ListLag;
  /**
   * The clock of the rate limit (default Date.now): its window and the times its headers give (RateLimit-Reset,
   * Retry-After). A test that moves its own clock decides exactly which requests are still in the window, however slow
   * the machine is. The times the stand-in records and writes (`at`, actions' and snapshots' times) and its action
   * timings stay real time.
   */
  now?: () => number;
}

const ROUTES = [
  "GET /v2/account",
  "GET /v2/account/keys",
  "GET /v2/droplets",
  "POST /v2/droplets",
  "GET /v2/droplets/:id",
  "DELETE /v2/droplets/:id",
  "GET /v2/droplets/:id/actions",
  "POST /v2/droplets/:id/actions",
  "GET /v2/droplets/:id/actions/:action_id",
  "GET /v2/actions",
  "GET /v2/actions/:id",
  "GET /v2/snapshots",
  "GET /v2/snapshots/:id",
  "DELETE /v2/snapshots/:id",
] as const;

/** A route the stand-in serves, "METHOD /pattern" (HEAD requests count as GET). */
export type DigitalOceanRoute = (typeof ROUTES)[number];

const SPEC = "digitalocean/openapi @ 7c1300c479fed9c353cda9fc21cd968619552304, specification/resources";
const ERRORS = "errors: specification/shared/responses/*.yml, bodies specification/shared/models/error.yml";

/**
 * Where each route comes from: its path as DigitalOcean writes it and the operation in DigitalOcean's OpenAPI
 * description. A Record over DigitalOceanRoute, so a route the dispatcher serves without a source does not compile.
 */
const ROUTE_SOURCES: Record<DigitalOceanRoute, { path: string; operation: string }> = {
  "GET /v2/account": { path: "/v2/account", operation: "account/account_get.yml (responses/account.yml)" },
  "GET /v2/account/keys": {
    path: "/v2/account/keys",
    operation: "ssh_keys/sshKeys_list.yml (responses/sshKeys_all.yml)",
  },
  "GET /v2/droplets": {
    path: "/v2/droplets",
    operation: "droplets/droplets_list.yml (responses/all_droplets.yml, examples.yml#/droplets_all)",
  },
  "POST /v2/droplets": {
    path: "/v2/droplets",
    operation: "droplets/droplets_create.yml (responses/droplet_create.yml, examples.yml#/droplet_create_response)",
  },
  "GET /v2/droplets/:id": {
    path: "/v2/droplets/{droplet_id}",
    operation: "droplets/droplets_get.yml (responses/existing_droplet.yml, examples.yml#/droplet_single)",
  },
  "DELETE /v2/droplets/:id": {
    path: "/v2/droplets/{droplet_id}",
    operation: "droplets/droplets_destroy.yml (specification/shared/responses/no_content_with_content_type.yml)",
  },
  "GET /v2/droplets/:id/actions": {
    path: "/v2/droplets/{droplet_id}/actions",
    operation: "droplets/dropletActions_list.yml (responses/all_droplet_actions.yml)",
  },
  "POST /v2/droplets/:id/actions": {
    path: "/v2/droplets/{droplet_id}/actions",
    operation: "droplets/dropletActions_post.yml (responses/droplet_action.yml, actions/models/action.yml)",
  },
  "GET /v2/droplets/:id/actions/:action_id": {
    path: "/v2/droplets/{droplet_id}/actions/{action_id}",
    operation: "droplets/dropletActions_get.yml (actions/responses/action.yml)",
  },
  "GET /v2/actions": { path: "/v2/actions", operation: "actions/actions_list.yml (responses/actions.yml)" },
  "GET /v2/actions/:id": {
    path: "/v2/actions/{action_id}",
    operation: "actions/actions_get.yml (responses/action.yml)",
  },
  "GET /v2/snapshots": {
    path: "/v2/snapshots",
    operation: "snapshots/snapshots_list.yml (responses/snapshots.yml, responses/examples.yml)",
  },
  "GET /v2/snapshots/:id": {
    path: "/v2/snapshots/{snapshot_id}",
    operation: "snapshots/snapshots_get.yml (responses/snapshots_existing.yml)",
  },
  "DELETE /v2/snapshots/:id": {
    path: "/v2/snapshots/{snapshot_id}",
    operation: "snapshots/snapshots_delete.yml (specification/shared/responses/no_content.yml)",
  },
};

/**
 * Every route the stand-in answers and the public source it follows (DigitalOcean's OpenAPI description; the rate
 * limit headers and the error body are in specification/shared/headers.yml and specification/description.yml).
 */
export const DIGITALOCEAN_ROUTES: readonly RouteSource[] = ROUTES.map((route) => {
  const { path, operation } = ROUTE_SOURCES[route];
  return { method: route.split(" ")[0] ?? "", path, source: `${SPEC}/${operation}; ${ERRORS}` };
});

/** The next action of `actionType` (`times` of them, default 1) ends "errored" and has no effect. */
export interface ActionErrorsFault {
  kind: "action-errors";
  actionType: DigitalOceanActionType;
  times?: number;
}

/** The next action of `actionType` (`times` of them, default 1) stays "in-progress" forever and has no effect. */
export interface ActionHangsFault {
  kind: "action-hangs";
  actionType: DigitalOceanActionType;
  times?: number;
}

/**
 * The next request (of `route`, `times` of them, default 1) is done as asked, then answered with `status` and
 * DigitalOcean's error body: a create answered 500 after making the droplet, as when DigitalOcean's answer is lost.
 */
export interface AfterEffectFault {
  kind: "status-after-effect";
  status: number;
  route?: DigitalOceanRoute;
  times?: number;
}

/**
 * How long a droplet just created is missing from `GET /v2/droplets` (any filter): for its first `requests` list
 * requests after the create, and until `ms` after it; both when both are given. `GET /v2/droplets/:id` finds it at once.
 */
export interface ListLag {
  requests?: number;
  ms?: number;
}

/** A request fault, optionally only for one route; a request done and answered with an error; or an action fault. */
export type DigitalOceanFault =
  | (Fault & { route?: DigitalOceanRoute })
  | AfterEffectFault
  | ActionErrorsFault
  | ActionHangsFault;

export interface DigitalOceanRequest {
  /** Date.now() when the request arrived. */
  at: number;
  method: string;
  /** The path as requested, query included. */
  path: string;
  /** The status answered; 0 while pending or when a "drop" fault closed the connection. */
  status: number;
  /** The JSON body, when there was one that parsed. */
  body?: unknown;
  /** The route it matched, if any. */
  route?: DigitalOceanRoute;
  /** The injected fault that answered (or delayed) this request. */
  fault?: Fault["kind"] | AfterEffectFault["kind"];
}

export interface DigitalOceanStandIn {
  /** http://127.0.0.1:PORT; the API is at url + "/v2". */
  url: string;
  token: string;
  /** The current droplets (copies of the API's droplet objects), oldest first. */
  droplets(): Droplet[];
  /** The current snapshots (copies of the API's snapshot objects), oldest first. */
  snapshots(): Snapshot[];
  /** Every action so far, oldest first. */
  actions(): Action[];
  /** Ends a hanging action ("action-hangs"): "completed" takes its effect, "errored" none. Throws for any other. */
  settleAction(id: number, status: "completed" | "errored"): void;
  /** Every request, in arrival order, with the status answered. */
  requests: DigitalOceanRequest[];
  inject(fault: DigitalOceanFault): void;
  /** Droplets created from now on lag in the list as `lag` says (undefined: listed at once). */
  lagList(lag: ListLag | undefined): void;
  /** The list catches up: every droplet created so far is listed from now on. */
  catchUpList(): void;
  /** The token stops working (expired or revoked): every request is answered 401 from now on. */
  revokeToken(): void;
  /** Forget requests, rate-limit windows and pending faults (the droplets, snapshots and actions stay). */
  reset(): void;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------------
// The catalog

const NOT_FOUND = "The resource you were accessing could not be found.";
const UNAUTHORIZED = "Unable to authenticate you";
const RATE_LIMITED = "API Rate limit exceeded.";
const PENDING_EVENT = "Droplet already has a pending event.";
const DROPLET_LIMIT = 25;

const SIZE_TABLE: Array<[slug: string, memory: number, vcpus: number, disk: number, monthly: number, hourly: number]> =
  [
    ["s-1vcpu-1gb", 1024, 1, 25, 6, 0.00893],
    ["s-1vcpu-2gb", 2048, 1, 50, 12, 0.01786],
    ["s-2vcpu-2gb", 2048, 2, 60, 18, 0.02679],
    ["s-2vcpu-4gb", 4096, 2, 80, 24, 0.03571],
    ["s-4vcpu-8gb", 8192, 4, 160, 48, 0.07143],
    ["s-8vcpu-16gb", 16384, 8, 320, 96, 0.14286],
  ];
const REGION_TABLE: Array<[slug: string, name: string]> = [
  ["nyc1", "New York 1"],
  ["nyc3", "New York 3"],
  ["sfo3", "San Francisco 3"],
  ["tor1", "Toronto 1"],
  ["lon1", "London 1"],
  ["ams3", "Amsterdam 3"],
  ["fra1", "Frankfurt 1"],
  ["blr1", "Bangalore 1"],
  ["sgp1", "Singapore 1"],
  ["syd1", "Sydney 1"],
];
const REGION_SLUGS = REGION_TABLE.map(([slug]) => slug);
const SIZE_SLUGS = SIZE_TABLE.map(([slug]) => slug);

const SIZES = new Map<string, Size>(
  SIZE_TABLE.map(([slug, memory, vcpus, disk, monthly, hourly], index) => [
    slug,
    {
      slug,
      memory,
      vcpus,
      disk,
      transfer: index + 1,
      price_monthly: monthly,
      price_hourly: hourly,
      regions: [...REGION_SLUGS],
      available: true,
      description: "Basic",
    },
  ]),
);
const REGIONS = new Map<string, Region>(
  REGION_TABLE.map(([slug, name]) => [
    slug,
    {
      slug,
      name,
      features: ["backups", "ipv6", "metadata", "install_agent", "storage", "image_transfer"],
      available: true,
      sizes: [...SIZE_SLUGS],
    },
  ]),
);

const BASE_IMAGES = new Map<string, Image>(
  (
    [
      [129211873, "ubuntu-22-04-x64", "22.04 (LTS) x64", "Ubuntu", 2.36, "2023-03-30T15:37:48Z"],
      [160218010, "ubuntu-24-04-x64", "24.04 (LTS) x64", "Ubuntu", 2.49, "2024-06-26T20:41:52Z"],
      [146414017, "debian-12-x64", "12 x64", "Debian", 1.9, "2023-12-13T19:27:33Z"],
      // The image of DigitalOcean's own droplet examples (specification/resources/droplets/examples.yml).
      [63663980, "ubuntu-20-04-x64", "20.04 (LTS) x64", "Ubuntu", 2.36, "2020-05-15T05:47:50Z"],
    ] as const
  ).map(([id, slug, name, distribution, gigabytes, createdAt]) => [
    slug,
    {
      id,
      name,
      distribution,
      slug,
      public: true,
      regions: [...REGION_SLUGS],
      created_at: createdAt,
      type: "base",
      min_disk_size: 7,
      size_gigabytes: gigabytes,
      description: `${distribution} ${name}`,
      tags: [],
      status: "available",
      error_message: "",
    },
  ]),
);
const DEFAULT_IMAGE = "ubuntu-22-04-x64";

const DEFAULT_TIMINGS = { createMs: 150, shutdownMs: 100, powerOffMs: 50, powerOnMs: 100, snapshotMs: 150 };
const DROPLET_ACTION_TYPES = new Set([
  "enable_backups",
  "disable_backups",
  "reboot",
  "power_cycle",
  "shutdown",
  "power_off",
  "power_on",
  "restore",
  "password_reset",
  "resize",
  "rebuild",
  "rename",
  "change_kernel",
  "enable_ipv6",
  "snapshot",
]);
const FAULTABLE: ReadonlySet<string> = new Set<DigitalOceanActionType>([
  "create",
  "shutdown",
  "power_off",
  "power_on",
  "snapshot",
]);
const HOSTNAME = /^[a-zA-Z0-9.-]+$/;

/** DigitalOcean's error body; `requestId` defaults to a fresh UUID. */
function digitalOceanError(id: string, message: string, requestId: string = randomUUID()): DigitalOceanErrorBody {
  return { id, message, request_id: requestId };
}

/** The error body DigitalOcean answers a status with, when a test injects just the status. */
function defaultError(status: number, requestId: string): DigitalOceanErrorBody {
  const known: Record<number, [string, string]> = {
    400: ["bad_request", "The request could not be understood."],
    401: ["unauthorized", UNAUTHORIZED],
    403: ["forbidden", "You do not have access for the attempted action."],
    404: ["not_found", NOT_FOUND],
    422: ["unprocessable_entity", "The request could not be processed."],
    429: ["too_many_requests", RATE_LIMITED],
    500: ["server_error", "Unexpected server-side error"],
  };
  const [id, message] = known[status] ?? [
    reasonPhrase(status)
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "_"),
    reasonPhrase(status),
  ];
  return digitalOceanError(id, message, requestId);
}

/** ISO 8601 without milliseconds, as DigitalOcean writes times. */
function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** An ssh-ed25519 public key line and its MD5 fingerprint. */
function sshKeyMaterial(name: string): { publicKey: string; fingerprint: string } {
  const type = Buffer.from("ssh-ed25519");
  const key = randomBytes(32);
  const blob = Buffer.concat([Buffer.alloc(4), type, Buffer.alloc(4), key]);
  blob.writeUInt32BE(type.length, 0);
  blob.writeUInt32BE(key.length, 4 + type.length);
  const md5 = createHash("md5").update(blob).digest("hex");
  return {
    publicKey: `ssh-ed25519 ${blob.toString("base64")} ${name}`,
    fingerprint: md5.match(/../g)?.join(":") ?? md5,
  };
}

function matchRoute(method: string, pathname: string): { route: DigitalOceanRoute; params: string[] } | undefined {
  const segments = pathname.split("/").filter((s) => s !== "");
  for (const route of ROUTES) {
    const [routeMethod = "", pattern = ""] = route.split(" ");
    if (routeMethod !== method) continue;
    const want = pattern.split("/").filter((s) => s !== "");
    if (want.length !== segments.length) continue;
    const params: string[] = [];
    const matches = want.every((w, i) => {
      const s = segments[i] ?? "";
      if (w.startsWith(":")) {
        params.push(s);
        return true;
      }
      return w === s;
    });
    if (matches) return { route, params };
  }
  return undefined;
}

/** A path id: digits only, else NaN (never found). */
function pathId(segment: string | undefined): number {
  return segment !== undefined && /^\d{1,15}$/.test(segment) ? Number(segment) : Number.NaN;
}

// ---------------------------------------------------------------------------------------------------------------
// The stand-in

interface DropletRecord {
  api: Droplet;
  /** Missing from list answers while either is left: list requests still to miss it, and until when. */
  unlisted?: { requests: number; until: number };
  /** What a snapshot of it weighs. */
  gigabytes: number;
  pending: ActionRecord | undefined;
}

interface ActionRecord {
  api: Action;
  /** Ends a hanging action (an "action-hangs" fault) the way DigitalOcean eventually does. */
  settle?: (status: "completed" | "errored") => void;
}

interface SnapshotRecord {
  api: Snapshot;
  distribution: string;
}

/** What a route answers: a JSON body, DigitalOcean's error body (`error`), or nothing. */
type Reply = { status: number; body?: unknown; error?: { id: string; message: string }; headers?: HeaderMap };

/** What the stand-in keeps between requests: the account's world and how requests are met. */
interface DigitalOcean {
  token: string;
  timings: typeof DEFAULT_TIMINGS;
  /** The rate limit's clock. */
  clock: () => number;
  limiter: SlidingWindowLimiter;
  burst: SlidingWindowLimiter | undefined;
  requestFaults: FaultQueue<Fault & { route?: DigitalOceanRoute }>;
  afterEffectFaults: FaultQueue<AfterEffectFault>;
  listLag: ListLag | undefined;
  actionFaults: FaultQueue<ActionErrorsFault | ActionHangsFault>;
  timers: TimerSet;
  requests: DigitalOceanRequest[];
  /** The stand-in's own address, for the links it answers with. */
  origin: string;
  revoked: boolean;
  account: Account;
  vpcUuid: string;
  droplets: DropletRecord[];
  snapshots: SnapshotRecord[];
  actions: ActionRecord[];
  sshKeys: SshKey[];
  /** The next ids to give out. */
  ids: { droplet: number; action: number; snapshot: number };
  /** Host numbers (10–249) in use: 203.0.113.N public, 10.114.0.N private; the next one to try. */
  hosts: { used: Set<number>; next: number };
}

export async function startDigitalOceanStandIn(options: DigitalOceanStandInOptions = {}): Promise<DigitalOceanStandIn> {
  const clock = options.now ?? Date.now;
  let nextKeyId = randomInt(40_000_000, 45_000_000);
  const cloud: DigitalOcean = {
    token: options.token ?? `dop_v1_${randomBytes(32).toString("hex")}`,
    timings: { ...DEFAULT_TIMINGS, ...options.timings },
    clock,
    limiter: new SlidingWindowLimiter({
      ...(options.rateLimit ?? { limit: 5000, windowMs: 3_600_000 }),
      countRejected: false,
      now: clock,
    }),
    burst: options.burstLimit && new SlidingWindowLimiter({ ...options.burstLimit, countRejected: false, now: clock }),
    requestFaults: new FaultQueue<Fault & { route?: DigitalOceanRoute }>(),
    afterEffectFaults: new FaultQueue<AfterEffectFault>(),
    listLag: checkLag(options.listLag),
    actionFaults: new FaultQueue<ActionErrorsFault | ActionHangsFault>(),
    timers: new TimerSet(),
    requests: [],
    origin: "",
    revoked: false,
    account: newAccount(),
    vpcUuid: randomUUID(),
    droplets: [],
    snapshots: [],
    actions: [],
    sshKeys: (options.sshKeys ?? [{ name: "laptop" }, { name: "ci" }]).map(({ name }) => {
      const { publicKey, fingerprint } = sshKeyMaterial(name);
      return { id: nextKeyId++, fingerprint, public_key: publicKey, name };
    }),
    ids: {
      droplet: randomInt(400_000_000, 490_000_000),
      action: randomInt(2_100_000_000, 2_200_000_000),
      snapshot: randomInt(150_000_000, 190_000_000),
    },
    hosts: { used: new Set<number>(), next: 10 },
  };
  const firstDropletId = cloud.ids.droplet;
  const started = Date.now();
  seedDroplets(cloud, options.droplets ?? [{ name: "mc", tags: ["mcops"] }], started);
  seedSnapshots(cloud, options.snapshots ?? [], started, firstDropletId);
  const server = await listenLoopback((req, res) => handle(cloud, req, res));
  cloud.origin = server.url;
  return standIn(cloud, server);
}

function checkLag(lag: ListLag | undefined): ListLag | undefined {
  if (lag === undefined) return undefined;
  for (const [key, value] of Object.entries(lag)) {
    if (value !== undefined && !(typeof value === "number" && value >= 0))
      throw new RangeError(`listLag.${key} must be a number of 0 or more, got ${value}`);
  }
  return lag;
}

/** A list request: the droplets it shows, each lagging one counted as missed once more. */
function listed(cloud: DigitalOcean): Droplet[] {
  const now = Date.now();
  const shown: Droplet[] = [];
  for (const d of cloud.droplets) {
    const lag = d.unlisted;
    if (lag && (lag.requests > 0 || now < lag.until)) {
      lag.requests -= 1;
      continue;
    }
    delete d.unlisted;
    shown.push(d.api);
  }
  return shown;
}

function newAccount(): Account {
  return {
    droplet_limit: DROPLET_LIMIT,
    floating_ip_limit: 3,
    reserved_ip_limit: 3,
    volume_limit: 100,
    email: "ops@example.test",
    name: "mcops",
    uuid: randomUUID(),
    email_verified: true,
    status: "active",
    status_message: "",
    team: { uuid: randomUUID(), name: "My Team" },
  };
}

/** The test's handle on the stand-in. */
function standIn(cloud: DigitalOcean, server: Loopback): DigitalOceanStandIn {
  const { actions } = cloud;
  return {
    url: server.url,
    token: cloud.token,
    droplets: () => cloud.droplets.map((d) => structuredClone(d.api)),
    snapshots: () => cloud.snapshots.map((s) => structuredClone(s.api)),
    actions: () => actions.map((a) => structuredClone(a.api)),
    settleAction(id, status) {
      const record = actions.find((a) => a.api.id === id);
      if (!record?.settle || record.api.status !== "in-progress")
        throw new Error(`action ${id} is not a hanging action`);
      record.settle(status);
    },
    requests: cloud.requests,
    inject(fault) {
      if (fault.kind === "action-errors" || fault.kind === "action-hangs") {
        if (!FAULTABLE.has(fault.actionType))
          throw new RangeError(`"${fault.kind}" needs an actionType of ${[...FAULTABLE]}, got "${fault.actionType}"`);
        cloud.actionFaults.push(fault);
        return;
      }
      if (fault.route !== undefined && !(ROUTES as readonly string[]).includes(fault.route))
        throw new RangeError(`the DigitalOcean stand-in has no route "${fault.route}" (routes: ${ROUTES.join(", ")})`);
      if (fault.kind === "status-after-effect") {
        if (!(Number.isInteger(fault.status) && fault.status >= 400 && fault.status <= 599))
          throw new RangeError(`"status-after-effect" needs an error status (400-599), got ${fault.status}`);
        cloud.afterEffectFaults.push(fault);
      } else cloud.requestFaults.push(fault);
    },
    lagList(lag) {
      cloud.listLag = checkLag(lag);
    },
    catchUpList() {
      for (const d of cloud.droplets) delete d.unlisted;
    },
    revokeToken() {
      cloud.revoked = true;
    },
    reset() {
      cloud.requests.length = 0;
      cloud.limiter.reset();
      cloud.requestFaults.clear();
      cloud.afterEffectFaults.clear();
      cloud.actionFaults.clear();
    },
    async close() {
      cloud.timers.clearAll();
      await server.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Addresses

/** A free host number (10–249): 203.0.113.N public, 10.114.0.N private. */
function allocateHost(cloud: DigitalOcean): number {
  const { hosts } = cloud;
  for (let i = 0; i < 240; i++) {
    const host = 10 + ((hosts.next - 10 + i) % 240);
    if (hosts.used.has(host)) continue;
    hosts.used.add(host);
    hosts.next = host + 1;
    return host;
  }
  throw new RangeError("the DigitalOcean stand-in ran out of addresses in 203.0.113.0/24");
}

function assignNetworks(cloud: DigitalOcean, d: Droplet, ipv6: boolean): void {
  if (d.networks.v4.length > 0) return;
  const host = allocateHost(cloud);
  d.networks.v4 = [
    { ip_address: `203.0.113.${host}`, netmask: "255.255.255.0", gateway: "203.0.113.1", type: "public" },
    { ip_address: `10.114.0.${host}`, netmask: "255.255.240.0", gateway: "10.114.0.1", type: "private" },
  ];
  if (ipv6) {
    d.networks.v6 = [
      {
        ip_address: `2001:db8:3:f0::${host.toString(16)}:1`,
        netmask: 64,
        gateway: "2001:db8:3:f0::1",
        type: "public",
      },
    ];
  }
}

function releaseNetworks(cloud: DigitalOcean, d: Droplet): void {
  const publicIp = d.networks.v4.find((n) => n.type === "public")?.ip_address;
  const host = Number(publicIp?.split(".")[3]);
  if (Number.isInteger(host)) cloud.hosts.used.delete(host);
}

// ---------------------------------------------------------------------------------------------------------------
// The world

interface DropletSpec {
  name: string;
  size: Size;
  region: Region;
  image: Image;
  tags: string[];
  status: DropletStatus;
  features: string[];
  createdAt: number;
  gigabytes: number | undefined;
}

function newDroplet(cloud: DigitalOcean, spec: DropletSpec): DropletRecord {
  const api: Droplet = {
    id: cloud.ids.droplet++,
    name: spec.name,
    memory: spec.size.memory,
    vcpus: spec.size.vcpus,
    disk: spec.size.disk,
    disk_info: [{ type: "local", size: { amount: spec.size.disk, unit: "gib" } }],
    locked: false,
    status: spec.status,
    kernel: null,
    created_at: iso(spec.createdAt),
    features: spec.features,
    backup_ids: [],
    next_backup_window: null,
    snapshot_ids: [],
    image: structuredClone(spec.image),
    volume_ids: [],
    size: structuredClone(spec.size),
    size_slug: spec.size.slug,
    networks: { v4: [], v6: [] },
    region: structuredClone(spec.region),
    tags: [...spec.tags],
    vpc_uuid: cloud.vpcUuid,
  };
  const record: DropletRecord = { api, gigabytes: spec.gigabytes ?? spec.size.disk, pending: undefined };
  cloud.droplets.push(record);
  return record;
}

function findDroplet(cloud: DigitalOcean, id: number): DropletRecord | undefined {
  return cloud.droplets.find((d) => d.api.id === id);
}

function findSnapshot(cloud: DigitalOcean, id: number): SnapshotRecord | undefined {
  return cloud.snapshots.find((s) => s.api.id === String(id));
}

function findAction(cloud: DigitalOcean, id: number): ActionRecord | undefined {
  return cloud.actions.find((a) => a.api.id === id);
}

function addSnapshot(
  cloud: DigitalOcean,
  spec: {
    name: string;
    region: string;
    createdAt: number;
    resourceId: number;
    minDisk: number;
    gigabytes: number;
    distribution: string;
  },
): SnapshotRecord {
  const record: SnapshotRecord = {
    api: {
      id: String(cloud.ids.snapshot++),
      name: spec.name,
      regions: [spec.region],
      created_at: iso(spec.createdAt),
      resource_id: String(spec.resourceId),
      resource_type: "droplet",
      min_disk_size: spec.minDisk,
      size_gigabytes: spec.gigabytes,
      tags: [],
    },
    distribution: spec.distribution,
  };
  cloud.snapshots.push(record);
  return record;
}

/** The image object of a droplet created from a snapshot. */
function snapshotImage(s: SnapshotRecord): Image {
  return {
    id: Number(s.api.id),
    name: s.api.name,
    distribution: s.distribution,
    slug: null,
    public: false,
    regions: [...s.api.regions],
    created_at: s.api.created_at,
    type: "snapshot",
    min_disk_size: s.api.min_disk_size,
    size_gigabytes: s.api.size_gigabytes,
    description: "",
    tags: [],
    status: "available",
    error_message: "",
  };
}

/** An action on a droplet as the API shows it, begun now. */
function newAction(cloud: DigitalOcean, d: DropletRecord, type: string, status: ActionStatus): Action {
  const now = iso(Date.now());
  return {
    id: cloud.ids.action++,
    status,
    type,
    started_at: now,
    completed_at: status === "in-progress" ? null : now,
    resource_id: d.api.id,
    resource_type: "droplet",
    region: structuredClone(d.api.region),
    region_slug: d.api.region.slug,
  };
}

/**
 * Start an action on a droplet: "in-progress" now, then after `ms` "completed" with `effect` run, unless an
 * injected fault makes it end "errored" (no effect) or hang "in-progress" forever (no effect).
 */
function startAction(
  cloud: DigitalOcean,
  d: DropletRecord,
  type: DigitalOceanActionType,
  ms: number,
  effect: () => void,
): Action {
  const api = newAction(cloud, d, type, "in-progress");
  const record: ActionRecord = { api };
  cloud.actions.push(record);
  d.pending = record;
  const fault = cloud.actionFaults.take((f) => f.actionType === type);
  const settle = (status: "completed" | "errored"): void => {
    if (api.status !== "in-progress") return;
    if (d.pending === record) d.pending = undefined;
    if (status === "completed") effect();
    api.status = status;
    api.completed_at = iso(Date.now());
  };
  if (fault?.kind === "action-hangs") {
    record.settle = settle;
    return api;
  }
  cloud.timers.set(() => settle(fault?.kind === "action-errors" ? "errored" : "completed"), ms);
  return api;
}

/** An action that is over as soon as it is asked for (a destroy). */
function recordDone(cloud: DigitalOcean, d: DropletRecord, type: string): void {
  cloud.actions.push({ api: newAction(cloud, d, type, "completed") });
}

/** The droplets that exist at start: active (or off) for a day, with their addresses. */
function seedDroplets(cloud: DigitalOcean, specs: DigitalOceanDropletOptions[], started: number): void {
  for (const spec of specs) {
    const size = SIZES.get(spec.size ?? "s-2vcpu-4gb");
    const region = REGIONS.get(spec.region ?? "fra1");
    if (!size) throw new RangeError(`the DigitalOcean stand-in has no size "${spec.size}" (sizes: ${SIZE_SLUGS})`);
    if (!region)
      throw new RangeError(`the DigitalOcean stand-in has no region "${spec.region}" (regions: ${REGION_SLUGS})`);
    const d = newDroplet(cloud, {
      name: spec.name,
      size,
      region,
      image: BASE_IMAGES.get(DEFAULT_IMAGE) as Image,
      tags: spec.tags ?? [],
      status: spec.status ?? "active",
      features: ["droplet_agent", "private_networking"],
      createdAt: started - 86_400_000,
      gigabytes: spec.sizeGigabytes,
    });
    assignNetworks(cloud, d.api, false);
  }
}

/** The snapshots that exist at start, of droplets that no longer do. */
function seedSnapshots(
  cloud: DigitalOcean,
  specs: DigitalOceanSnapshotOptions[],
  started: number,
  firstDropletId: number,
): void {
  for (const [index, spec] of specs.entries()) {
    const region = spec.region ?? "fra1";
    if (!REGIONS.has(region))
      throw new RangeError(`the DigitalOcean stand-in has no region "${region}" (regions: ${REGION_SLUGS})`);
    const gigabytes = spec.sizeGigabytes;
    // The disk of the smallest size it fits on, as if taken of such a droplet; 80 (s-2vcpu-4gb) without a size.
    const minDisk = gigabytes === undefined ? 80 : (SIZE_TABLE.find(([, , , disk]) => disk >= gigabytes)?.[3] ?? 320);
    const createdAt = spec.createdAt === undefined ? started - 86_400_000 : Date.parse(spec.createdAt);
    if (Number.isNaN(createdAt)) throw new RangeError(`snapshot createdAt is not a date: "${spec.createdAt}"`);
    addSnapshot(cloud, {
      name: spec.name,
      region,
      createdAt,
      resourceId: spec.resourceId ?? firstDropletId - 1_000 - index,
      minDisk,
      gigabytes: gigabytes ?? minDisk,
      distribution: "Ubuntu",
    });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The API

const failure = (status: number, id: string, message: string): Reply => ({ status, error: { id, message } });
const unprocessable = (message: string): Reply => failure(422, "unprocessable_entity", message);
const notFound = failure(404, "not_found", NOT_FOUND);

/** DigitalOcean's list envelope: `{key: [...], links, meta: {total}}`, `links.pages` when there is more than one page. */
function list(cloud: DigitalOcean, key: string, items: unknown[], url: URL): Reply {
  const perPage = Math.min(200, Math.max(1, Number.parseInt(url.searchParams.get("per_page") ?? "", 10) || 20));
  const lastPage = Math.max(1, Math.ceil(items.length / perPage));
  const page = Math.max(1, Number.parseInt(url.searchParams.get("page") ?? "", 10) || 1);
  const link = (n: number): string => {
    const q = new URLSearchParams(url.searchParams);
    q.set("page", String(n));
    q.set("per_page", String(perPage));
    return `${cloud.origin}${url.pathname}?${q}`;
  };
  const pages: Record<string, string> = {};
  if (page > 1) Object.assign(pages, { first: link(1), prev: link(Math.min(page - 1, lastPage)) });
  if (page < lastPage) Object.assign(pages, { next: link(page + 1), last: link(lastPage) });
  return {
    status: 200,
    body: {
      [key]: items.slice((page - 1) * perPage, page * perPage),
      links: Object.keys(pages).length > 0 ? { pages } : {},
      meta: { total: items.length },
    },
  };
}

/** POST /v2/droplets: the request checked, then a "new" droplet that a "create" action makes active. */
function createDroplet(cloud: DigitalOcean, input: Record<string, unknown>): Reply {
  const spec = dropletSpec(cloud, input);
  if ("refused" in spec) return spec.refused;
  const ipv6 = input.ipv6 === true;
  const backups = input.backups === true;
  const d = newDroplet(cloud, spec);
  if (cloud.listLag) {
    d.unlisted = { requests: cloud.listLag.requests ?? 0, until: Date.now() + (cloud.listLag.ms ?? 0) };
  }
  const action = startAction(cloud, d, "create", cloud.timings.createMs, () => {
    d.api.status = "active";
    assignNetworks(cloud, d.api, ipv6);
    // The next window starts at the next midnight UTC and lasts 23 hours, as in DigitalOcean's droplet examples.
    if (backups) {
      const start = Math.ceil((Date.now() + 1) / 86_400_000) * 86_400_000;
      d.api.next_backup_window = { start: iso(start), end: iso(start + 23 * 3_600_000) };
    }
  });
  return {
    status: 202,
    body: {
      droplet: structuredClone(d.api),
      links: { actions: [{ id: action.id, rel: "create", href: `${cloud.origin}/v2/actions/${action.id}` }] },
    },
  };
}

/** The droplet a create request asks for, or the 422 DigitalOcean answers it with. */
function dropletSpec(cloud: DigitalOcean, input: Record<string, unknown>): DropletSpec | { refused: Reply } {
  const refuse = (message: string): { refused: Reply } => ({ refused: unprocessable(message) });
  const { name, region: regionSlug, size: sizeSlug, image: imageRef } = input;
  if (typeof name !== "string" || !HOSTNAME.test(name))
    return refuse("Only valid hostname characters are allowed. (a-z, A-Z, 0-9, . and -)");
  const region = typeof regionSlug === "string" ? REGIONS.get(regionSlug) : undefined;
  if (!region) return refuse("You specified an invalid region for Droplet creation.");
  const size = typeof sizeSlug === "string" ? SIZES.get(sizeSlug) : undefined;
  if (!size) return refuse("You specified an invalid size for Droplet creation.");
  const { image, gigabytes } = imageOf(cloud, imageRef);
  if (!image?.regions.includes(region.slug)) return refuse("You specified an invalid image for Droplet creation.");
  if (size.disk < image.min_disk_size) {
    return refuse(
      `Cannot create a droplet with a smaller disk (${size.disk}GB) than the image (${image.min_disk_size}GB)`,
    );
  }
  const keys = input.ssh_keys ?? [];
  const knownKey = (k: unknown): boolean =>
    cloud.sshKeys.some((key) => key.id === (typeof k === "string" ? pathId(k) : k) || key.fingerprint === k);
  if (!Array.isArray(keys) || !keys.every(knownKey))
    return refuse("You specified an invalid ssh key for Droplet creation.");
  const tags = input.tags ?? [];
  if (!Array.isArray(tags) || !tags.every((t): t is string => typeof t === "string" && /^[\w:-]{1,255}$/.test(t)))
    return refuse("Tags may contain letters, numbers, colons, dashes, and underscores.");
  if (cloud.droplets.length >= cloud.account.droplet_limit)
    return refuse("creating this/these droplet(s) will exceed your droplet limit");

  const features = ["droplet_agent", "private_networking"];
  if (input.backups === true) features.push("backups");
  if (input.ipv6 === true) features.push("ipv6");
  if (input.monitoring === true) features.push("monitoring");
  return { name, size, region, image, tags, status: "new", features, createdAt: Date.now(), gigabytes };
}

/** A create request's `image`: a snapshot's or a base image's id, or a base image's slug. */
function imageOf(cloud: DigitalOcean, imageRef: unknown): { image: Image | undefined; gigabytes?: number } {
  const imageId = typeof imageRef === "number" ? imageRef : pathId(typeof imageRef === "string" ? imageRef : "");
  if (Number.isInteger(imageId)) {
    const snapshot = findSnapshot(cloud, imageId);
    if (snapshot) return { image: snapshotImage(snapshot), gigabytes: snapshot.api.size_gigabytes };
    return { image: [...BASE_IMAGES.values()].find((i) => i.id === imageId) };
  }
  return { image: typeof imageRef === "string" ? BASE_IMAGES.get(imageRef) : undefined };
}

/** POST /v2/droplets/:id/actions: the actions the stand-in performs, each as a timed action. */
function dropletAction(cloud: DigitalOcean, d: DropletRecord, input: Record<string, unknown>): Reply {
  const { timings } = cloud;
  const type = input.type;
  if (typeof type !== "string" || !DROPLET_ACTION_TYPES.has(type))
    return unprocessable("Type is not included in the list");
  if (!FAULTABLE.has(type)) return unprocessable(`testkit: the DigitalOcean stand-in does not perform "${type}"`);
  if (d.pending) return unprocessable(PENDING_EVENT);
  const on = d.api.status === "active";
  let action: Action;
  switch (type as DigitalOceanActionType) {
    case "shutdown":
    case "power_off": {
      if (!on) return unprocessable("Droplet is already powered off.");
      const ms = type === "shutdown" ? timings.shutdownMs : timings.powerOffMs;
      action = startAction(cloud, d, type as DigitalOceanActionType, ms, () => {
        d.api.status = "off";
      });
      break;
    }
    case "power_on":
      if (on) return unprocessable("Droplet is already powered on.");
      action = startAction(cloud, d, "power_on", timings.powerOnMs, () => {
        d.api.status = "active";
        assignNetworks(cloud, d.api, d.api.features.includes("ipv6"));
      });
      break;
    case "snapshot": {
      const named = typeof input.name === "string" && input.name.trim() !== "" ? input.name : undefined;
      const name = named ?? `${d.api.name}-${Math.floor(Date.now() / 1000)}`;
      action = startAction(cloud, d, "snapshot", timings.snapshotMs, () => {
        const s = addSnapshot(cloud, {
          name,
          region: d.api.region.slug,
          createdAt: Date.now(),
          resourceId: d.api.id,
          minDisk: d.api.disk,
          gigabytes: d.gigabytes,
          distribution: d.api.image.distribution,
        });
        d.api.snapshot_ids.push(Number(s.api.id));
      });
      break;
    }
    default:
      return unprocessable("Type is not included in the list");
  }
  return { status: 201, body: { action: structuredClone(action) } };
}

/** What a route gets: the path's first id (NaN when not digits), all its parameters, the query and the JSON body. */
interface RouteRequest {
  id: number;
  params: string[];
  url: URL;
  input: Record<string, unknown>;
}

const newestFirst = (records: ActionRecord[]): Action[] => records.map((a) => a.api).reverse();

/** Each route's answer; ROUTE_SOURCES names where each one comes from. */
const ROUTE_HANDLERS: Record<DigitalOceanRoute, (cloud: DigitalOcean, r: RouteRequest) => Reply> = {
  "GET /v2/account": (cloud) => ({ status: 200, body: { account: cloud.account } }),
  "GET /v2/account/keys": (cloud, { url }) => list(cloud, "ssh_keys", cloud.sshKeys, url),
  "GET /v2/droplets": (cloud, { url }) => {
    const tag = url.searchParams.get("tag_name");
    const name = url.searchParams.get("name");
    const found = listed(cloud).filter(
      (d) => (tag === null || d.tags.includes(tag)) && (name === null || d.name === name),
    );
    return list(cloud, "droplets", found, url);
  },
  "POST /v2/droplets": (cloud, { input }) => createDroplet(cloud, input),
  "GET /v2/droplets/:id": (cloud, { id }) => {
    const d = findDroplet(cloud, id);
    return d ? { status: 200, body: { droplet: d.api } } : notFound;
  },
  "DELETE /v2/droplets/:id": (cloud, { id }) => {
    const d = findDroplet(cloud, id);
    if (!d) return notFound;
    if (d.pending) return unprocessable(PENDING_EVENT);
    cloud.droplets.splice(cloud.droplets.indexOf(d), 1);
    releaseNetworks(cloud, d.api);
    recordDone(cloud, d, "destroy");
    // no_content_with_content_type.yml: this 204 carries a Content-Type (a snapshot's 204 does not).
    return { status: 204, headers: { "Content-Type": "application/json; charset=utf-8" } };
  },
  "GET /v2/droplets/:id/actions": (cloud, { id, url }) => {
    const d = findDroplet(cloud, id);
    return d
      ? list(cloud, "actions", newestFirst(cloud.actions.filter((a) => a.api.resource_id === id)), url)
      : notFound;
  },
  "POST /v2/droplets/:id/actions": (cloud, { id, input }) => {
    const d = findDroplet(cloud, id);
    return d ? dropletAction(cloud, d, input) : notFound;
  },
  "GET /v2/droplets/:id/actions/:action_id": (cloud, { id, params }) => {
    const a = findDroplet(cloud, id) ? findAction(cloud, pathId(params[1])) : undefined;
    return a && a.api.resource_id === id ? { status: 200, body: { action: a.api } } : notFound;
  },
  "GET /v2/actions": (cloud, { url }) => list(cloud, "actions", newestFirst(cloud.actions), url),
  "GET /v2/actions/:id": (cloud, { id }) => {
    const a = findAction(cloud, id);
    return a ? { status: 200, body: { action: a.api } } : notFound;
  },
  "GET /v2/snapshots": (cloud, { url }) => {
    const type = url.searchParams.get("resource_type");
    return list(cloud, "snapshots", type === null || type === "droplet" ? cloud.snapshots.map((s) => s.api) : [], url);
  },
  "GET /v2/snapshots/:id": (cloud, { id }) => {
    const s = findSnapshot(cloud, id);
    return s ? { status: 200, body: { snapshot: s.api } } : notFound;
  },
  "DELETE /v2/snapshots/:id": (cloud, { id }) => {
    const s = findSnapshot(cloud, id);
    if (!s) return notFound;
    cloud.snapshots.splice(cloud.snapshots.indexOf(s), 1);
    for (const d of cloud.droplets) d.api.snapshot_ids = d.api.snapshot_ids.filter((n) => n !== id);
    return { status: 204 };
  },
};

function rateHeaders(decision: RateDecision, now: number): HeaderMap {
  return {
    "RateLimit-Limit": String(decision.limit),
    "RateLimit-Remaining": String(decision.remaining),
    "RateLimit-Reset": String(Math.ceil((now + decision.resetAfterMs) / 1000)),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// A request, step by step

/** One request on its way through the steps below, and how to answer it. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  record: DigitalOceanRequest;
  parsed: JsonParse | undefined;
  target: { route: DigitalOceanRoute; params: string[] } | undefined;
  requestId: string;
  /** The token presented, if any. */
  presented: string | undefined;
  /** The window counted the request as it arrived, whatever happens next. */
  decision: RateDecision;
  /** The burst window's, when there is one and the hour let the request through. */
  burst: RateDecision | undefined;
  limitHeaders: HeaderMap;
  answer(reply: Reply): void;
}

async function handle(cloud: DigitalOcean, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const x = await receive(cloud, req, res);
  if ((await injectedFault(cloud, x)) === "handled") return;
  if (cloud.revoked || x.presented !== cloud.token) return x.answer(failure(401, "unauthorized", UNAUTHORIZED));
  if (!x.decision.allowed) {
    const wait = Math.max(1, Math.ceil(x.decision.retryAfterMs / 1000));
    return x.answer({ ...failure(429, "too_many_requests", RATE_LIMITED), headers: { "Retry-After": String(wait) } });
  }
  if (x.burst && !x.burst.allowed) {
    // The minute's limit: the hour's RateLimit-* as on every answer (limitHeaders), the minute's wait in Retry-After.
    const wait = Math.max(1, Math.ceil(x.burst.retryAfterMs / 1000));
    return x.answer({ ...failure(429, "too_many_requests", RATE_LIMITED), headers: { "Retry-After": String(wait) } });
  }
  const { target, parsed } = x;
  if (!target) return x.answer(notFound);
  if (parsed && !parsed.ok) return x.answer(failure(400, "bad_request", "The request body is not valid JSON."));
  const input = parsed?.ok && isPlainObject(parsed.value) ? parsed.value : {};
  const serve = ROUTE_HANDLERS[target.route];
  const reply = serve(cloud, { id: pathId(target.params[0]), params: target.params, url: x.url, input });
  const after =
    reply.status < 400
      ? cloud.afterEffectFaults.take((f) => f.route === undefined || f.route === target.route)
      : undefined;
  if (!after) return x.answer(reply);
  x.record.fault = after.kind;
  const { id, message } = defaultError(after.status, x.requestId);
  x.answer(failure(after.status, id, message));
}

async function receive(cloud: DigitalOcean, req: IncomingMessage, res: ServerResponse): Promise<Exchange> {
  const at = Date.now();
  const now = cloud.clock();
  const method = (req.method ?? "GET").toUpperCase();
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const text = await readBody(req);
  const record: DigitalOceanRequest = { at, method, path: url.pathname + url.search, status: 0 };
  cloud.requests.push(record);
  const parsed = text.trim() === "" ? undefined : parseJson(text);
  if (parsed?.ok) record.body = parsed.value;
  const target = matchRoute(method === "HEAD" ? "GET" : method, url.pathname);
  if (target) record.route = target.route;
  const requestId = randomUUID();

  const presented = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
  const decision = cloud.limiter.hit(presented ?? "", now);
  const burst = decision.allowed ? cloud.burst?.hit(presented ?? "", now) : undefined;
  const limitHeaders = rateHeaders(decision, now);
  return {
    req,
    res,
    url,
    record,
    parsed,
    target,
    requestId,
    presented,
    decision,
    burst,
    limitHeaders,
    answer(reply) {
      record.status = reply.status;
      const headers = { ...limitHeaders, ...reply.headers };
      if (reply.error)
        sendJson(res, reply.status, digitalOceanError(reply.error.id, reply.error.message, requestId), headers);
      else if (reply.body === undefined) sendEmpty(res, reply.status, headers);
      else sendJson(res, reply.status, reply.body, headers);
    },
  };
}

/** The next queued request fault for the route: "handled" when it answered (or dropped) the request. */
function injectedFault(cloud: DigitalOcean, x: Exchange): Promise<"handled" | "continue"> {
  const { record, res, requestId } = x;
  const fault = cloud.requestFaults.take((f) => f.route === undefined || f.route === x.target?.route);
  if (fault) record.fault = fault.kind;
  return applyFault(fault, res, cloud.timers, {
    status: (f: StatusFault) => {
      record.status = f.status;
      const body = f.body === undefined ? defaultError(f.status, requestId) : f.body;
      sendAny(res, f.status, body, { ...x.limitHeaders, ...f.headers });
    },
    rateLimit: (f) => {
      record.status = 429;
      const wait = Math.ceil(Math.max(0, f.retryAfterSeconds));
      // RateLimit-* are the hour's, as on every answer: RateLimit-Reset is when its oldest request expires, not the
      // end of the wait (description.yml "Rate Limit"); the wait is Retry-After's alone.
      const headers: HeaderMap = f.viaHeaderOnly
        ? { "Retry-After": String(wait) }
        : f.withoutRetryAfter
          ? x.limitHeaders
          : { ...x.limitHeaders, "Retry-After": String(wait) };
      sendJson(res, 429, digitalOceanError("too_many_requests", RATE_LIMITED, requestId), headers);
    },
    dropped: () => {
      record.status = 0;
    },
  });
}
