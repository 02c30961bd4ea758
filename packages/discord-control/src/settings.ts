import { envFilePath, type LocalFiles } from "@mcops/cloud/local-env";
import { baseUrlSchema, fail, field, loadSettings, setting } from "@mcops/core/config";
import { DISCORD_API } from "./discord-api.ts";

/** A Discord application id: a snowflake of 17 to 20 digits. */
const snowflake = field((value, ctx) => {
  if (!/^\d{17,20}$/.test(value)) {
    fail(
      ctx,
      "is not an application id (17 to 20 digits)",
      "copy it from the Developer Portal: General Information → Application ID",
    );
  }
});

/** What `discord-control register` reads from the local .env (or the environment), each field declared once. */
export const fields = {
  DISCORD_APPLICATION_ID: setting(snowflake),
  DISCORD_BOT_TOKEN: setting(field(), { secret: true }),
  /** Discord's API (a stand-in in tests); its default is the Worker's, declared once in discord-api.ts. */
  DISCORD_API_URL: setting(baseUrlSchema, { default: DISCORD_API }),
};

/**
 * `register`'s settings: the fields above from the local .env (`--config`, else MCOPS_ENV_FILE, else ./.env) and the
 * environment.
 */
export function registerSettings(ctx: LocalFiles) {
  const file = envFilePath(ctx);
  return loadSettings(fields, { file, env: ctx.env, missingHint: `add {name}=... to ${file}` });
}

export type RegisterSettings = ReturnType<typeof registerSettings>;
