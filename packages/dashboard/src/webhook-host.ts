import { UsageError } from "@mcops/core/errors";

/**
 * The hosts a webhook address saved on the page (and the test message) may point at: Discord's, nothing else. A
 * signed-in admin could otherwise make the dashboard (root, on the VM) post to any address it can reach, the cloud's
 * metadata service or a service on the loopback address included. `DASHBOARD_ALLOW_ANY_WEBHOOK=1` in the dashboard's
 * environment lifts the rule (a self-hosted Discord-compatible service, or tests with a stand-in on 127.0.0.1); core's
 * schema (https, or http on the loopback address; /api/webhooks/<id>/<token>) still applies then.
 */
const DISCORD_WEBHOOK_HOSTS: readonly string[] = [
  "discord.com",
  "ptb.discord.com",
  "canary.discord.com",
  "discordapp.com",
  "ptb.discordapp.com",
  "canary.discordapp.com",
];

export const ALLOW_ANY_WEBHOOK = "DASHBOARD_ALLOW_ANY_WEBHOOK";

/** The environment lifts the host rule: DASHBOARD_ALLOW_ANY_WEBHOOK=1. */
export function allowsAnyWebhookHost(env: NodeJS.ProcessEnv): boolean {
  return env[ALLOW_ANY_WEBHOOK] === "1";
}

/**
 * Throws a UsageError (one line for the page) unless `value` is an https address on one of DISCORD_WEBHOOK_HOSTS, on
 * the default port, without user or password. The path is core's webhookUrlSchema's business, checked before this.
 */
export function checkWebhookHost(value: string): void {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const ok =
    url !== undefined &&
    url.protocol === "https:" &&
    url.port === "" &&
    url.username === "" &&
    url.password === "" &&
    DISCORD_WEBHOOK_HOSTS.includes(url.hostname);
  if (ok) return;
  throw new UsageError(
    "the webhook address must be https:// on discord.com or discordapp.com (or their ptb. and canary. sub-domains)",
    {
      where: "webhook address",
      hint: `copy it from Discord; to allow any host, start the dashboard with ${ALLOW_ANY_WEBHOOK}=1`,
    },
  );
}
