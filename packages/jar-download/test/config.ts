import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { DiscordStandIn, DownloadStandIn, ModrinthProjectSpec, PanelStandIn } from "@mcops/testkit";
import nbt from "prismarine-nbt";
import { expect } from "vitest";

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

/** The panel's Forge and NeoForge eggs' startup line: @unix_args.txt when the file is there, else -jar server.jar. */
export const FORGE_EGG_STARTUP =
  'java -Xms128M -XX:MaxRAMPercentage=95.0 -Dterminal.jline=false -Dterminal.ansi=true $( [[  ! -f unix_args.txt ]] && printf %s "-jar {{SERVER_JARFILE}}" || printf %s "@unix_args.txt" )';

/** A level.dat saying the world was saved by `name` (data version `dataVersion`). */
export function levelDat(dataVersion: number, name: string): Buffer {
  const level = nbt.comp({
    Data: nbt.comp({
      DataVersion: nbt.int(dataVersion),
      Version: nbt.comp({ Id: nbt.int(dataVersion), Name: nbt.string(name), Snapshot: nbt.byte(0) }),
    }),
  });
  return gzipSync(nbt.writeUncompressed(level as nbt.NBT, "big"));
}

/** Mods the Modrinth stand-in serves for the modpack tests: two Fabric ones for 1.21.4, a NeoForge one for 1.21.1. */
export function modProjects(): ModrinthProjectSpec[] {
  return [
    {
      id: "AANobbMI",
      slug: "sodium",
      versions: [
        {
          id: "V1000001",
          versionNumber: "0.6.0",
          gameVersions: ["1.21.4"],
          loaders: ["fabric"],
          files: [{ filename: "sodium.jar" }],
        },
      ],
    },
    {
      id: "P7dR8mSH",
      slug: "fabric-api",
      versions: [
        {
          id: "V2000002",
          versionNumber: "0.110.0",
          gameVersions: ["1.21.4"],
          loaders: ["fabric"],
          files: [{ filename: "fabric-api.jar" }, { filename: "notes.txt", bytes: Buffer.from("not a jar\n") }],
        },
      ],
    },
    {
      id: "NEOMOD01",
      slug: "create",
      versions: [
        {
          id: "V3000003",
          versionNumber: "6.0.0",
          gameVersions: ["1.21.1"],
          loaders: ["neoforge"],
          files: [{ filename: "create.jar" }],
        },
      ],
    },
  ];
}

/**
 * The Entrypoint of an installer's container: a shell that removes the bind's guard file (a name only jar-download
 * knows) and then execs the installer, its Cmd; the image's own ENTRYPOINT never runs.
 */
export const GUARDED_ENTRYPOINT = [
  "/bin/sh",
  "-c",
  expect.stringMatching(/^if \[ -f \/home\/container\/\.mcops-bound-[0-9a-f]{32} \] && rm -f /),
  "mcops-installer",
];
