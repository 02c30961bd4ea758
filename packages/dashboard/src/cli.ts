#!/usr/bin/env node
import { createCli, runMain } from "@mcops/core/cli";
import { hideBin } from "yargs/helpers";

await runMain("dashboard", async () => {
  const args = await createCli(
    "dashboard",
    hideBin(process.argv),
    "$0 [--listen 127.0.0.1:8088]\n$0 passwd [--user admin]\n\nThe notification settings page (docs/system.md 6): the webhook address and a checkbox per event category, saved to /etc/mc-backup/webhook.json, beside the server's state, players, last backup and recent notifications. Behind basic auth (dashboard.passwd); meant to sit behind the VM's web server on its own sub-domain.",
  )
    .command("$0", "serve the page until stopped", (y) =>
      y.option("listen", {
        type: "string",
        default: "127.0.0.1:8088",
        describe: "host:port to listen on (keep it on 127.0.0.1 behind nginx)",
      }),
    )
    .command("passwd", "set the sign-in password (asked on a terminal, else read from standard input)", (y) =>
      y.option("user", { type: "string", default: "admin", describe: "the user name to sign in with" }),
    )
    .parseAsync();

  const { resolvePaths, runPasswd, runServe, systemClock } = await import("./dashboard.ts");
  const ctx = {
    paths: resolvePaths(),
    env: process.env,
    clock: systemClock,
    stdout: process.stdout,
    stderr: process.stderr,
  };
  if (args._[0] === "passwd") return runPasswd({ ...ctx, stdin: process.stdin }, { user: String(args.user) });
  const abort = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => abort.abort(signal));
  return runServe({ ...ctx, signal: abort.signal }, { listen: String(args.listen) });
});
