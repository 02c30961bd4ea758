import type { Clock } from "@mcops/core/clock";
import { JobError } from "@mcops/core/errors";
import { formatDuration, formatSpan } from "@mcops/core/format";
import { POLICIES, RequestFailure } from "@mcops/core/http/request";
import * as z from "zod/mini";
import { type ApiOptions, createApi } from "./api.ts";

/**
 * The parts of DigitalOcean's API v2 hibernate and revive read (digitalocean/openapi specification/resources/droplets,
 * actions, snapshots, ssh_keys); errors are DigitalOcean's `{id, message}`. A shape that differs is one line.
 */
export const dropletSchema = z.object({
  id: z.number(),
  name: z.string(),
  status: z.enum(["new", "active", "off", "archive"]),
  size_slug: z.string(),
  size: z.optional(z.object({ slug: z.string(), price_monthly: z.optional(z.number()) })),
  region: z.object({ slug: z.string() }),
  disk: z.optional(z.number()),
  tags: z.array(z.string()),
  networks: z.object({ v4: z.array(z.object({ ip_address: z.string(), type: z.string() })) }),
});
export type Droplet = z.infer<typeof dropletSchema>;

const actionSchema = z.object({
  id: z.number(),
  status: z.enum(["in-progress", "completed", "errored"]),
  type: z.string(),
  started_at: z.optional(z.nullable(z.string())),
});
type Action = z.infer<typeof actionSchema>;

export const snapshotSchema = z.object({
  id: z.string(),
  name: z.string(),
  created_at: z.string(),
  resource_id: z.string(),
  resource_type: z.string(),
  regions: z.array(z.string()),
  size_gigabytes: z.number(),
  min_disk_size: z.optional(z.number()),
});
export type Snapshot = z.infer<typeof snapshotSchema>;

export const sshKeySchema = z.object({ id: z.number() });
/** GET /account: the token works. */
export const accountSchema = z.object({ account: z.object({ status: z.string() }) });
/** A droplet's details, and a droplet create's answer. */
export const dropletBodySchema = z.object({ droplet: dropletSchema });
/** An action's details, and a droplet action's answer. */
export const actionBodySchema = z.object({ action: actionSchema });

/** A page of a list: its items under `key`, and meta.total. */
export const page = <S extends z.ZodMiniType>(key: string, item: S) =>
  z.object({ [key]: z.array(item), meta: z.optional(z.object({ total: z.optional(z.number()) })) });

const DO_BASE = "https://api.digitalocean.com";
/** DigitalOcean's price of snapshot storage, USD per GB-month. */
export const SNAPSHOT_PRICE_PER_GB = 0.06;

export function publicIpv4(droplet: Droplet): string | undefined {
  return droplet.networks.v4.find((n) => n.type === "public")?.ip_address;
}

type Request = ReturnType<typeof createApi>;

/** DigitalOcean answered with an error status: which, so that a caller can tell "not done" from "maybe done". */
export class DigitalOceanError extends JobError {
  readonly status: number;
  constructor(status: number, message: string, options: { where?: string; hint?: string }) {
    super(message, options);
    this.status = status;
  }
}

/**
 * A write whose outcome is not known: DigitalOcean answered 5xx, or did not answer at all (a reset, a timeout). It may
 * have been done: a create is looked for (revive-steps.ts) before it is asked again.
 */
export function outcomeUnknown(error: unknown): boolean {
  if (error instanceof DigitalOceanError) return error.status >= 500;
  return error instanceof RequestFailure && error.kind !== "interrupted";
}

/** DigitalOcean's `{id, message}` error in one line, with what to do for a refused token, a scope, a rate limit. */
function explainAnswer(base: string): ApiOptions["explain"] {
  return (status, body, method, path, waitMs) => {
    const b = (body ?? {}) as { id?: string; message?: string };
    const said = `${status}${b.id ? ` ${b.id}` : ""}${b.message ? `: ${b.message}` : ""}`;
    const where = `${method} ${base}${path}`;
    if (status === 401) {
      return new DigitalOceanError(status, `DigitalOcean refused the token (${said})`, {
        where: "DIGITALOCEAN_ACCESS_TOKEN",
        hint: "create a token with read and write scope (API → Tokens) and put it in .env; tokens can expire",
      });
    }
    if (status === 403) {
      return new DigitalOceanError(status, `DigitalOcean does not allow this token to do that (${said})`, {
        where,
        hint: "the token needs write scope",
      });
    }
    if (status === 429) {
      return new DigitalOceanError(status, `DigitalOcean is rate limiting this token (${said})`, {
        where,
        // A wait too long to sleep through is the hour's (5,000 requests): until its oldest request expires.
        hint: `wait ${waitMs === undefined ? "a minute" : `about ${formatSpan(waitMs)} (the token's 5,000 requests an hour are used up)`}, then run the same command again: it carries on where it stopped`,
      });
    }
    return new DigitalOceanError(status, `DigitalOcean answered ${said}`, {
      where,
      hint: "run the same command again: it carries on where it stopped",
    });
  };
}

/** Every item of a list, page by page (200 a page, 50 pages at most). */
function lister(request: Request) {
  return async function all<S extends z.ZodMiniType>(path: string, key: string, item: S): Promise<Array<z.infer<S>>> {
    const items: Array<z.infer<S>> = [];
    for (let number = 1; number <= 50; number++) {
      const sep = path.includes("?") ? "&" : "?";
      const body = (await request("get", `${path}${sep}page=${number}&per_page=200`, page(key, item))) as Record<
        string,
        unknown
      > & { meta?: { total?: number } };
      const chunk = body[key] as Array<z.infer<S>>;
      items.push(...chunk);
      if (chunk.length < 200 || items.length >= (body.meta?.total ?? 0)) break;
    }
    return items;
  };
}

/** What is read: the account, droplets, actions, snapshots, SSH keys. */
function reads(request: Request) {
  const all = lister(request);
  return {
    async verify(): Promise<void> {
      await request("get", "/account", accountSchema);
    },
    droplets(tag?: string): Promise<Droplet[]> {
      return all(tag ? `/droplets?tag_name=${encodeURIComponent(tag)}` : "/droplets", "droplets", dropletSchema);
    },
    async droplet(id: number): Promise<Droplet | undefined> {
      try {
        return (await request("get", `/droplets/${id}`, dropletBodySchema)).droplet;
      } catch (error) {
        if (error instanceof DigitalOceanError && error.status === 404) return undefined;
        throw error;
      }
    },
    async getAction(id: number): Promise<Action> {
      return (await request("get", `/actions/${id}`, actionBodySchema)).action;
    },
    /** The droplet's 20 newest actions (DigitalOcean lists them newest first): one page, never the whole history. */
    async recentActions(dropletId: number): Promise<Action[]> {
      const body = await request(
        "get",
        `/droplets/${dropletId}/actions?page=1&per_page=20`,
        page("actions", actionSchema),
      );
      return (body as { actions: Action[] }).actions;
    },
    snapshots(): Promise<Snapshot[]> {
      return all("/snapshots?resource_type=droplet", "snapshots", snapshotSchema);
    },
    async sshKeyIds(): Promise<number[]> {
      return (await all("/account/keys", "ssh_keys", sshKeySchema)).map((k) => k.id);
    },
  };
}

/** What is changed: droplets created and destroyed, droplet actions, snapshots deleted. */
function writes(request: Request) {
  return {
    async createDroplet(spec: {
      name: string;
      region: string;
      size: string;
      image: number;
      ssh_keys: Array<number | string>;
      tags: string[];
    }): Promise<Droplet> {
      return (await request("post", "/droplets", dropletBodySchema, { ...spec, monitoring: true })).droplet;
    },
    async deleteDroplet(id: number): Promise<void> {
      await request("delete", `/droplets/${id}`, undefined);
    },
    async action(dropletId: number, type: string, extra: Record<string, string> = {}): Promise<Action> {
      return (await request("post", `/droplets/${dropletId}/actions`, actionBodySchema, { type, ...extra })).action;
    },
    async deleteSnapshot(id: string): Promise<void> {
      await request("delete", `/snapshots/${id}`, undefined);
    },
  };
}

/** Polling: an action until it ends, a droplet until it is as wanted. */
function waits(api: ReturnType<typeof reads>, clock: Clock) {
  return {
    /** Polls an action until it is no longer in progress, or the time is up; the last state seen. */
    async waitAction(id: number, timeoutMs: number, pollMs: number): Promise<Action> {
      const deadline = clock.now() + timeoutMs;
      for (;;) {
        const action = await api.getAction(id);
        if (action.status !== "in-progress") return action;
        if (clock.now() >= deadline) return action;
        await clock.sleep(pollMs);
      }
    },
    /** Polls the droplet until `test` holds; throws when it is gone or the time is up. */
    async waitDroplet(
      id: number,
      test: (droplet: Droplet) => boolean,
      timeoutMs: number,
      pollMs: number,
      what: string,
    ): Promise<Droplet> {
      const deadline = clock.now() + timeoutMs;
      for (;;) {
        const droplet = await api.droplet(id);
        if (!droplet) throw new JobError(`droplet ${id} is gone`, { hint: "look at the DigitalOcean control panel" });
        if (test(droplet)) return droplet;
        if (clock.now() >= deadline) {
          throw new JobError(`droplet ${droplet.name} did not get ${what} within ${formatDuration(timeoutMs)}`, {
            hint: "look at the DigitalOcean control panel, then run the same command again",
          });
        }
        await clock.sleep(pollMs);
      }
    },
  };
}

export function createDigitalOcean(options: { base?: string | undefined; token: string; clock: Clock }) {
  const base = `${options.base ?? DO_BASE}/v2`;
  const request = createApi({
    base,
    token: options.token,
    clock: options.clock,
    policy: POLICIES.digitalocean,
    explain: explainAnswer(base),
  });
  const api = reads(request);
  return { ...api, ...writes(request), ...waits(api, options.clock) };
}

export type DigitalOcean = ReturnType<typeof createDigitalOcean>;
