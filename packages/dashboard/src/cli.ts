#!/usr/bin/env node
import { command, runTool } from "@mcops/core/cli";

await runTool({
  name: "dashboard",
  usage:
    "$0 [--listen 127.0.0.1:8088]\n$0 passwd [--user admin]\n\nThe notification settings page (docs/system.md 6): the webhook address and a checkbox per event category, saved to /etc/mc-backup/webhook.json, beside the server's state, players, last backup and recent notifications. Behind basic auth (dashboard.passwd); meant to sit behind the VM's web server on its own sub-domain.",
  commands: [
    command({
      command: "$0",
      describe: "serve the page until stopped",
      options: (y) =>
        y.option("listen", {
          type: "string",
          default: "127.0.0.1:8088",
          describe: "host:port to listen on (keep it on 127.0.0.1 behind nginx)",
        }),
      // Loaders, not values: the page re-reads backup.env and webhook.json whenever it needs them (settings.ts).
      settings: async (ctx) => (await import("./settings.ts")).serveSettings(ctx),
      run: async (ctx, args, settings) =>
        (await import("./commands/serve.ts")).runServe(ctx, settings, { listen: args.listen }),
    }),
    command({
      command: "passwd",
      describe: "set the sign-in password (asked on a terminal, else read from standard input)",
      options: (y) => y.option("user", { type: "string", default: "admin", describe: "the user name to sign in with" }),
      run: async (ctx, args) => (await import("./commands/passwd.ts")).runPasswd(ctx, { user: args.user }),
    }),
  ],
});
