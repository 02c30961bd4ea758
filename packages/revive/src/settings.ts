import { KEEP_SNAPSHOTS_DEFAULT } from "@mcops/cloud/keep";
import {
  absolutePathSchema,
  baseUrlSchema,
  clientKeySchema,
  countSchema,
  field,
  hostSchema,
  loadSettings,
  panelUrlSchema,
  pickFields,
  serverIdSchema,
  setting,
  type Values,
  webhookUrlSchema,
} from "@mcops/core/config";
import * as z from "zod/mini";

/**
 * The local `.env` of the operator's own computer (docs/system.md 2.3), read by revive and hibernate only. The token
 * names are the ones the vendors' own tools use (doctl, wrangler/terraform).
 */
export const fields = {
  DIGITALOCEAN_ACCESS_TOKEN: setting(field(), { secret: true }),
  CLOUDFLARE_API_TOKEN: setting(field(), { secret: true }),
  CONTROL_KEY: setting(clientKeySchema, { secret: true }),
  /** The play host, maybe with its port. */
  SERVER_ADDR: setting(hostSchema),
  PANEL_URL: setting(panelUrlSchema),
  SERVER_ID: setting(z.optional(serverIdSchema)),
  WEBHOOK_URL: setting(z.optional(webhookUrlSchema)),
  /** The game VM: by name, else the server's tag, else DROPLET_TAG (default mcops) without a server's tag. */
  DROPLET_NAME: setting(z.optional(field())),
  DROPLET_TAG: setting(z.optional(field())),
  /** The passphrase-free automation key for the last backup over SSH (docs/system.md 1). */
  SSH_KEY: setting(z.optional(absolutePathSchema)),
  SSH_USER: setting(z.optional(field())),
  /** How many of this server's snapshots to keep (default KEEP_SNAPSHOTS_DEFAULT). */
  KEEP_SNAPSHOTS: setting(countSchema, { default: String(KEEP_SNAPSHOTS_DEFAULT) }),
  /** Where to reach the panel's API and the game when that is not PANEL_URL and SERVER_ADDR (a private network, tests). */
  CONTROL_URL: setting(z.optional(panelUrlSchema)),
  GAME_ADDRESS: setting(z.optional(hostSchema)),
  DIGITALOCEAN_API_URL: setting(z.optional(baseUrlSchema)),
  CLOUDFLARE_API_URL: setting(z.optional(baseUrlSchema)),
};

export type Field = keyof typeof fields;

/** The fields both hibernate and revive read. */
export const VM_FIELDS = [
  "DIGITALOCEAN_ACCESS_TOKEN",
  "CONTROL_KEY",
  "SERVER_ADDR",
  "PANEL_URL",
  "SERVER_ID",
  "WEBHOOK_URL",
  "DROPLET_NAME",
  "DROPLET_TAG",
  "CONTROL_URL",
  "GAME_ADDRESS",
  "DIGITALOCEAN_API_URL",
] as const satisfies readonly Field[];

/**
 * The named fields from the local `.env` (mode 600) and the environment (which wins); the first missing or wrong one,
 * in the order named, is one line saying where.
 */
export function loadLocalSettings<K extends Field>(
  file: string,
  env: NodeJS.ProcessEnv,
  names: readonly K[],
): Values<Pick<typeof fields, K>> & { file: string } {
  return loadSettings(pickFields(fields, names), {
    file,
    env,
    missingHint: `add {name}=... to ${file} (copy .env.example)`,
  });
}
