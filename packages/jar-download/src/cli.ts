#!/usr/bin/env node
import { createCli, runMain } from "@mcops/core/cli";
import { hideBin } from "yargs/helpers";

await runMain("jar-download", async () => {
  const args = await createCli(
    "jar-download",
    hideBin(process.argv),
    "$0 VERSION [--type paper|folia|purpur|vanilla|fabric] [--build N|latest] [--stop]\n$0 [VERSION] --list [--type TYPE]\n\nFetches the server jar of a game version, verifies its size and checksum, and installs it as server.jar in the server's volume (WORLD_DIR), chowned to 988:988, the old one kept as server.jar.previous (docs/system.md 4.3). Refused while the server runs, unless --stop.",
  )
    .command("$0 [VERSION]", false, (y) =>
      y.positional("VERSION", { type: "string", describe: "game version, e.g. 1.21.4" }),
    )
    .option("type", { type: "string", default: "paper", describe: "paper, folia, purpur, vanilla or fabric" })
    .option("build", { type: "string", describe: "build number (Fabric: loader version); default the newest stable" })
    .option("channel", {
      type: "string",
      describe: "Paper/Folia: least stable channel taken for the newest build (stable, beta, alpha)",
    })
    .option("list", { type: "boolean", default: false, describe: "list the versions, or the builds of VERSION" })
    .option("dry-run", { type: "boolean", default: false, describe: "say what would be installed, do nothing" })
    .option("stop", { type: "boolean", default: false, describe: "stop a running server for the swap, then start it" })
    .option("dir", { type: "string", describe: "the server's volume (default WORLD_DIR from backup.env)" })
    .option("owner", { type: "string", describe: "uid:gid for server.jar (default BACKUP_OWNER, else 988:988)" })
    .parseAsync();
  const { resolvePaths, runJarDownload, systemClock } = await import("./jar-download.ts");
  const abort = new AbortController();
  // A signal stops the download (its temporary file is removed on the way out); whatever else is in progress (a wait
  // for the panel) gets a few seconds, then the process ends.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      abort.abort();
      setTimeout(() => process.exit(130), 3000).unref();
    });
  }
  return runJarDownload(
    {
      paths: resolvePaths(),
      env: process.env,
      clock: systemClock,
      stdout: process.stdout,
      stderr: process.stderr,
      signal: abort.signal,
    },
    {
      version: args.VERSION as string | undefined,
      type: args.type,
      build: args.build,
      channel: args.channel,
      list: args.list,
      dryRun: args.dryRun,
      stop: args.stop,
      dir: args.dir,
      owner: args.owner,
    },
  );
});
