import { CATEGORIES, dryRunOption } from "@mcops/core/cli";

/**
 * What webhook takes, each declared once: the message's words, colour and category, its footer, and --dry-run, with
 * their defaults and help (cli.ts builds the command line from these; a light module, read by --help). Where a message
 * goes is not webhook's own: webhook.env's WEBHOOK_URL and PLAY_HOST, webhook.json and the WEBHOOK_URL environment
 * variable are what every tool's notifications read, so core declares them (`webhookFields` and `loadNotifyConfig`
 * in `@mcops/core/config`). webhook reads no field of backup.env and has no file of its own.
 */

/** The colour of a message that names none (webhook.sh's 3447003). */
export const DEFAULT_COLOUR = "info";

export const USAGE =
  "$0 TITLE [DESCRIPTION] [COLOUR]\n\nPosts one rich message to the Discord channel webhook of /etc/mc-backup/webhook.env (drop-in for webhook.sh). Does nothing when no webhook is configured.";

export const EXAMPLES: [string, string][] = [["$0 'Backup done' 'took 42 s, 1.2 GiB' success", ""]];

/** TITLE [DESCRIPTION] [COLOUR]: the colour's names and numbers are core's COLOURS (test/webhook.test.ts holds them). */
export const positionals = {
  title: { type: "string", describe: "message title" },
  description: { type: "string", describe: "message text (Discord markdown allowed)" },
  colour: {
    type: "string",
    describe: `decimal RGB, #rrggbb, or success|error|warning|info|event (default ${DEFAULT_COLOUR}, 3447003)`,
  },
} as const;

export const options = {
  category: {
    type: "string",
    choices: CATEGORIES,
    describe: "event category; nothing is sent when webhook.json turns it off",
  },
  /** PLAY_HOST and the host name are loadNotifyConfig's footer; --footer wins over both. */
  footer: { type: "string", describe: "footer text (default: PLAY_HOST from webhook.env, else the host name)" },
  "dry-run": dryRunOption("print the JSON that would be sent; send nothing"),
} as const;
