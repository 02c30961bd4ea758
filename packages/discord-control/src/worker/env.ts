/**
 * The Worker's bindings. What wrangler.toml declares (the Durable Object namespace, the settings in [vars]) and the
 * secrets named in worker-secret-names.env are typed by `wrangler types` in env.generated.d.ts (`npm run worker-types`
 * writes it; test/worker-types.test.ts fails when it is out of date): none of them is written a second time here.
 * The secrets' values are put with `wrangler secret put NAME`, never in wrangler.toml or the repository.
 * An intersection, not `extends`: a name of Unset that an operator adds to wrangler.toml is then simply always set.
 */
export type Env = WranglerEnv & Unset;

/**
 * What a deployment may leave unset, which `wrangler types` cannot declare: it types every name in wrangler.toml's
 * [vars] and in worker-secret-names.env as always set (an empty string where one is left empty), and these are absent
 * unless an operator or a test sets them (`wrangler.toml` or `--var`), the code taking its default then.
 */
interface Unset {
  /**
   * A secret: a channel webhook (Discord: channel settings → Integrations → Webhooks; the one the VM posts to): where
   * a run's outcome goes when the reply that asked for it can no longer be edited (Discord keeps its token 15 minutes).
   */
  OUTCOME_WEBHOOK_URL?: string;
  /** The game VM by name (else the one droplet with DROPLET_TAG), and the region to create it in. */
  DROPLET_NAME?: string;
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
