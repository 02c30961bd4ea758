import { ExitCode, JobError } from "@mcops/core/errors";
import { exchange, POLICIES } from "@mcops/core/http/request";
import type { ToolContext } from "@mcops/core/tool";
import type { RegisterSettings } from "./settings.ts";
import { DISCORD_USER_AGENT } from "./user-agent.ts";

/**
 * `discord-control register`: puts the slash commands into the Discord application (Bulk Overwrite Global Application
 * Commands, or a guild's with --guild, which shows at once). On the operator's computer, with the application's id
 * and its bot token from the local .env (or the environment); run it again after an update adds a command.
 *
 * Each command is shown in guilds only (`contexts: [0]` GUILD, not in DMs) and only where the app is installed in
 * the guild (`integration_types: [0]` GUILD_INSTALL, not a member's user install): both apply to global commands
 * (developers/interactions/application-commands.mdx), so a guild's registration leaves them out. `/stop` is shown
 * to administrators only (`default_member_permissions: "0"`) until the guild gives it to the admin role (Server
 * Settings → Integrations); `/start` and `/status` to every member (`null`). The Worker checks the guild and the
 * roles whatever Discord shows.
 */
export const COMMANDS = [
  {
    name: "start",
    description: "Wake the server up (from hibernation: about two minutes)",
    type: 1,
    default_member_permissions: null,
  },
  {
    name: "status",
    description: "Is the server up, who plays, when was the last backup",
    type: 1,
    default_member_permissions: null,
  },
  {
    name: "stop",
    description: "Hibernate the server now (admins)",
    type: 1,
    default_member_permissions: "0",
    options: [{ name: "force", description: "even while players are online", type: 5, required: false }],
  },
];

/** Global commands: in guilds only, where the app is installed in the guild. */
const GLOBAL_ONLY = { contexts: [0], integration_types: [0] };

/** The commands as put: global ones with their contexts and integration types. */
export function commandsPayload(guild: string | undefined): unknown[] {
  return guild ? COMMANDS : COMMANDS.map((command) => ({ ...command, ...GLOBAL_ONLY }));
}

/** `env`: the application's id, its bot token and Discord's API, read by registerSettings (settings.ts) first. */
export async function runRegister(
  ctx: Pick<ToolContext, "clock" | "stdout">,
  env: RegisterSettings,
  options: { guild?: string | undefined },
): Promise<number> {
  const base = env.DISCORD_API_URL;
  const path = options.guild
    ? `/applications/${env.DISCORD_APPLICATION_ID}/guilds/${options.guild}/commands`
    : `/applications/${env.DISCORD_APPLICATION_ID}/commands`;
  const { response, errorText } = await exchange(POLICIES.discord, {
    where: `PUT ${base}${path}`,
    idempotent: true,
    clock: ctx.clock,
    send: (signal) =>
      fetch(`${base}${path}`, {
        method: "PUT",
        signal,
        headers: {
          authorization: `Bot ${env.DISCORD_BOT_TOKEN}`,
          "content-type": "application/json",
          "user-agent": DISCORD_USER_AGENT,
        },
        body: JSON.stringify(commandsPayload(options.guild)),
      }),
  });
  if (!response.ok) {
    const said = errorText?.slice(0, 200) ?? "";
    throw new JobError(`Discord answered ${response.status} ${said}`.trim(), {
      where: `PUT ${base}${path}`,
      hint:
        response.status === 401
          ? "DISCORD_BOT_TOKEN is not the application's bot token (Developer Portal → Bot → Reset Token)"
          : "check DISCORD_APPLICATION_ID, then run it again",
    });
  }
  await response.body?.cancel();
  const where = options.guild
    ? `in guild ${options.guild} (shown at once)`
    : "globally (Discord shows them within a minute)";
  ctx.stdout.write(`Registered ${COMMANDS.map((c) => `/${c.name}`).join(", ")} ${where}.\n`);
  return ExitCode.ok;
}
