#!/usr/bin/env node
import { isMainThread, workerData } from "node:worker_threads";
import { command, dryRunOption, runTool } from "@mcops/core/cli";
import { flagOptions, pickFields } from "@mcops/core/config";
import { ExitCode } from "@mcops/core/errors";
import { LOG_FILES } from "@mcops/core/log-events";
// The fields give the flags below (their declaration is shared with jar-download: see settings.ts).
import { fields } from "@mcops/world/settings";
import { CHECKER, serveChecks } from "./drill/check-worker.ts";
import { waitOption } from "./lock-wait.ts";
import { repositoryFolderSettings, repositorySettings } from "./settings.ts";

// The drill's checker threads run this same file (one executable): a thread marked as a checker serves checks only.
if (!isMainThread && (workerData as { role?: string } | undefined)?.role === CHECKER) serveChecks();
else
  await runTool({
    name: "backup",
    usage: `$0 [command]\n\nEncrypted, deduplicated restic backups of the world (drop-in for backup.sh). Reads /etc/mc-backup/backup.env; logs to /var/log/${LOG_FILES.backup}.`,
    commands: [
      command({
        command: "$0",
        describe: "take one backup now: save-off, save-all flush, restic backup, save-on, retention",
        // One options() call: yargs' types of the options before a flagOptions() (keyed by any string) would be lost.
        options: (y) =>
          y.options({
            wait: waitOption,
            ...flagOptions(pickFields(fields, ["BACKUP_EXTRA_PATHS", "BACKUP_EXCLUDE"])),
          }),
        // The loader reports a broken backup.env or webhook.env in the backup log and the channel, as a failed run.
        settings: async (ctx, args) => (await import("./commands/run.ts")).loadOrReport(ctx, args),
        run: async (ctx, args, configured) =>
          (await import("./commands/run.ts")).runBackup(ctx, { wait: args.wait }, configured),
      }),
      command({
        command: "restore [snapshot]",
        describe:
          "put a snapshot's world back, or one player, an area or a dimension of it (what it replaces is kept aside, and snapshotted first)",
        options: (y) =>
          y
            .options({
              player: {
                type: "string",
                describe:
                  "only this player's data, advancements and statistics (name or UUID); the server keeps running",
              },
              area: {
                type: "string",
                // One value even when it starts with a minus: --area -100,-100,600,250.
                requiresArg: true,
                describe:
                  "only the chunks covering X1,Z1,X2,Z2 (block coordinates) in region/, entities/, poi/; every other chunk stays as it is",
              },
              "whole-regions": {
                type: "boolean",
                default: false,
                describe: "with --area: restore the region files the area touches whole (512-block squares)",
              },
              dimension: {
                type: "string",
                describe: "overworld, nether or end: that dimension whole, or the dimension of --area",
              },
              tag: { type: "string", describe: "the newest snapshot with this tag, e.g. pre-upgrade" },
              backup: {
                type: "boolean",
                default: true,
                describe: "snapshot the current world first, tagged pre-restore (--no-backup skips it)",
              },
              "room-check": {
                type: "boolean",
                default: true,
                describe:
                  "check first that the volume's disk has room for the snapshot's files (--no-room-check skips it: restic 0.15 and later restore a sparse file sparse)",
              },
              "dry-run": dryRunOption("print the plan and the entries, change nothing"),
              start: {
                type: "boolean",
                default: true,
                describe: "start the server afterwards (--no-start leaves it stopped)",
              },
              ...flagOptions(pickFields(fields, ["BACKUP_OWNER"])),
              wait: waitOption,
            })
            .positional("snapshot", {
              type: "string",
              describe: "snapshot id, or latest (the default for --player, --area and --dimension)",
            }),
        settings: async (ctx, args) => (await import("./commands/restore.ts")).loadRestore(ctx, restoreOptions(args)),
        run: async (ctx, args, request) =>
          (await import("./commands/restore.ts")).runRestore(ctx, restoreOptions(args), request),
      }),
      command({
        command: "snapshots",
        describe: "list the snapshots",
        options: (y) => y.option("json", { type: "boolean", default: false, describe: "restic's JSON" }),
        settings: repositorySettings,
        run: async (ctx, args, settings) =>
          (await import("./commands/snapshots.ts")).runSnapshots(ctx, { json: args.json }, settings),
      }),
      command({
        command: "drill [snapshot]",
        describe: "prove a snapshot restores into a world the game can open (a scratch copy, removed afterwards)",
        options: (y) =>
          y
            .options({
              scratch: {
                type: "string",
                describe: "make the scratch copy in this directory (default: the state directory's drill/)",
              },
              budget: {
                type: "string",
                default: "10m",
                describe: "check every chunk for this long, then a sample of the rest",
              },
              wait: waitOption,
              "room-check": {
                type: "boolean",
                default: true,
                describe:
                  "check first that the scratch directory's disk has room for the world (--no-room-check skips it: restic 0.15 and later restore a sparse file sparse)",
              },
              "list-dimensions": {
                type: "boolean",
                default: false,
                describe: "only list the snapshot's dimensions, by the names restore --dimension takes",
              },
              ...flagOptions(pickFields(fields, ["DRILL_MEMORY"])),
            })
            .positional("snapshot", { type: "string", describe: "snapshot id (default: the newest of this server)" }),
        settings: async (ctx, args) => (await import("./commands/drill.ts")).loadDrill(ctx, args),
        run: async (ctx, args, drill) => {
          const { listDimensions, runDrill } = await import("./commands/drill.ts");
          if (drill.list) return listDimensions(ctx, { snapshot: args.snapshot }, drill.settings);
          const options = {
            snapshot: args.snapshot,
            scratch: args.scratch,
            budgetMs: drill.budgetMs,
            wait: args.wait,
            roomCheck: args.roomCheck,
          };
          return runDrill(ctx, options, drill.settings);
        },
      }),
      command({
        command: "status",
        describe: `the newest backup, the last drill, the repository; exit ${ExitCode.failed} when the newest is older than BACKUP_MAX_AGE`,
        options: (y) => y.option("json", { type: "boolean", default: false, describe: "for scripts" }),
        settings: repositorySettings,
        run: async (ctx, args, settings) =>
          (await import("./commands/status.ts")).runStatus(ctx, { json: args.json }, settings),
      }),
      command({
        command: "check",
        describe: "check the repository's integrity",
        options: (y) =>
          y.option("read-data-subset", {
            type: "string",
            describe: "also read this part of the data, e.g. 10% or 1/5",
          }),
        settings: repositorySettings,
        run: async (ctx, args, settings) =>
          (await import("./commands/check.ts")).runCheck(ctx, { readDataSubset: args.readDataSubset }, settings),
      }),
      command({
        command: "prune",
        describe: "forced clean: forget --keep-last 1 --keep-daily 30 --keep-weekly 12 --prune",
        settings: repositorySettings,
        run: async (ctx, _args, settings) => (await import("./commands/prune.ts")).runPrune(ctx, settings),
      }),
      command({
        command: "repository-folder",
        describe:
          "print the folder on this disk that RESTIC_REPOSITORY writes to (nothing for a remote one); install.sh uses it",
        settings: repositoryFolderSettings,
        run: async (ctx, _args, settings) =>
          (await import("./commands/repository-folder.ts")).runRepositoryFolder(ctx, settings),
      }),
      command({
        command: "init",
        describe: "create the repository (refuses to touch an existing one)",
        settings: repositorySettings,
        run: async (ctx, _args, settings) => (await import("./commands/init.ts")).runInit(ctx, settings),
      }),
    ],
  });

/** restore's options from its command line (latest is the default snapshot of a part of the world). */
function restoreOptions(args: {
  snapshot?: string | undefined;
  tag?: string | undefined;
  player?: string | undefined;
  area?: string | undefined;
  dimension?: string | undefined;
  wholeRegions: boolean;
  backup: boolean;
  roomCheck: boolean;
  dryRun: boolean;
  start: boolean;
  wait: boolean;
}) {
  return {
    snapshot: args.snapshot ?? ((args.player ?? args.area ?? args.dimension) && !args.tag ? "latest" : undefined),
    tag: args.tag,
    player: args.player,
    area: args.area,
    dimension: args.dimension,
    wholeRegions: args.wholeRegions,
    backup: args.backup,
    roomCheck: args.roomCheck,
    dryRun: args.dryRun,
    noStart: args.start === false,
    wait: args.wait,
    args,
  };
}
