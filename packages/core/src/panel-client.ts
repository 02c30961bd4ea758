import ky, { type KyResponse } from "ky";
import { type Clock, systemClock } from "./clock.ts";
import { JobError, type McopsErrorOptions } from "./errors.ts";
import { redact } from "./secrets.ts";
import { USER_AGENT } from "./version.ts";

/**
 * The Pterodactyl client API (SPEC 4.1, prefix /api/client) as the tools need it: power signals, console commands,
 * live resources and the server record. Errors come back as `PanelError` with advice; the key never appears in one.
 */
export type PowerSignal = "start" | "stop" | "restart" | "kill";
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
}

export type PanelErrorKind =
  | "auth"
  | "forbidden"
  | "not-found"
  | "conflict"
  | "validation"
  | "rate-limited"
  | "server-offline"
  | "daemon-unreachable"
  /** A 502/503/504 or Cloudflare's 520–524 that the panel itself did not write: its proxy, web server or PHP. */
  | "panel-unavailable"
  | "panel-error"
  | "network"
  | "timeout";

export class PanelError extends JobError {
  readonly kind: PanelErrorKind;
  readonly status: number | undefined;
  readonly detail: string | undefined;

  constructor(
    kind: PanelErrorKind,
    message: string,
    options: McopsErrorOptions & { status?: number; detail?: string },
  ) {
    super(redact(message), options);
    this.kind = kind;
    this.status = options.status;
    this.detail = options.detail;
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

export interface WaitOptions {
  timeoutMs: number;
  /** The longest pause between polls (default 5 s); the first pauses are shorter (250 ms, doubling). The panel caches
   * resources for 20 s, so polling faster than that mostly re-reads its cache. */
  pollMs?: number;
  signal?: AbortSignal;
  /** Called with every state seen. */
  onPoll?: (resources: Resources) => void;
}

export interface PanelClient {
  details(): Promise<ServerDetails>;
  resources(): Promise<Resources>;
  power(signal: PowerSignal): Promise<void>;
  command(line: string): Promise<void>;
  /** Polls resources until the state is one of `states`; PanelError kind "timeout" when it never gets there. */
  waitForState(states: PowerState | PowerState[], options: WaitOptions): Promise<Resources>;
}

interface Envelope {
  errors?: Array<{ code?: string; status?: string; detail?: string; meta?: { source_field?: string; rule?: string } }>;
}

/** The longest Retry-After a request waits out before it gives up with the panel's answer. */
const LONGEST_RETRY_AFTER_MS = 2 * 60_000;

const NETWORK_CODES_NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

export function createPanelClient(options: PanelClientOptions): PanelClient {
  const { url, key, serverId, timeoutMs = 15_000, maxAttempts = 4, backoffMs = 1000, clock = systemClock } = options;
  const base = `${url.replace(/\/+$/, "")}/api/client/servers/${encodeURIComponent(serverId)}`;
  const where = `${url.replace(/\/+$/, "")} server ${serverId}`;
  const http = ky.create({
    timeout: timeoutMs,
    retry: 0,
    throwHttpErrors: false,
    headers: {
      authorization: `Bearer ${key}`,
      accept: "application/json",
      "user-agent": USER_AGENT,
    },
  });

  function toError(status: number, envelope: Envelope, retryAfter: string | null, path: string): PanelError {
    const first = envelope.errors?.[0];
    // Pterodactyl answers its own errors in its envelope; a 502 page from nginx, PHP-FPM or Cloudflare has none.
    const fromPanel = Array.isArray(envelope.errors) && envelope.errors.length > 0;
    const upstream = [502, 503, 504, 520, 521, 522, 523, 524].includes(status);
    if (upstream && !fromPanel) {
      return new PanelError(
        "panel-unavailable",
        `the panel did not answer (${status} from its proxy on ${path || "/"})`,
        {
          where,
          status,
          detail: undefined,
          hint: "it may be restarting: try again in a minute; if it lasts, check the panel's web server and PHP-FPM",
        },
      );
    }
    const detail = first?.detail;
    const said = `${status}${first?.code ? ` ${first.code}` : ""}${detail ? `: ${detail}` : ""}`;
    const opts = { where, status, detail };
    switch (status) {
      case 401:
        return new PanelError("auth", `the panel refused the API key (${said})`, {
          ...opts,
          hint: "check CONTROL_KEY: a client API key (ptlc_...) from Account → API Credentials, not revoked",
        });
      case 403:
        return new PanelError("forbidden", `the API key may not do this on server ${serverId} (${said})`, {
          ...opts,
          hint: "use a client key of a user who owns the server or has the needed subuser permission",
        });
      case 404:
        return new PanelError("not-found", `the panel has no server ${serverId} for this key (${said})`, {
          ...opts,
          hint: "check SERVER_ID: the first 8 characters of the server's UUID, as in the panel address /server/<id>",
        });
      case 409:
        return new PanelError("conflict", `the panel refuses while the server is busy (${said})`, {
          ...opts,
          hint: "wait until the install or transfer has finished, or unsuspend the server in the admin area",
        });
      case 422:
        return new PanelError(
          "validation",
          `the panel rejected the request (${said}${first?.meta?.source_field ? `, field ${first.meta.source_field}` : ""})`,
          {
            ...opts,
            hint: "this is a bug in mcops; run with MCOPS_DEBUG=1 and report it",
          },
        );
      case 429:
        return new PanelError("rate-limited", `the panel is rate limiting this key (${said})`, {
          ...opts,
          hint: `try again in ${retryAfter ?? "a few"} seconds; another program may be using the same key`,
        });
      // The panel's own 502 comes only from the console route: the server is not running (Wings refuses commands).
      case 502:
        if (path !== "/command") {
          return new PanelError("panel-unavailable", `the panel did not answer (${said} on ${path || "/"})`, {
            ...opts,
            hint: "it may be restarting: try again in a minute",
          });
        }
        return new PanelError("server-offline", `the game server is not running (${said})`, {
          ...opts,
          hint: "start it first; console commands need a running server",
        });
      case 504:
        return new PanelError("daemon-unreachable", `the panel cannot reach the Wings daemon (${said})`, {
          ...opts,
          hint: "check Wings on the VM: systemctl status wings; journalctl -u wings -n 50",
        });
      default:
        return new PanelError("panel-error", `the panel answered ${said}`, {
          ...opts,
          hint: "check the panel's logs (the web server error log and the queue worker's journal)",
        });
    }
  }

  /**
   * One request with the retry rules: 429 always waits and repeats (nothing was done); a connection that was never
   * made repeats; other 5xx, timeouts and resets repeat only when `idempotent` (a repeated restart is not harmless).
   */
  async function request(
    method: "get" | "post",
    path: string,
    json: unknown,
    idempotent: boolean,
  ): Promise<KyResponse> {
    let attempt = 0;
    for (;;) {
      attempt++;
      const last = attempt >= maxAttempts;
      let response: KyResponse;
      try {
        response = await http(`${base}${path}`, { method, ...(json === undefined ? {} : { json }) });
      } catch (error) {
        const code = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
        const notSent = NETWORK_CODES_NOT_SENT.has(code);
        if (!last && (notSent || idempotent)) {
          await clock.sleep(backoffMs * 2 ** (attempt - 1));
          continue;
        }
        const timeout = code === "TimeoutError";
        throw new PanelError(timeout ? "timeout" : "network", `cannot reach the panel (${code})`, {
          where: url,
          hint: timeout ? "the panel is slow or overloaded; try again" : "check CONTROL_URL and that the panel is up",
          cause: error,
        });
      }
      if (response.ok) return response;
      const retryAfter = response.headers.get("retry-after");
      const envelope = (await response.json().catch(() => ({}))) as Envelope;
      // A 502 on a read is the proxy's (the panel writes 502 only for a command): repeated like any other 5xx.
      const retriable = response.status === 429 || response.status === 503 || (idempotent && response.status >= 500);
      if (!last && retriable) {
        const wait = response.status === 429 && retryAfter ? Number(retryAfter) * 1000 : backoffMs * 2 ** (attempt - 1);
        // Pterodactyl's limits are per minute: a longer wait is someone else's limit, not one to sleep through.
        if (wait > LONGEST_RETRY_AFTER_MS) throw toError(response.status, envelope, retryAfter, path);
        await clock.sleep(Number.isFinite(wait) ? wait : backoffMs);
        continue;
      }
      throw toError(response.status, envelope, retryAfter, path);
    }
  }

  async function resources(): Promise<Resources> {
    const body = (await (await request("get", "/resources", undefined, true)).json()) as {
      attributes?: {
        current_state?: string;
        is_suspended?: boolean;
        resources?: { memory_bytes?: number; cpu_absolute?: number; disk_bytes?: number; uptime?: number };
      };
    };
    const a = body.attributes ?? {};
    const r = a.resources ?? {};
    const state =
      (["offline", "starting", "running", "stopping"] as const).find((s) => s === a.current_state) ?? "offline";
    return {
      state,
      isSuspended: a.is_suspended ?? false,
      uptimeMs: r.uptime ?? 0,
      memoryBytes: r.memory_bytes ?? 0,
      cpuPercent: r.cpu_absolute ?? 0,
      diskBytes: r.disk_bytes ?? 0,
    };
  }

  return {
    async details() {
      const body = (await (await request("get", "", undefined, true)).json()) as {
        attributes?: Record<string, unknown>;
      };
      const a = body.attributes ?? {};
      return {
        identifier: String(a.identifier ?? serverId),
        uuid: String(a.uuid ?? ""),
        name: String(a.name ?? ""),
        node: String(a.node ?? ""),
        status: (a.status as string | null) ?? null,
        isSuspended: Boolean(a.is_suspended),
        isInstalling: Boolean(a.is_installing),
        isTransferring: Boolean(a.is_transferring),
      };
    },
    resources,
    async power(signal) {
      // start, stop and kill are idempotent; a repeated restart would restart twice.
      await request("post", "/power", { signal }, signal !== "restart");
    },
    async command(line) {
      await request("post", "/command", { command: line }, false);
    },
    async waitForState(states, { timeoutMs, pollMs = 5000, signal, onPoll }) {
      const wanted = Array.isArray(states) ? states : [states];
      const deadline = clock.now() + timeoutMs;
      let interval = Math.min(pollMs, 250);
      for (;;) {
        const now = await resources();
        onPoll?.(now);
        if (wanted.includes(now.state)) return now;
        if (clock.now() >= deadline) {
          throw new PanelError(
            "timeout",
            `the server did not become ${wanted.join(" or ")} in ${Math.round(timeoutMs / 1000)} s (it is ${now.state})`,
            {
              where,
              hint: "look at the panel console and the server's latest.log",
            },
          );
        }
        // Quick looks first (a stop often takes a second or two), then every pollMs.
        await clock.sleep(Math.min(interval, Math.max(1, deadline - clock.now())), signal);
        interval = Math.min(pollMs, interval * 2);
      }
    },
  };
}
