import { KEEP_SNAPSHOTS_DEFAULT } from "@mcops/cloud/keep";
import { envFilePath, type LocalFiles } from "@mcops/cloud/local-env";
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
import { UsageError } from "@mcops/core/errors";
import { parseDuration } from "@mcops/core/format";
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
const VM_FIELDS = [
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

/** What revive reads: the VM's fields and Cloudflare's (it repoints DNS). */
const REVIVE_FIELDS = [...VM_FIELDS, "CLOUDFLARE_API_TOKEN", "CLOUDFLARE_API_URL"] as const;
/** What hibernate reads: the VM's fields, the last backup's SSH key and user, how many snapshots to keep. */
const HIBERNATE_FIELDS = [...VM_FIELDS, "SSH_KEY", "SSH_USER", "KEEP_SNAPSHOTS"] as const;
/** What `revive dns` reads: Cloudflare's fields and the names it points. */
const DNS_FIELDS = ["CLOUDFLARE_API_TOKEN", "SERVER_ADDR", "PANEL_URL", "CLOUDFLARE_API_URL"] as const;
/** What `revive dns` without --ip reads to find the running VM's address. */
const VM_ADDRESS_FIELDS = [
  "DIGITALOCEAN_ACCESS_TOKEN",
  "SERVER_ADDR",
  "DROPLET_NAME",
  "DROPLET_TAG",
  "DIGITALOCEAN_API_URL",
] as const;

/**
 * The named fields from the local `.env` (mode 600; `--config`, else MCOPS_ENV_FILE, else ./.env) and the environment
 * (which wins); the first missing or wrong one, in the order named, is one line saying where.
 */
function loadLocalSettings<K extends Field>(
  ctx: LocalFiles,
  names: readonly K[],
): Values<Pick<typeof fields, K>> & { file: string } {
  const file = envFilePath(ctx);
  return loadSettings(pickFields(fields, names), {
    file,
    env: ctx.env,
    missingHint: `add {name}=... to ${file} (copy .env.example)`,
  });
}

/**
 * `revive`'s settings: the .env's fields and `--wait`. The wait is read first: a wrong one is said before anything in
 * the .env, as it was when revive read its .env itself.
 */
export function reviveSettings(ctx: LocalFiles, wait: string) {
  const waitMs = parseDuration(wait);
  return { ...loadLocalSettings(ctx, REVIVE_FIELDS), waitMs };
}

export type ReviveSettings = ReturnType<typeof reviveSettings>;

/**
 * `hibernate`'s settings: the .env's fields, with `--keep` over KEEP_SNAPSHOTS. `--keep` is checked first, before the
 * .env is read: a wrong number here would delete the snapshots it was meant to keep.
 */
export function hibernateSettings(ctx: LocalFiles, keep: number | undefined) {
  if (keep !== undefined && !(Number.isInteger(keep) && keep >= 1)) {
    throw new UsageError(`--keep ${keep} is not a number of snapshots to keep`, {
      hint: "give a whole number of 1 or more, e.g. --keep 2",
    });
  }
  const settings = loadLocalSettings(ctx, HIBERNATE_FIELDS);
  return { ...settings, KEEP_SNAPSHOTS: keep ?? settings.KEEP_SNAPSHOTS };
}

export type HibernateSettings = ReturnType<typeof hibernateSettings>;

/**
 * `revive dns`'s settings: Cloudflare's fields, and `vm`, the loader of what finding the VM's address takes. `vm` is
 * called only without --ip, and only once the names are checked (dnsNames): with --ip the DigitalOcean token is not
 * needed, and a wrong name is said before a missing token, as it was when `revive dns` read its .env itself.
 */
export function dnsSettings(ctx: LocalFiles) {
  return { ...loadLocalSettings(ctx, DNS_FIELDS), vm: () => loadLocalSettings(ctx, VM_ADDRESS_FIELDS) };
}

export type DnsSettings = ReturnType<typeof dnsSettings>;
