import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { DiscordStandIn, DownloadStandIn, PanelStandIn } from "@mcops/testkit";

/** The jar the volume holds before a test installs another. */
export const OLD = Buffer.from("PK\u0003\u0004 the jar that was there");

/**
 * What an installed machine has for jar-download: backup.env (mode 600) with the panel, the volume, the download
 * stand-in's bases, a contact and `extra` fields; webhook.env (mode 600) pointing at the Discord stand-in.
 */
export function writeConfig(
  env: NodeJS.ProcessEnv,
  setup: { panel: PanelStandIn; volume: string; stand: DownloadStandIn; discord: DiscordStandIn; extra?: string[] },
): void {
  const { panel, volume, stand, discord } = setup;
  const etc = env.MCOPS_CONFIG_DIR as string;
  mkdirSync(etc, { recursive: true });
  const fields = [
    `CONTROL_URL=${panel.url}`,
    `CONTROL_KEY=${panel.apiKey}`,
    `SERVER_ID=${panel.server.identifier}`,
    `WORLD_DIR=${volume}`,
    `DOWNLOAD_BASE=${stand.bases.paper}`,
    `PURPUR_BASE=${stand.bases.purpur}`,
    `MOJANG_BASE=${stand.bases.mojang}`,
    `FABRIC_BASE=${stand.bases.fabric}`,
    `NEOFORGE_BASE=${stand.bases.neoforge}`,
    `FORGE_BASE=${stand.bases.forge}`,
    `FORGE_FILES_BASE=${stand.bases.forgeFiles}`,
    `QUILT_META_BASE=${stand.bases.quilt}`,
    `QUILT_MAVEN_BASE=${stand.bases.quiltMaven}`,
    "DOWNLOAD_CONTACT=ops@example.com",
    ...(setup.extra ?? []),
  ];
  for (const [name, text] of [
    ["backup.env", `${fields.join("\n")}\n`],
    ["webhook.env", `WEBHOOK_URL=${discord.webhookUrl()}\n`],
  ] as const) {
    writeFileSync(join(etc, name), text, { mode: 0o600 });
    chmodSync(join(etc, name), 0o600);
  }
}
