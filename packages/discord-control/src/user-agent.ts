import { VERSION } from "@mcops/core/version";

/**
 * What Discord requires of every API request (discord-api-docs developers/reference.mdx, User Agent):
 * `DiscordBot ($url, $versionNumber)`; a request without one may be blocked. The Worker's edits and posts and the
 * register CLI send it.
 */
export const DISCORD_USER_AGENT = `DiscordBot (https://github.com/mcops/mcops, ${VERSION})`;
