import { fromBackupEnv, gameAddressField, panelFields } from "@mcops/core/config";
import type { ToolContext } from "@mcops/core/tool";

/** What the dashboard reads of backup.env: the panel, for the server's state, and the game port, for who plays. */
export const fields = { ...panelFields, GAME_ADDRESS: gameAddressField };

export function loadPanel(ctx: Pick<ToolContext, "paths" | "env">) {
  const { CONTROL_URL, CONTROL_KEY, SERVER_ID } = panelFields;
  return fromBackupEnv({ CONTROL_URL, CONTROL_KEY, SERVER_ID }, { paths: ctx.paths, env: ctx.env });
}

export function loadGameAddress(ctx: Pick<ToolContext, "paths" | "env">): string {
  return (
    fromBackupEnv({ GAME_ADDRESS: fields.GAME_ADDRESS }, { paths: ctx.paths, env: ctx.env }).GAME_ADDRESS ??
    "127.0.0.1:25565"
  );
}
