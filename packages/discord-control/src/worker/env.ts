/**
 * The Worker's bindings (wrangler.toml): the Durable Object namespace, the settings in [vars], and the secrets put
 * with `wrangler secret put` (never in wrangler.toml or the repository).
 */
export interface Env {
  /**
   * The Durable Object namespace of wrangler.toml's `class_name = "ServerControl"`: typed with that class where it is
   * used (index.ts), so that this file, which every part of the Worker reads, imports none of them.
   */
  CONTROL: DurableObjectNamespace;
  /** Secrets. */
  DISCORD_PUBLIC_KEY: string;
  DISCORD_APPLICATION_ID: string;
  VM_SECRET: string;
  DIGITALOCEAN_ACCESS_TOKEN: string;
  CLOUDFLARE_API_TOKEN: string;
  /**
   * A channel webhook (Discord: channel settings → Integrations → Webhooks; the one the VM posts to): where a run's
   * outcome goes when the reply that asked for it can no longer be edited (Discord keeps its token 15 minutes).
   */
  OUTCOME_WEBHOOK_URL?: string;
  /** [vars]: the play host (maybe with its port) and the panel's address, as in the operator's .env. */
  SERVER_ADDR: string;
  PANEL_URL: string;
  /** The group's Discord server (guild) id: interactions from anywhere else (a DM, another guild) are refused. */
  GUILD_ID?: string;
  /** Role ids: who may /start, who may /stop (admins may /start too). */
  START_ROLE?: string;
  ADMIN_ROLE?: string;
  DROPLET_NAME?: string;
  DROPLET_TAG?: string;
  /** The VM to create when no hibernation of this Worker remembers one (a VM hibernated with the local CLI). */
  DROPLET_SIZE?: string;
  DROPLET_REGION?: string;
  /** How often a run looks while it waits, ms (default 5000; tests make it short). */
  POLL_MS?: string;
  /** The first wait after an error, ms (default 15000, doubling up to 5 minutes; tests make it short). */
  RETRY_MS?: string;
  /** How long a /start the VM has not heard of holds off its hibernate request at most, ms (default 15 minutes). */
  START_HOLD_MS?: string;
  /** How long a reply follows a run, ms (default 14 minutes: Discord keeps a token 15; tests make it short). */
  REPLY_MS?: string;
  /** How many of this server's snapshots to keep after a hibernation (default 2). */
  KEEP_SNAPSHOTS?: string;
  /** The game's address when it is not SERVER_ADDR at the VM's new address (tests). */
  GAME_ADDRESS?: string;
  /** The vendors' API bases (default their real addresses; tests point them at the stand-ins). */
  DISCORD_API_URL?: string;
  DIGITALOCEAN_API_URL?: string;
  CLOUDFLARE_API_URL?: string;
}

export { DISCORD_API } from "../discord-api.ts";
