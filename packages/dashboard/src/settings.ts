import {
  fromBackupEnv,
  gameAddressField,
  loadNotifyConfig,
  type NotifyConfig,
  panelFields,
  pickFields,
} from "@mcops/core/config";
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
function loadPanelSettings(ctx: Pick<ToolContext, "paths" | "env">) {
  return fromBackupEnv(pickFields(fields, ["CONTROL_URL", "CONTROL_KEY", "SERVER_ID"]), {
    paths: ctx.paths,
    env: ctx.env,
  });
}

/** host:port of the game (GAME_ADDRESS, default 127.0.0.1:25565). */
function loadGameAddress(ctx: Pick<ToolContext, "paths" | "env">): string {
  return fromBackupEnv(pickFields(fields, ["GAME_ADDRESS"]), { paths: ctx.paths, env: ctx.env }).GAME_ADDRESS;
}

/**
 * `dashboard`'s (serve's) settings, handed as loaders that the server calls each time it needs them, never once at
 * the start: the page re-reads backup.env whenever it asks the panel and the game, and webhook.json and webhook.env
 * whenever it sends a test message, on purpose, so that a change (the page's own save included) takes effect without
 * a restart, and a problem in one file is shown on the page instead of stopping the server.
 */
export function serveSettings(ctx: Pick<ToolContext, "paths" | "env">) {
  return {
    panel: () => loadPanelSettings(ctx),
    gameAddress: () => loadGameAddress(ctx),
    /** Where a test message goes (core's loadNotifyConfig, what every tool's notifications read). */
    notify: (): NotifyConfig => loadNotifyConfig({ paths: ctx.paths, env: ctx.env }),
  };
}

export type ServeSettings = ReturnType<typeof serveSettings>;
