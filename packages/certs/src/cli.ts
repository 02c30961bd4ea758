#!/usr/bin/env node
import { command, runTool } from "@mcops/core/cli";

/** Where the CDN's origin certificates live (docs/system.md 5). */
const SSL_DIR = "/etc/ssl/cloudflare";
const WINGS_CONFIG = "/etc/pterodactyl/config.yml";
const HOOKS_DIR = "/etc/letsencrypt/renewal-hooks/deploy";
/** `--wings-config`, declared once for the three commands that read Wings' config. */
const wingsConfigOption = { type: "string", default: WINGS_CONFIG, describe: "Wings' config.yml" } as const;

await runTool({
  name: "certs",
  usage:
    "$0 origin --domain DOMAIN [--cert FILE --key FILE] [--host HOST]\n$0 check [--domain DOMAIN] [--wings HOST:PORT]\n$0 wings-hook [--prefix DIR] [--wings-url URL]\n$0 expiry FILE\n\nThe panel's origin certificate installed safely (pasted on standard input, or from files), and both certificates' expiry checked (docs/system.md 5).",
  commands: [
    command({
      command: "wings-hook",
      describe: "install the Let's Encrypt deploy hook that restarts Wings after a renewal and tells the channel",
      options: (y) =>
        y
          .option("hooks-dir", { type: "string", default: HOOKS_DIR, describe: "certbot's deploy hooks" })
          .option("prefix", {
            type: "string",
            default: "/opt/mc-tools",
            describe: "where the mcops tools are installed",
          })
          .option("wings-url", {
            type: "string",
            describe: "where Wings answers (default: what its config.yml says at each renewal)",
          }),
      run: async (ctx, args) =>
        (await import("./wings-hook.ts")).runWingsHook(ctx, {
          hooksDir: args.hooksDir,
          prefix: args.prefix,
          wingsUrl: args.wingsUrl,
        }),
    }),
    command({
      command: "wings-cert",
      describe: "the certificate file Wings' config names (for the renewal hook)",
      options: (y) => y.option("wings-config", wingsConfigOption),
      run: async (ctx, args) => (await import("./wings-hook.ts")).runWingsCert(ctx, args.wingsConfig),
    }),
    command({
      command: "wings-url",
      describe: "where Wings answers, from its config.yml (api.host, api.port, api.ssl.enabled; for the renewal hook)",
      options: (y) => y.option("wings-config", wingsConfigOption),
      run: async (ctx, args) => (await import("./wings-hook.ts")).runWingsUrl(ctx, args.wingsConfig),
    }),
    command({
      command: "expiry <file>",
      describe: "the day a certificate file expires (YYYY-MM-DD)",
      options: (y) => y.positional("file", { type: "string", demandOption: true }),
      run: async (ctx, args) => (await import("./wings-hook.ts")).runExpiry(ctx, args.file),
    }),
    command({
      command: "origin",
      describe: "check and install the CDN's origin certificate and key (pasted, or --cert/--key)",
      options: (y) =>
        y
          .option("domain", { type: "string", demandOption: true, describe: "the zone, e.g. example.com" })
          .option("cert", { type: "string", describe: "the certificate file (default: pasted on standard input)" })
          .option("key", { type: "string", describe: "the private key file (default: pasted on standard input)" })
          .option("host", { type: "string", describe: "the panel's host the certificate must cover (default: DOMAIN)" })
          .option("ssl-dir", { type: "string", default: SSL_DIR, describe: "where the pair goes" })
          .option("nginx-test", {
            type: "string",
            describe: 'the configuration test (default "nginx -t" when installed)',
          }),
      run: async (ctx, args) =>
        (await import("./origin.ts")).runOrigin(ctx, {
          domain: args.domain,
          cert: args.cert,
          key: args.key,
          host: args.host,
          sslDir: args.sslDir,
          nginxTest: args.nginxTest,
        }),
    }),
    command({
      command: "check",
      describe: "when the origin and Wings certificates expire (exit 1 within CERT_WARN)",
      options: (y) =>
        y
          .option("domain", { type: "string", describe: "only this origin certificate (default: all in --ssl-dir)" })
          .option("ssl-dir", { type: "string", default: SSL_DIR, describe: "where the origin certificates are" })
          .option("wings-config", wingsConfigOption)
          .option("wings", { type: "string", describe: "host:port to ask Wings' certificate of (TLS handshake)" }),
      settings: async (ctx) => (await import("./settings.ts")).checkSettings(ctx),
      run: async (ctx, args, settings) =>
        (await import("./check.ts")).runCheck(ctx, settings, {
          sslDir: args.sslDir,
          domain: args.domain,
          wingsConfig: args.wingsConfig,
          wings: args.wings,
        }),
    }),
  ],
});
