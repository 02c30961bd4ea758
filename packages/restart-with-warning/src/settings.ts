import { fromBackupEnv, gameAddressField, panelFields } from "@mcops/core/config";
import type { ToolContext } from "@mcops/core/tool";

/**
 * What restart-with-warning reads from backup.env (docs/system.md 2.1), each field declared once: the panel it restarts
 * the server through, and the game port it pings to see whether anyone is online. Their order is the order in which
 * problems are reported. The tool's options (--countdown, --reason, --lock-wait, --dry-run) are not fields: they have
 * no env form.
 */
const fields = {
  ...panelFields,
  /** The game port for the Server List Ping (default 127.0.0.1:25565). */
  GAME_ADDRESS: gameAddressField,
};

export function loadSettings(ctx: Pick<ToolContext, "paths" | "env">) {
  return fromBackupEnv(fields, { paths: ctx.paths, env: ctx.env });
}
