import * as z from "zod/mini";
import { type Clock, systemClock } from "../clock.ts";
import { ExitCode, JobError, type McopsErrorOptions } from "../errors.ts";
import { redact } from "../secrets.ts";
import {
  type Answer,
  errorBody,
  exchange,
  POLICIES,
  parseBody,
  RequestFailure,
  type RequestPolicy,
  waitHintMs,
} from "./request.ts";
import { type SendOptions, send } from "./transport.ts";

/**
 * The Pterodactyl client API (docs/system.md 4.1, prefix /api/client) as the tools need it: power signals, console commands,
 * live resources and the server record. Errors come back as `PanelError` with advice; the key never appears in one.
 */
type PowerSignal = "start" | "stop" | "restart" | "kill";
export type PowerState = "offline" | "starting" | "running" | "stopping";

export interface Resources {
  state: PowerState;
  isSuspended: boolean;
  /** Milliseconds since the server process started; 0 when offline. */
  uptimeMs: number;
  memoryBytes: number;
  cpuPercent: number;
  diskBytes: number;
}

export interface ServerDetails {
  identifier: string;
  uuid: string;
  name: string;
  node: string;
  /** null normally; "suspended", "installing", "transferring", "restoring_backup"... */
  status: string | null;
  isSuspended: boolean;
  isInstalling: boolean;
  isTransferring: boolean;
  /** The container's memory limit; undefined when it has none (limits.memory 0) or the panel did not say. */
  memoryLimitBytes: number | undefined;
  /** The image the server's container runs (attributes.docker_image), e.g. "ghcr.io/pterodactyl/yolks:java_17". */
  dockerImage: string | undefined;
  /**
   * What the key may do on this server (meta.user_permissions): ["*"] for the owner (or an admin), else the subuser's
   * permissions ("startup.read", "startup.docker-image", ...); undefined when the panel did not say.
   */
  permissions: string[] | undefined;
}

/** The server's startup as GET /startup gives it (panel StartupController index). */
export interface Startup {
  /** The images the server's egg offers, display name → image ("Java 21" → "ghcr.io/pterodactyl/yolks:java_21"). */
  dockerImages: Record<string, string>;
  /** The startup line with the variables filled in (hidden ones as "[hidden]"). */
  startupCommand: string;
  /** The startup line as the egg (or the admin) wrote it, with its {{VARIABLES}}. */
  rawStartupCommand: string;
}

type PanelErrorKind =
  | "auth"
  | "forbidden"
  | "not-found"
  | "conflict"
  | "validation"
  | "rate-limited"
  | "server-offline"
  /** The panel's DaemonConnectionException: Wings did not answer, or answered with an error the panel passes on. */
  | "wings"
  /** A 502/503/504 or Cloudflare's 520–524 that the panel itself did not write: its proxy, web server or PHP. */
  | "panel-unavailable"
  | "panel-error"
  /** 400 on settings/docker-image: an administrator set an image the egg does not list; only they can change it. */
  | "image-locked"
  /** 422 on settings/docker-image: the image is not one of the egg's. */
  | "image-not-offered"
  | "network"
  | "timeout";

export class PanelError extends JobError {
  /** 75 (try again) when Wings, behind the panel, failed ("wings"); 1 otherwise. */
  override readonly exitCode: number;
  readonly kind: PanelErrorKind;
  readonly status: number | undefined;
  readonly detail: string | undefined;
  /** For kind "wings": the status Wings (or a proxy in front of it) answered the panel; undefined when none came. */
  readonly wingsStatus: number | undefined;
  /**
   * For an answer the panel wrote: the message's own words, without what the panel said (its code and detail), for a
   * page that shows the status but never the answer's words (the dashboard).
   */
  readonly reason: string | undefined;

  constructor(
    kind: PanelErrorKind,
    message: string,
    options: McopsErrorOptions & { status?: number; detail?: string; wingsStatus?: number; reason?: string },
  ) {
    super(redact(message), options);
    this.reason = options.reason;
    this.exitCode = kind === "wings" ? ExitCode.busy : ExitCode.failed;
    this.kind = kind;
    this.status = options.status;
    this.detail = options.detail;
    this.wingsStatus = options.wingsStatus;
  }
}

export interface PanelClientOptions {
  /** Panel base address (CONTROL_URL). */
  url: string;
  /** Client API key (CONTROL_KEY). */
  key: string;
  /** 8-character short id (SERVER_ID). */
  serverId: string;
  timeoutMs?: number;
  /** Tries for a request that is safe to repeat. */
  maxAttempts?: number;
  /** First back-off; doubles each try. */
  backoffMs?: number;
  clock?: Clock;
}

interface WaitOptions {
  timeoutMs: number;
  /** The longest pause between polls (default 5 s); the first pauses are shorter (250 ms, doubling). The panel caches
   * resources for 20 s, so polling faster than that mostly re-reads its cache. */
  pollMs?: number;
  signal?: AbortSignal;
}

export interface PanelClient {
  details(): Promise<ServerDetails>;
  resources(): Promise<Resources>;
  power(signal: PowerSignal): Promise<void>;
  command(line: string): Promise<void>;
  /** Polls resources until the state is one of `states`; PanelError kind "timeout" when it never gets there. */
  waitForState(states: PowerState | PowerState[], options: WaitOptions): Promise<Resources>;
  /** The egg's images and the startup line (needs the permission startup.read). */
  startup(): Promise<Startup>;
  /**
   * Switches the server's image to one of the egg's (needs startup.docker-image); used from the container's next
   * start. PanelError "image-locked" when an administrator set the current one, "image-not-offered" for an image the
   * egg does not list.
   */
  setDockerImage(image: string): Promise<void>;
}

/** The parts of the client API's answers the tools read (pterodactyl/panel app/Transformers/Api/Client). */
export const panelEnvelopeSchema = z.object({
  errors: z.optional(
    z.array(
      z.object({
        code: z.optional(z.string()),
        detail: z.optional(z.string()),
        meta: z.optional(z.object({ source_field: z.optional(z.string()) })),
      }),
    ),
  ),
});
type Envelope = z.infer<typeof panelEnvelopeSchema>;
type EnvelopeError = NonNullable<Envelope["errors"]>[number];

export const statsSchema = z.object({
  object: z.literal("stats"),
  attributes: z.object({
    // "stopped": the panel's StatsTransformer default when Wings' answer has no state (read as "offline").
    current_state: z.enum(["offline", "starting", "running", "stopping", "stopped"]),
    is_suspended: z.boolean(),
    resources: z.object({
      memory_bytes: z.number(),
      cpu_absolute: z.number(),
      disk_bytes: z.number(),
      uptime: z.number(),
    }),
  }),
});

export const serverSchema = z.object({
  object: z.literal("server"),
  attributes: z.object({
    identifier: z.string(),
    uuid: z.string(),
    name: z.string(),
    node: z.string(),
    status: z.nullable(z.string()),
    is_suspended: z.boolean(),
    is_installing: z.boolean(),
    is_transferring: z.boolean(),
    /** The panel's ServerTransformer: memory in MiB, 0 for no limit. */
    limits: z.optional(z.looseObject({ memory: z.number() })),
    docker_image: z.optional(z.string()),
  }),
  /** ServerController index: what the key's user may do on the server. */
  meta: z.optional(z.object({ user_permissions: z.optional(z.array(z.string())) })),
});

/** GET /startup: only its meta is read (the variables are the egg's, not needed here). */
export const startupSchema = z.object({
  object: z.literal("list"),
  meta: z.object({
    startup_command: z.string(),
    // The egg's docker_images column: display name → image. An egg saved by an old panel can hold a list instead.
    docker_images: z.union([z.record(z.string(), z.string()), z.array(z.string())]),
    raw_startup_command: z.string(),
  }),
});

/** What every call to one server needs: how to reach the panel, under which policy, and how messages name it. */
interface PanelLink {
  /** CONTROL_URL as given: network errors name it. */
  url: string;
  serverId: string;
  /** The server's address under the client API: requests go to `${base}${path}`. */
  base: string;
  /** "<panel> server <id>": where panel answers and timeouts happened. */
  where: string;
  policy: RequestPolicy;
  clock: Clock;
  /** One try of a request to the panel, with the key (transport.ts: node:http, not fetch). */
  http: (address: string, request: Omit<SendOptions, "headers">) => Promise<Answer>;
}

function connect(options: PanelClientOptions): PanelLink {
  const { url, key, serverId, clock = systemClock } = options;
  const policy: RequestPolicy = {
    ...POLICIES.panel,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.maxAttempts ? { attempts: options.maxAttempts } : {}),
    ...(options.backoffMs !== undefined ? { backoffMs: options.backoffMs } : {}),
  };
  const headers = { authorization: `Bearer ${key}`, accept: "application/json" };
  const http: PanelLink["http"] = (address, request) => send(address, { ...request, headers });
  return {
    url,
    serverId,
    base: `${url.replace(/\/+$/, "")}/api/client/servers/${encodeURIComponent(serverId)}`,
    where: `${url.replace(/\/+$/, "")} server ${serverId}`,
    policy,
    clock,
    http,
  };
}

/** A route as messages name it: "GET /api/client/servers/1a2b3c4d/resources". */
function route(link: PanelLink, method: string, path: string): string {
  return `${method.toUpperCase()} /api/client/servers/${encodeURIComponent(link.serverId)}${path}`;
}

const DOCKER_IMAGE_PATH = "/settings/docker-image";
/** The subuser permission a route needs, where a 403 means the key's user lacks it (panel app/Models/Permission.php). */
const PERMISSION_HINTS: Record<string, string> = {
  "/startup":
    "the key's user needs the subuser permission startup.read (Users → the user → Startup: Read), or use the owner's key",
  [DOCKER_IMAGE_PATH]:
    "the key's user needs the subuser permission startup.docker-image (Users → the user → Startup: Docker Image), or use the owner's key",
};

/** Statuses a proxy, web server or Cloudflare answers with when the panel behind it does not. */
const UPSTREAM_STATUSES = [502, 503, 504, 520, 521, 522, 523, 524];

/** The PanelError for an answer that is not a 2xx, with what to do about it. */
function toError(
  link: PanelLink,
  status: number,
  envelope: Envelope,
  retryAfter: number | undefined,
  path: string,
): PanelError {
  // The envelope first: the panel passes Wings' own status through (a 404, 403 or 500 from Wings is not the
  // panel's), so the status alone would blame SERVER_ID or CONTROL_KEY for a fault of the node.
  const first = envelope.errors?.[0];
  if (first?.code === "DaemonConnectionException") return wingsError(link, status, first);
  // Pterodactyl answers its own errors in its envelope; a 502 page from nginx, PHP-FPM or Cloudflare has none.
  const fromPanel = Array.isArray(envelope.errors) && envelope.errors.length > 0;
  if (UPSTREAM_STATUSES.includes(status) && !fromPanel) {
    return new PanelError(
      "panel-unavailable",
      `the panel did not answer (${status} from its proxy on ${path || "/"})`,
      {
        where: link.where,
        status,
        detail: undefined,
        reason: "the panel did not answer",
        hint: "it may be restarting: try again in a minute; if it lasts, check the panel's web server and PHP-FPM",
      },
    );
  }
  return panelAnswerError(link, status, envelope.errors?.[0], retryAfter, path);
}

/** The PanelError for an error the panel itself wrote (or a status no proxy explains), by its status. */
function panelAnswerError(
  link: PanelLink,
  status: number,
  first: EnvelopeError | undefined,
  retryAfter: number | undefined,
  path: string,
): PanelError {
  const { serverId } = link;
  const detail = first?.detail;
  const said = `${status}${first?.code ? ` ${first.code}` : ""}${detail ? `: ${detail}` : ""}`;
  const opts = { where: link.where, status, detail };
  switch (status) {
    case 401:
      return new PanelError("auth", `the panel refused the API key (${said})`, {
        ...opts,
        reason: "the panel refused the API key",
        hint: "check CONTROL_KEY: a client API key (ptlc_...) from Account → API Credentials, not revoked",
      });
    case 400:
      if (path === DOCKER_IMAGE_PATH) {
        return new PanelError("image-locked", `the panel will not switch the server's image (${said})`, {
          ...opts,
          reason: "the panel will not switch the server's image",
          hint: "an administrator set it by hand: change it in the admin area (Servers → the server → Startup → Docker Image), or pick one of the egg's images there so the Startup tab can switch it",
        });
      }
      return new PanelError("panel-error", `the panel answered ${said}`, {
        ...opts,
        reason: "the panel answered",
        hint: "check the panel's logs (the web server error log and the queue worker's journal)",
      });
    case 403:
      return new PanelError("forbidden", `the API key may not do this on server ${serverId} (${said})`, {
        ...opts,
        reason: `the API key may not do this on server ${serverId}`,
        hint:
          PERMISSION_HINTS[path] ??
          "use a client key of a user who owns the server or has the needed subuser permission",
      });
    case 404:
      return new PanelError("not-found", `the panel has no server ${serverId} for this key (${said})`, {
        ...opts,
        reason: `the panel has no server ${serverId} for this key`,
        hint: "check SERVER_ID: the first 8 characters of the server's UUID, as in the panel address /server/<id>",
      });
    case 409:
      return new PanelError("conflict", `the panel refuses while the server is busy (${said})`, {
        ...opts,
        reason: "the panel refuses while the server is busy",
        hint: "wait until the install or transfer has finished, or unsuspend the server in the admin area",
      });
    case 422:
      if (path === DOCKER_IMAGE_PATH && first?.meta?.source_field === "docker_image") {
        return new PanelError("image-not-offered", `the panel refused the image: the egg does not offer it (${said})`, {
          ...opts,
          reason: "the panel refused the image: the egg does not offer it",
          hint: "add it to the egg in the admin area (Nests → the egg → Docker Images), or pick one the Startup tab lists",
        });
      }
      return new PanelError(
        "validation",
        `the panel rejected the request (${said}${first?.meta?.source_field ? `, field ${first.meta.source_field}` : ""})`,
        {
          ...opts,
          reason: "the panel rejected the request",
          hint: "this is a bug in mcops; run with MCOPS_DEBUG=1 and report it",
        },
      );
    case 429:
      return new PanelError("rate-limited", `the panel is rate limiting this key (${said})`, {
        ...opts,
        reason: "the panel is rate limiting this key",
        hint: `try again in ${retryAfter === undefined ? "a few" : Math.ceil(retryAfter / 1000)} seconds; another program may be using the same key`,
      });
    // The panel's own 502 comes only from the console route: the server is not running (Wings refuses commands).
    case 502:
      if (path !== "/command") {
        return new PanelError("panel-unavailable", `the panel did not answer (${said} on ${path || "/"})`, {
          ...opts,
          reason: "the panel did not answer",
          hint: "it may be restarting: try again in a minute",
        });
      }
      return new PanelError("server-offline", `the game server is not running (${said})`, {
        ...opts,
        reason: "the game server is not running",
        hint: "start it first; console commands need a running server",
      });
    default:
      return new PanelError("panel-error", `the panel answered ${said}`, {
        ...opts,
        reason: "the panel answered",
        hint: "check the panel's logs (the web server error log and the queue worker's journal)",
      });
  }
}

/** What Wings' status means when the panel passes it on, and what to do about it. */
const TOKEN_REFUSED = {
  means: "Wings refused the panel's node token",
  hint: "the node's token in the panel and token in Wings' /etc/pterodactyl/config.yml differ: copy the node's Configuration tab into it and restart Wings",
};
const WINGS_STATUSES: Record<number, { means: string; hint: string }> = {
  // pterodactyl/wings router/middleware/middleware.go RequireAuthorization (401 no bearer, 403 another token),
  // ServerExists (404), CaptureErrors (500), postServerCommands (502: the panel makes it "Server must be online").
  401: TOKEN_REFUSED,
  403: TOKEN_REFUSED,
  404: {
    means: "Wings has no such server loaded",
    hint: "the node does not know this server (created or moved while Wings was down): restart Wings so it loads the panel's servers (systemctl restart wings)",
  },
  500: {
    means: "Wings failed (the server's container may not exist)",
    hint: "journalctl -u wings -n 50 on the node; starting the server recreates a missing container",
  },
  502: {
    means: "a proxy in front of Wings got no answer from it",
    hint: "Wings is down behind its proxy: systemctl status wings; journalctl -u wings -n 50",
  },
  504: {
    means: "Wings or a proxy in front of it timed out",
    hint: "Wings or Docker on the node is overloaded or stuck: journalctl -u wings -n 50; try again in a minute",
  },
};

/**
 * The panel's DaemonConnectionException (pterodactyl/panel app/Exceptions/Http/Connection/DaemonConnectionException.php):
 * no answer from Wings is a 504 "Could not establish a connection..."; an answer of 500 or more says "(code: N)" in
 * the detail (and so does every answer on /resources, which keeps 504 as its status); an answer under 500 is the
 * panel's status and "An error occurred on the remote host: <Wings' error>.". Exit 75: the operator's settings are
 * fine, the node is not; try again once it is.
 */
function wingsError(link: PanelLink, status: number, first: EnvelopeError): PanelError {
  const detail = first.detail ?? "";
  const code = /\(code: (\d{3})\)/.exec(detail)?.[1];
  const noAnswer = detail.startsWith("Could not establish a connection");
  const wingsStatus = noAnswer ? undefined : code !== undefined ? Number(code) : status;
  const remote = /^An error occurred on the remote host: (.*?)\.* \(request id: [^)]*\)$/s.exec(detail)?.[1];
  const known = wingsStatus === undefined ? undefined : WINGS_STATUSES[wingsStatus];
  const what =
    wingsStatus === undefined
      ? "no answer (Wings is down, unreachable from the panel, or slower than the panel's GUZZLE_TIMEOUT, 15 s)"
      : `status ${wingsStatus}, ${known?.means ?? "an error from Wings"}${remote ? ` ("${remote}")` : ""}`;
  return new PanelError("wings", `the panel could not get an answer from Wings: ${what}`, {
    where: link.where,
    status,
    detail: first.detail,
    ...(wingsStatus === undefined ? {} : { wingsStatus }),
    hint: `${known?.hint ?? "check Wings on the node: systemctl status wings; journalctl -u wings -n 50"}; then try again`,
  });
}

/**
 * One request under the panel's policy (core/request.ts): a 429 waits and repeats (nothing was done); a connection
 * never made repeats; other 5xx, timeouts and resets repeat only when `idempotent` (a repeated restart is not
 * harmless). Returns the body of a 2xx answer.
 */
async function request(
  link: PanelLink,
  method: "get" | "post" | "put",
  path: string,
  json: unknown,
  idempotent: boolean,
): Promise<string> {
  const { policy, clock, http } = link;
  let answer: Awaited<ReturnType<typeof exchange>>;
  try {
    answer = await exchange(policy, {
      where: route(link, method, path),
      idempotent,
      clock,
      send: (signal) => http(`${link.base}${path}`, { method, signal, ...(json === undefined ? {} : { json }) }),
    });
  } catch (error) {
    if (!(error instanceof RequestFailure)) throw error;
    const timeout = error.kind === "timeout";
    throw new PanelError(timeout ? "timeout" : "network", error.message, {
      where: link.url,
      hint: timeout ? "the panel is slow or overloaded; try again" : policy.unreachableHint,
      cause: error,
    });
  }
  const { response, errorText } = answer;
  if (response.ok) return response.text();
  // A proxy's page is not the panel's envelope: toError then goes by the status alone.
  const envelope = errorBody(panelEnvelopeSchema, errorText) ?? {};
  const retryAfter = answer.waitTooLongMs ?? (waitHintMs(response.headers, clock.now()) || undefined);
  throw toError(link, response.status, envelope, retryAfter, path);
}

async function readDetails(link: PanelLink): Promise<ServerDetails> {
  const { attributes: a, meta } = parseBody(serverSchema, await request(link, "get", "", undefined, true), {
    service: "the panel",
    route: route(link, "get", ""),
  });
  return {
    identifier: a.identifier,
    uuid: a.uuid,
    name: a.name,
    node: a.node,
    status: a.status,
    isSuspended: a.is_suspended,
    isInstalling: a.is_installing,
    isTransferring: a.is_transferring,
    memoryLimitBytes: a.limits && a.limits.memory > 0 ? a.limits.memory * 1024 * 1024 : undefined,
    dockerImage: a.docker_image,
    permissions: meta?.user_permissions,
  };
}

async function readStartup(link: PanelLink): Promise<Startup> {
  const { meta } = parseBody(startupSchema, await request(link, "get", "/startup", undefined, true), {
    service: "the panel",
    route: route(link, "get", "/startup"),
  });
  // A list (an egg from before named images) is its images under their own names.
  const images = Array.isArray(meta.docker_images)
    ? Object.fromEntries(meta.docker_images.map((image) => [image, image]))
    : meta.docker_images;
  return {
    dockerImages: images,
    startupCommand: meta.startup_command,
    rawStartupCommand: meta.raw_startup_command,
  };
}

async function setDockerImage(link: PanelLink, image: string): Promise<void> {
  // Setting the same image twice does the same thing: safe to repeat.
  await request(link, "put", DOCKER_IMAGE_PATH, { docker_image: image }, true);
}

async function readResources(link: PanelLink): Promise<Resources> {
  const body = parseBody(statsSchema, await request(link, "get", "/resources", undefined, true), {
    service: "the panel",
    route: route(link, "get", "/resources"),
  });
  const a = body.attributes;
  return {
    state: a.current_state === "stopped" ? "offline" : a.current_state,
    isSuspended: a.is_suspended,
    uptimeMs: a.resources.uptime,
    memoryBytes: a.resources.memory_bytes,
    cpuPercent: a.resources.cpu_absolute,
    diskBytes: a.resources.disk_bytes,
  };
}

async function power(link: PanelLink, signal: PowerSignal): Promise<void> {
  // start, stop and kill are idempotent; a repeated restart would restart twice.
  await request(link, "post", "/power", { signal }, signal !== "restart");
}

async function command(link: PanelLink, line: string): Promise<void> {
  await request(link, "post", "/command", { command: line }, false);
}

async function waitForState(
  link: PanelLink,
  states: PowerState | PowerState[],
  { timeoutMs, pollMs = 5000, signal }: WaitOptions,
): Promise<Resources> {
  const { clock } = link;
  const wanted = Array.isArray(states) ? states : [states];
  const deadline = clock.now() + timeoutMs;
  let interval = Math.min(pollMs, 250);
  for (;;) {
    const now = await readResources(link);
    if (wanted.includes(now.state)) return now;
    if (clock.now() >= deadline) {
      throw new PanelError(
        "timeout",
        `the server did not become ${wanted.join(" or ")} in ${Math.round(timeoutMs / 1000)} s (it is ${now.state})`,
        {
          where: link.where,
          hint: "look at the panel console and the server's latest.log",
        },
      );
    }
    // Quick looks first (a stop often takes a second or two), then every pollMs.
    await clock.sleep(Math.min(interval, Math.max(1, deadline - clock.now())), signal);
    interval = Math.min(pollMs, interval * 2);
  }
}

export function createPanelClient(options: PanelClientOptions): PanelClient {
  const link = connect(options);
  return {
    details: () => readDetails(link),
    resources: () => readResources(link),
    power: (signal) => power(link, signal),
    command: (line) => command(link, line),
    waitForState: (states, wait) => waitForState(link, states, wait),
    startup: () => readStartup(link),
    setDockerImage: (image) => setDockerImage(link, image),
  };
}
