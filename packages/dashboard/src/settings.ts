import { fromBackupEnv, gameAddressField, panelFields, pickFields } from "@mcops/core/config";
import type { ToolContext } from "@mcops/core/tool";

/**
 * What the dashboard reads of backup.env (docs/system.md 2.1), each field declared once: the panel it asks for the
 * server's state, and the game port it pings for the players online. The dashboard has no flag for either; its own
 * settings file is webhook.json (settings-store.ts).
 */
const fields = {
  ...panelFields,
  /** The game port for the Server List Ping (default 127.0.0.1:25565). */
  GAME_ADDRESS: gameAddressField,
};

/** The panel's client API fields. Read apart from the game's address: a problem with one leaves the other shown. */
export function loadPanelSettings(ctx: Pick<ToolContext, "paths" | "env">) {
  return fromBackupEnv(pickFields(fields, ["CONTROL_URL", "CONTROL_KEY", "SERVER_ID"]), {
    paths: ctx.paths,
    env: ctx.env,
  });
}

/** host:port of the game (GAME_ADDRESS, default 127.0.0.1:25565). */
export function loadGameAddress(ctx: Pick<ToolContext, "paths" | "env">): string {
  return fromBackupEnv(pickFields(fields, ["GAME_ADDRESS"]), { paths: ctx.paths, env: ctx.env }).GAME_ADDRESS;
}
