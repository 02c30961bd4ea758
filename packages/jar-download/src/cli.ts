#!/usr/bin/env node
import { command, dryRunOption, runTool } from "@mcops/core/cli";
import { flagOptions, pickFields } from "@mcops/core/config";
import { fields } from "./settings.ts";

await runTool({
  name: "jar-download",
  usage:
    "$0 VERSION [--type paper|folia|purpur|vanilla|fabric] [--build N|latest] [--stop] [--no-backup] [--ignore-world-version]\n$0 VERSION --type neoforge|forge|quilt [--loader V] [--channel beta] [--stop] [--dry-run]\n$0 --mrpack FILE|URL [--stop] [--dry-run]\n$0 [VERSION] --modrinth PROJECT [--pack-version V] [--stop] [--dry-run]\n$0 [VERSION] --list [--type TYPE]\n$0 --rollback\n\nFetches the server jar of a game version, verifies its size and checksum, and installs it as server.jar in the server's volume (WORLD_DIR), chowned to 988:988, the old one kept as server.jar.previous (docs/system.md 4.3). Refused while the server runs, unless --stop; refused for a version older than the one that last saved the world, and when level.dat cannot be read or says a data version no game writes (--ignore-world-version goes on without it). The world is snapshotted first (tagged pre-upgrade); --rollback puts server.jar.previous back. NeoForge, Forge and Quilt are installed by their own installers, run in the server's image through Docker (DOCKER_SOCKET). When the version needs a newer Java than the server's image, the image is switched with the swap to the egg's smallest one that is enough (exit 2 before anything is done when the egg has none), and --rollback switches it back. A Modrinth modpack (--mrpack, --modrinth) is read and checked whole before anything is written (every path, address and size), its files downloaded and checked against their sha512 and sha1, its overrides extracted, and installed with the loader it names (NeoForge, Forge and Quilt by their installers, Fabric as server.jar); the folders it ships replace those in the volume, kept aside for --rollback.",
  commands: [
    command({
      command: "$0 [VERSION]",
      describe: false,
      // One options() call: yargs' types of the options before a flagOptions() (keyed by any string) would be lost.
      options: (y) =>
        y.positional("VERSION", { type: "string", describe: "game version, e.g. 1.21.4" }).options({
          type: {
            type: "string",
            describe: "paper (the default), folia, purpur, vanilla, fabric; neoforge, forge, quilt by their installer",
          },
          mrpack: { type: "string", describe: "install a Modrinth modpack (.mrpack) from a file or an address" },
          modrinth: {
            type: "string",
            describe: "install a Modrinth modpack project's version (its slug or id), through Modrinth's API",
          },
          "pack-version": {
            type: "string",
            describe: "with --modrinth: the pack's version number or id (default its newest release)",
          },
          build: { type: "string", describe: "build number (Fabric: loader version); default the newest stable" },
          loader: {
            type: "string",
            describe: "NeoForge, Forge, Quilt: the loader version (default the newest stable; Forge: its promotion)",
          },
          channel: {
            type: "string",
            describe:
              "Paper/Folia: least stable channel taken for the newest build (stable, beta, alpha); NeoForge/Quilt: beta takes a beta loader",
          },
          list: { type: "boolean", default: false, describe: "list the versions, or the builds of VERSION" },
          "dry-run": dryRunOption("say what would be installed, do nothing"),
          stop: { type: "boolean", default: false, describe: "stop a running server for the swap, then start it" },
          backup: {
            type: "boolean",
            default: true,
            describe: "snapshot the world first, tagged pre-upgrade (--no-backup skips it)",
          },
          rollback: {
            type: "boolean",
            default: false,
            describe: "put server.jar.previous back (stopping and starting a running server)",
          },
          "ignore-world-version": {
            type: "boolean",
            default: false,
            describe:
              "go on when level.dat cannot be read or says a version no game writes: no downgrade check (the world is still snapshotted first)",
          },
          // --dir and --owner: WORLD_DIR's and BACKUP_OWNER's flags, declared with the fields in settings.ts.
          ...flagOptions(pickFields(fields, ["WORLD_DIR", "BACKUP_OWNER"])),
        }),
      settings: async (ctx, args) => (await import("./jar-download.ts")).loadRequest(ctx, jarOptions(args)),
      run: async (ctx, args, request) =>
        (await import("./jar-download.ts")).runJarDownload(ctx, jarOptions(args), request),
    }),
  ],
  // A signal stops the download (its temporary file is removed on the way out); whatever else is in progress (a wait
  // for the panel) gets a few seconds, then the process ends with 130.
  windDownMs: 3000,
});

/** The run's options from its command line. */
function jarOptions(args: {
  VERSION?: string | undefined;
  type?: string | undefined;
  build?: string | undefined;
  loader?: string | undefined;
  channel?: string | undefined;
  list: boolean;
  dryRun: boolean;
  stop: boolean;
  backup: boolean;
  rollback: boolean;
  ignoreWorldVersion: boolean;
  mrpack?: string | undefined;
  modrinth?: string | undefined;
  packVersion?: string | undefined;
}) {
  return {
    version: args.VERSION,
    type: args.type,
    build: args.build,
    loader: args.loader,
    channel: args.channel,
    list: args.list,
    dryRun: args.dryRun,
    stop: args.stop,
    backup: args.backup,
    rollback: args.rollback,
    ignoreWorldVersion: args.ignoreWorldVersion,
    mrpack: args.mrpack,
    modrinth: args.modrinth,
    packVersion: args.packVersion,
    args,
  };
}
