import {
  baseUrlSchema,
  dockerSocketField,
  durationSchema,
  fail,
  field,
  fromBackupEnv,
  ownerField,
  panelFields,
  pickFields,
  setting,
  worldDirField,
} from "@mcops/core/config";
import { ConfigError, UsageError } from "@mcops/core/errors";
import type { ToolContext } from "@mcops/core/tool";
import { type Settings as BackupSettings, loadSettings as loadBackupSettings } from "@mcops/world/settings";
import * as z from "zod/mini";
import { type Bases, INSTALLER_TYPES } from "./service.ts";
import type { ServerType } from "./sources.ts";

/** The operator's contact for the User-Agent: an e-mail address or a web address. */
const contactSchema = field((value, ctx) => {
  if (!/^(https?:\/\/\S+|[^@\s]+@[^@\s]+\.[^@\s]+)$/.test(value)) {
    fail(ctx, "must be an e-mail address or an https:// address", "e.g. admin@example.com");
  }
});

/**
 * What jar-download reads from backup.env (docs/system.md 2.1, packages/jar-download/README.md), each field declared
 * once: a field's flag (which wins over the file and the environment) is the option of that name in cli.ts. They are
 * read in groups, as the run needs them (see loadSettings); within a group, their order is the order in which problems
 * are reported.
 */
export const fields = {
  /** PaperMC's download service (Paper, Folia), docs/system.md 4.3's {download_base}; a mirror, or a stand-in in tests. */
  DOWNLOAD_BASE: setting(baseUrlSchema, { default: "https://fill.papermc.io" }),
  /** PurpurMC's API. */
  PURPUR_BASE: setting(baseUrlSchema, { default: "https://api.purpurmc.org" }),
  /** Mojang's version manifest (vanilla). */
  MOJANG_BASE: setting(baseUrlSchema, { default: "https://piston-meta.mojang.com" }),
  /** Fabric meta. */
  FABRIC_BASE: setting(baseUrlSchema, { default: "https://meta.fabricmc.net" }),
  /** NeoForge's maven (a Reposilite instance): its maven-metadata.xml and installers are under /releases. */
  NEOFORGE_BASE: setting(baseUrlSchema, { default: "https://maven.neoforged.net" }),
  /** Forge's maven: maven-metadata.xml and the installers. */
  FORGE_BASE: setting(baseUrlSchema, { default: "https://maven.minecraftforge.net" }),
  /** Forge's files host: promotions_slim.json (the recommended and latest build of each game version). */
  FORGE_FILES_BASE: setting(baseUrlSchema, { default: "https://files.minecraftforge.net" }),
  /** Quilt meta v3: game and loader versions, the installer versions. */
  QUILT_META_BASE: setting(baseUrlSchema, { default: "https://meta.quiltmc.org" }),
  /** Quilt's release repository, where the installer jar is (and its checksums). */
  QUILT_MAVEN_BASE: setting(baseUrlSchema, { default: "https://maven.quiltmc.org/repository/release" }),
  /** Modrinth's API (a modpack's versions, for --modrinth). */
  MODRINTH_API_BASE: setting(baseUrlSchema, { default: "https://api.modrinth.com" }),
  /**
   * Where the addresses on cdn.modrinth.com are fetched from (a pack names them; a mirror, or a stand-in in tests). A
   * pack's other hosts (github.com, raw.githubusercontent.com, gitlab.com) are fetched where they are.
   */
  MODRINTH_CDN_BASE: setting(baseUrlSchema, { default: "https://cdn.modrinth.com" }),
  /** The operator's contact, put into the User-Agent as PaperMC asks of every client. */
  DOWNLOAD_CONTACT: setting(z.optional(contactSchema)),
  /** The server's data volume, where server.jar lives. */
  WORLD_DIR: {
    ...worldDirField,
    flag: { name: "dir", describe: "the server's volume (default WORLD_DIR from backup.env)" },
  },
  ...panelFields,
  /** Owner of the installed server.jar (default 988:988, docs/system.md 2.6). */
  BACKUP_OWNER: {
    ...ownerField,
    flag: { name: "owner", describe: `uid:gid for server.jar (default BACKUP_OWNER, else ${ownerField.default})` },
  },
  /** Wings' Docker: a loader's installer (Forge, NeoForge) runs in the server's own image there. */
  DOCKER_SOCKET: dockerSocketField,
  /**
   * How long a loader's installer may run: it downloads the loader's libraries and Mojang's server (about 100 MiB for
   * NeoForge 1.21.1), minutes on a slow line.
   */
  INSTALLER_TIMEOUT: setting(durationSchema, { default: "15m" }),
  /**
   * The Docker network the installer's container joins: it downloads the loader's libraries, so it needs one that
   * reaches the internet. Docker's default `bridge` does on a node set up as Pterodactyl's docs say; Wings' own
   * network (`pterodactyl_nw`, Wings' config.yml docker.network.name) does too, as Wings' install containers use it
   * (pterodactyl/wings server/install.go: NetworkMode from docker.network.mode). `none` for an installer that needs
   * nothing. A name as Docker takes one (daemon/names: [a-zA-Z0-9][a-zA-Z0-9_.-]*), never `container:…`.
   */
  INSTALLER_NETWORK: setting(
    field((value, ctx) => {
      if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$/.test(value)) {
        fail(ctx, "is not a Docker network's name", "use bridge (Docker's default), pterodactyl_nw (Wings') or none");
      }
    }),
    { default: "bridge" },
  ),
};

/** Where the services are and who asks: every run reads these. */
const SERVICE_FIELDS = [
  "DOWNLOAD_BASE",
  "PURPUR_BASE",
  "MOJANG_BASE",
  "FABRIC_BASE",
  "NEOFORGE_BASE",
  "FORGE_BASE",
  "FORGE_FILES_BASE",
  "QUILT_META_BASE",
  "QUILT_MAVEN_BASE",
  "MODRINTH_API_BASE",
  "MODRINTH_CDN_BASE",
  "DOWNLOAD_CONTACT",
] as const;
/** The panel and the owner of the jar: only a run that installs reads these. */
const CONTROL_FIELDS = ["CONTROL_URL", "CONTROL_KEY", "SERVER_ID", "BACKUP_OWNER"] as const;
/** Where and how long a loader's installer runs: only a run that installs one reads these. */
const INSTALLER_FIELDS = ["DOCKER_SOCKET", "INSTALLER_TIMEOUT", "INSTALLER_NETWORK"] as const;

/** Where the panel is and the key to it. */
type Panel = { url: string; key: string; serverId: string };

export interface Settings {
  bases: Bases;
  /** Modrinth's API, and its CDN's addresses rewritten to MODRINTH_CDN_BASE when that is not the real one. */
  modrinth: { api: string; hostMap: Record<string, string> };
  contact: string | undefined;
  /** The server's volume; not read for --list. */
  worldDir: string | undefined;
  /** The panel and the jar's owner; not read for --list or --dry-run. */
  control: (Panel & { owner: { uid: number; gid: number } }) | undefined;
  /** Docker's socket (undefined: off), the installer's time limit and network; read only when a loader is installed. */
  installer: { socket: string | undefined; timeoutMs: number; network: string } | undefined;
  /**
   * The panel whose image the Java a version needs is compared with: an install's (`control`); for --dry-run the one
   * backup.env names, if it names one whole and well (a dry run needs none: its image is then not checked).
   */
  panel: Panel | undefined;
  /**
   * backup's settings for the pre-upgrade snapshot of the volume `dir`. A loader, not a value: the run reads them
   * only once level.dat has been checked (a downgrade is refused before a problem with backup.env is said) and the
   * volume holds a world to snapshot (a first install needs none), and not at all for --dry-run or --no-backup.
   */
  backup: (dir: string) => BackupSettings;
}

/**
 * What the run needs, read before anything is asked of the network, so that a configuration error comes first: the
 * services always, then (unless it is --list) WORLD_DIR, then (unless --list or --dry-run) the panel's fields and
 * BACKUP_OWNER, then (for a loader or a pack) the installer's; --dry-run reads the panel only if backup.env has it.
 * backup's settings are read later, when the run asks (`backup`). `args` is the parsed command line (--dir, --owner).
 */
export function loadSettings(
  ctx: Pick<ToolContext, "paths" | "env">,
  run: { type: ServerType; list: boolean; dryRun: boolean; args: Record<string, unknown>; pack?: boolean },
): Settings {
  const from = { paths: ctx.paths, env: ctx.env, args: run.args };
  const service = fromBackupEnv(pickFields(fields, SERVICE_FIELDS), from);
  if ((run.type === "paper" || run.type === "folia") && !service.DOWNLOAD_CONTACT) {
    // PaperMC's downloads API asks every client to name a contact (an address or e-mail) in its User-Agent and may
    // refuse or block those that do not: no request to PaperMC leaves without one.
    throw new ConfigError("DOWNLOAD_CONTACT is not set: PaperMC asks every client for a contact in its User-Agent", {
      where: service.file,
      hint: `add DOWNLOAD_CONTACT=<your e-mail or web address> to ${service.file}`,
    });
  }
  const volume = run.list ? undefined : fromBackupEnv(pickFields(fields, ["WORLD_DIR"]), from);
  const control = run.list || run.dryRun ? undefined : fromBackupEnv(pickFields(fields, CONTROL_FIELDS), from);
  const installer =
    control && (run.pack || (INSTALLER_TYPES as readonly string[]).includes(run.type))
      ? fromBackupEnv(pickFields(fields, INSTALLER_FIELDS), from)
      : undefined;
  // A dry run's panel is read leniently here, not when its image line is made: a read that cannot fail says the same.
  const panel = control
    ? { url: control.CONTROL_URL, key: control.CONTROL_KEY, serverId: control.SERVER_ID }
    : run.dryRun && !run.list
      ? namedPanel(from)
      : undefined;
  return {
    bases: {
      paper: service.DOWNLOAD_BASE,
      purpur: service.PURPUR_BASE,
      mojang: service.MOJANG_BASE,
      fabric: service.FABRIC_BASE,
      neoforge: service.NEOFORGE_BASE,
      forge: service.FORGE_BASE,
      forgeFiles: service.FORGE_FILES_BASE,
      quilt: service.QUILT_META_BASE,
      quiltMaven: service.QUILT_MAVEN_BASE,
    },
    modrinth: {
      api: service.MODRINTH_API_BASE,
      hostMap:
        service.MODRINTH_CDN_BASE === "https://cdn.modrinth.com"
          ? {}
          : { "https://cdn.modrinth.com": service.MODRINTH_CDN_BASE },
    },
    contact: service.DOWNLOAD_CONTACT,
    worldDir: volume?.WORLD_DIR,
    control: control && {
      url: control.CONTROL_URL,
      key: control.CONTROL_KEY,
      serverId: control.SERVER_ID,
      owner: control.BACKUP_OWNER,
    },
    installer: installer && {
      socket: installer.DOCKER_SOCKET,
      timeoutMs: installer.INSTALLER_TIMEOUT,
      network: installer.INSTALLER_NETWORK,
    },
    panel,
    backup: (dir) => backupSettingsFor(ctx, dir),
  };
}

/** The panel, for --dry-run's image line: read when backup.env has it (a dry run needs none); else not checked. */
function namedPanel(from: Parameters<typeof fromBackupEnv>[1]): Panel | undefined {
  try {
    const panel = fromBackupEnv(pickFields(fields, ["CONTROL_URL", "CONTROL_KEY", "SERVER_ID"]), from);
    return { url: panel.CONTROL_URL, key: panel.CONTROL_KEY, serverId: panel.SERVER_ID };
  } catch (error) {
    if (error instanceof ConfigError || error instanceof UsageError) return undefined;
    throw error;
  }
}

/**
 * The backup's settings (backup.env's restic fields), for the pre-upgrade snapshot, WORLD_DIR being the volume
 * jar-download works on: a problem with them is said before anything is done, with the way to go without.
 */
function backupSettingsFor(ctx: Pick<ToolContext, "paths" | "env">, dir: string): BackupSettings {
  try {
    return { ...loadBackupSettings(ctx), WORLD_DIR: dir };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(`${error.message} (the pre-upgrade snapshot needs backup's settings)`, {
      where: error.where,
      hint: `${error.hint ? `${error.hint}; or ` : ""}install without a pre-upgrade snapshot: --no-backup`,
    });
  }
}
