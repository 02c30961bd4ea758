#!/usr/bin/env node
import { createCli, runMain } from "@mcops/core/cli";
import { JobError } from "@mcops/core/errors";
import { hideBin } from "yargs/helpers";

/** How long a second SIGINT or SIGTERM waits for save-on before the run ends anyway. */
const SECOND_SIGNAL_MS = 5000;

await runMain("backup", async () => {
  const args = await createCli(
    "backup",
    hideBin(process.argv),
    "$0 [command]\n\nEncrypted, deduplicated restic backups of the world (drop-in for backup.sh). Reads /etc/mc-backup/backup.env; logs to /var/log/mc-backup.log.",
  )
    .command("$0", "take one backup now: save-off, save-all flush, restic backup, save-on, retention", (y) =>
      y
        .option("wait", {
          type: "boolean",
          default: false,
          describe: "wait (up to 2 h) for a running backup instead of exiting 75",
        })
        .option("extra-path", {
          type: "string",
          array: true,
          describe: "also back up this path (relative to WORLD_DIR), e.g. plugins",
        })
        .option("exclude", {
          type: "string",
          array: true,
          describe: "restic --exclude pattern (session.lock is always left out)",
        }),
    )
    .command("restore <snapshot>", "put a snapshot's world back (the current one is kept aside)", (y) =>
      y
        .positional("snapshot", { type: "string", describe: "snapshot id, or latest" })
        .option("dry-run", { type: "boolean", default: false, describe: "print the plan, change nothing" })
        .option("start", {
          type: "boolean",
          default: true,
          describe: "start the server afterwards (--no-start leaves it stopped)",
        })
        .option("owner", { type: "string", describe: "uid:gid for the restored files (default 988:988)" })
        .option("wait", {
          type: "boolean",
          default: false,
          describe: "wait for a running backup instead of exiting 75",
        }),
    )
    .command("snapshots", "list the snapshots", (y) =>
      y.option("json", { type: "boolean", default: false, describe: "restic's JSON" }),
    )
    .command("check", "check the repository's integrity", (y) =>
      y.option("read-data-subset", { type: "string", describe: "also read this part of the data, e.g. 10% or 1/5" }),
    )
    .command("prune", "forced clean: forget --keep-last 1 --keep-daily 30 --keep-weekly 12 --prune")
    .command("init", "create the repository (refuses to touch an existing one)")
    .parseAsync();

  const [{ runBackup, core }, { runRestore }, maintenance] = await Promise.all([
    import("./backup.ts"),
    import("./restore.ts"),
    import("./maintenance.ts"),
  ]);
  const controller = new AbortController();
  const atExit = new Set<() => Promise<void>>();
  let endNow: (error: Error) => void = () => {};
  const ended = new Promise<never>((_, reject) => {
    endNow = reject;
  });
  let signals = 0;
  for (const name of ["SIGINT", "SIGTERM"] as const) {
    process.on(name, () => {
      // The first signal stops restic and lets the job turn autosave back on and report. A second one ends the run
      // without waiting for the job, but only after what it still owes (save-on) is done, or SECOND_SIGNAL_MS passed.
      if (++signals === 1) return controller.abort(name);
      if (signals > 2) return;
      const bound = new Promise((resolve) => setTimeout(resolve, SECOND_SIGNAL_MS));
      void Promise.race([Promise.allSettled([...atExit].map((fn) => fn())), bound]).then(() =>
        endNow(new JobError(`interrupted by ${String(controller.signal.reason)}`)),
      );
    });
  }
  const ctx = {
    paths: core.resolvePaths(),
    env: process.env,
    clock: core.systemClock,
    stdout: process.stdout,
    stderr: process.stderr,
    runner: core.zxRunner,
    signal: controller.signal,
    atExit,
  };
  const command = String(args._[0] ?? "");
  const job = (): Promise<number> => {
    switch (command) {
      case "restore":
        return runRestore(ctx, {
          snapshot: String(args.snapshot),
          dryRun: args.dryRun as boolean,
          noStart: args.start === false,
          owner: args.owner as string | undefined,
          wait: args.wait as boolean,
        });
      case "snapshots":
        return maintenance.runSnapshots(ctx, { json: args.json as boolean });
      case "check":
        return maintenance.runCheck(ctx, { readDataSubset: args.readDataSubset as string | undefined });
      case "prune":
        return maintenance.runPrune(ctx);
      case "init":
        return maintenance.runInit(ctx);
      default:
        return runBackup(ctx, {
          wait: args.wait as boolean,
          extraPath: args.extraPath as string[] | undefined,
          exclude: args.exclude as string[] | undefined,
        });
    }
  };
  // Whichever ends first: the job, or a second signal (runMain then prints the first signal's line and exits 1).
  return Promise.race([job(), ended]);
});
