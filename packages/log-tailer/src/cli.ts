#!/usr/bin/env node
import { createCli, runMain } from "@mcops/core/cli";
import { hideBin } from "yargs/helpers";

await runMain("log-tailer", async () => {
  const args = await createCli(
    "log-tailer",
    hideBin(process.argv),
    "$0 [command]\n\nFollows the game log and posts join, leave, death, start, stop and crash messages to the webhook (drop-in for log-tailer.py; runs as a service).",
  )
    .command("$0", "follow <WORLD_DIR>/logs/latest.log (from backup.env) until stopped", (y) =>
      y.option("file", { type: "string", describe: "follow this log instead" }).option("from-start", {
        type: "boolean",
        default: false,
        describe: "ignore the saved position: read the file from its beginning",
      }),
    )
    .command("scan <files..>", "print the events of whole log files as JSON lines; posts nothing", (y) =>
      y.positional("files", { type: "string", array: true, describe: "game log files" }),
    )
    .parseAsync();

  if (args._[0] === "scan") {
    const { runScan } = await import("./scan.ts");
    return runScan(args.files as string[], process.stdout);
  }
  const { runTailer, ...core } = await import("./tailer.ts");
  const controller = new AbortController();
  for (const name of ["SIGINT", "SIGTERM"] as const) process.once(name, () => controller.abort(name));
  return runTailer(
    {
      paths: core.resolvePaths(),
      env: process.env,
      clock: core.systemClock,
      stderr: process.stderr,
      signal: controller.signal,
    },
    { file: args.file as string | undefined, fromStart: args.fromStart as boolean },
  );
});
