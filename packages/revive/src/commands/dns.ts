import { createCloudflare, type DnsChange, dnsNames, syncDns } from "@mcops/cloud/cloudflare";
import { createDigitalOcean, publicIpv4 } from "@mcops/cloud/digitalocean";
import { findDroplet, serverKey } from "@mcops/cloud/snapshots";
import { ExitCode, UsageError } from "@mcops/core/errors";
import type { ToolContext } from "@mcops/core/tool";
import type { DnsSettings } from "../settings.ts";

export interface DnsOptions {
  ip?: string | undefined;
  dryRun?: boolean | undefined;
}

/** One line per name: what it pointed at, what it points at now, and any other A record removed. */
export function describeChanges(changes: DnsChange[]): string {
  return changes
    .map((c) => {
      const line =
        c.change === "none"
          ? `  ${c.name} (${c.role}): ${c.after}, already right`
          : `  ${c.name} (${c.role}): ${c.before} → ${c.after}${c.change === "create" ? " (new record)" : ""}`;
      return c.removed.length
        ? `${line}; other A record${c.removed.length === 1 ? "" : "s"} removed: ${c.removed.join(", ")}`
        : line;
    })
    .join("\n");
}

/** Records written (updated or created) and removed. */
function dnsWrites(changes: DnsChange[]): number {
  return changes.reduce((n, c) => n + (c.change === "none" ? 0 : 1) + c.removed.length, 0);
}

/** The running game VM's public address, for `revive dns` without `--ip`: its fields are read here, not before. */
async function vmAddress(ctx: Pick<ToolContext, "clock">, settings: DnsSettings): Promise<string> {
  const env = settings.vm();
  const digitalocean = createDigitalOcean({
    base: env.DIGITALOCEAN_API_URL,
    token: env.DIGITALOCEAN_ACCESS_TOKEN,
    clock: ctx.clock,
  });
  const droplet = await findDroplet(digitalocean, env, serverKey(env.SERVER_ADDR));
  const ip = droplet && publicIpv4(droplet);
  if (!ip) {
    throw new UsageError("there is no running droplet to take the address from", {
      hint: "give it by hand: revive dns --ip 203.0.113.7 (or revive, to bring the VM back)",
    });
  }
  return ip;
}

/**
 * `revive dns`: point the panel name (proxied) and the play name (DNS only) at the VM, or at `--ip`. `env` is what
 * dnsSettings (settings.ts) read before the run, with the loader of the VM's fields for when no --ip is given.
 */
export async function runDns(
  ctx: Pick<ToolContext, "clock" | "stdout">,
  env: DnsSettings,
  options: DnsOptions,
): Promise<number> {
  const names = dnsNames(env.SERVER_ADDR, env.PANEL_URL);
  const ip = options.ip || (await vmAddress(ctx, env));
  const cf = createCloudflare({ base: env.CLOUDFLARE_API_URL, token: env.CLOUDFLARE_API_TOKEN, clock: ctx.clock });
  const changes = await syncDns(cf, names, ip, options.dryRun ?? false);
  const writes = dnsWrites(changes);
  const heading = options.dryRun
    ? "DNS plan (nothing changed, --dry-run)"
    : writes
      ? `DNS updated (${writes} record${writes === 1 ? "" : "s"})`
      : "DNS already right, nothing written";
  ctx.stdout.write(`${heading}:\n${describeChanges(changes)}\n`);
  return ExitCode.ok;
}
