import type { Clock } from "@mcops/core/clock";
import { JobError } from "@mcops/core/errors";
import { formatDuration } from "@mcops/core/format";
import { createApi } from "./api.ts";

/** The parts of DigitalOcean's API v2 hibernate and revive use; errors are DigitalOcean's `{id, message}`. */
export interface Droplet {
  id: number;
  name: string;
  status: "new" | "active" | "off" | "archive";
  size_slug: string;
  size?: { slug: string; price_monthly?: number };
  region: { slug: string };
  disk?: number;
  tags: string[];
  networks: { v4: Array<{ ip_address: string; type: string }> };
}

export interface Action {
  id: number;
  status: "in-progress" | "completed" | "errored";
  type: string;
}

export interface Snapshot {
  id: string;
  name: string;
  created_at: string;
  resource_id: string;
  resource_type: string;
  regions: string[];
  size_gigabytes: number;
  min_disk_size?: number;
}

export const DO_BASE = "https://api.digitalocean.com";
/** DigitalOcean's price of snapshot storage, USD per GB-month. */
export const SNAPSHOT_PRICE_PER_GB = 0.06;

export function publicIpv4(droplet: Droplet): string | undefined {
  return droplet.networks.v4.find((n) => n.type === "public")?.ip_address;
}

export function createDigitalOcean(options: { base?: string | undefined; token: string; clock: Clock }) {
  const base = `${options.base ?? DO_BASE}/v2`;
  const request = createApi({
    base,
    token: options.token,
    clock: options.clock,
    name: "DigitalOcean",
    explain(status, body, method, path) {
      const b = (body ?? {}) as { id?: string; message?: string };
      const said = `${status}${b.id ? ` ${b.id}` : ""}${b.message ? `: ${b.message}` : ""}`;
      const where = `${method} ${base}${path}`;
      if (status === 401) {
        return new JobError(`DigitalOcean refused the token (${said})`, {
          where: "DIGITALOCEAN_ACCESS_TOKEN",
          hint: "create a token with read and write scope (API → Tokens) and put it in .env; tokens can expire",
        });
      }
      if (status === 403) {
        return new JobError(`DigitalOcean does not allow this token to do that (${said})`, {
          where,
          hint: "the token needs write scope",
        });
      }
      if (status === 429) {
        return new JobError(`DigitalOcean is rate limiting this token (${said})`, {
          where,
          hint: "wait a minute, then run the same command again: it carries on where it stopped",
        });
      }
      return new JobError(`DigitalOcean answered ${said}`, {
        where,
        hint: "run the same command again: it carries on where it stopped",
      });
    },
  });

  async function all<T>(path: string, key: string): Promise<T[]> {
    const items: T[] = [];
    for (let page = 1; page <= 50; page++) {
      const sep = path.includes("?") ? "&" : "?";
      const body = await request<Record<string, unknown> & { meta?: { total?: number } }>(
        "get",
        `${path}${sep}page=${page}&per_page=200`,
      );
      const chunk = (body[key] ?? []) as T[];
      items.push(...chunk);
      if (chunk.length < 200 || items.length >= (body.meta?.total ?? 0)) break;
    }
    return items;
  }

  const api = {
    async verify(): Promise<void> {
      await request("get", "/account");
    },
    droplets(tag?: string): Promise<Droplet[]> {
      return all<Droplet>(tag ? `/droplets?tag_name=${encodeURIComponent(tag)}` : "/droplets", "droplets");
    },
    async droplet(id: number): Promise<Droplet | undefined> {
      try {
        return (await request<{ droplet: Droplet }>("get", `/droplets/${id}`)).droplet;
      } catch (error) {
        if (/answered 404/.test((error as Error).message)) return undefined;
        throw error;
      }
    },
    async createDroplet(spec: {
      name: string;
      region: string;
      size: string;
      image: number;
      ssh_keys: Array<number | string>;
      tags: string[];
    }): Promise<Droplet> {
      return (await request<{ droplet: Droplet }>("post", "/droplets", { ...spec, monitoring: true })).droplet;
    },
    async deleteDroplet(id: number): Promise<void> {
      await request("delete", `/droplets/${id}`);
    },
    async action(dropletId: number, type: string, extra: Record<string, string> = {}): Promise<Action> {
      return (await request<{ action: Action }>("post", `/droplets/${dropletId}/actions`, { type, ...extra })).action;
    },
    async getAction(id: number): Promise<Action> {
      return (await request<{ action: Action }>("get", `/actions/${id}`)).action;
    },
    /** Polls an action until it completes; undefined when it errored or did not finish in time. */
    async waitAction(id: number, timeoutMs: number, pollMs: number): Promise<Action> {
      const deadline = options.clock.now() + timeoutMs;
      for (;;) {
        const action = await api.getAction(id);
        if (action.status !== "in-progress") return action;
        if (options.clock.now() >= deadline) return action;
        await options.clock.sleep(pollMs);
      }
    },
    snapshots(): Promise<Snapshot[]> {
      return all<Snapshot>("/snapshots?resource_type=droplet", "snapshots");
    },
    async deleteSnapshot(id: string): Promise<void> {
      await request("delete", `/snapshots/${id}`);
    },
    async sshKeyIds(): Promise<number[]> {
      return (await all<{ id: number }>("/account/keys", "ssh_keys")).map((k) => k.id);
    },
    /** Polls the droplet until `test` holds; the last droplet seen otherwise. */
    async waitDroplet(
      id: number,
      test: (droplet: Droplet) => boolean,
      timeoutMs: number,
      pollMs: number,
      what: string,
    ): Promise<Droplet> {
      const deadline = options.clock.now() + timeoutMs;
      for (;;) {
        const droplet = await api.droplet(id);
        if (!droplet) throw new JobError(`droplet ${id} is gone`, { hint: "look at the DigitalOcean control panel" });
        if (test(droplet)) return droplet;
        if (options.clock.now() >= deadline) {
          throw new JobError(`droplet ${droplet.name} did not get ${what} within ${formatDuration(timeoutMs)}`, {
            hint: "look at the DigitalOcean control panel, then run the same command again",
          });
        }
        await options.clock.sleep(pollMs);
      }
    },
  };
  return api;
}

export type DigitalOcean = ReturnType<typeof createDigitalOcean>;
