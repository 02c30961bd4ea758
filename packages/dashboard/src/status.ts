import { readRecords } from "@mcops/core/events";
import { type HealthFigures, readHealthFigures } from "@mcops/core/health";
import { createPanelClient, type Resources } from "@mcops/core/http";
import { isHolderAlive, readLockHolder } from "@mcops/core/lock";
import { backupLockFile } from "@mcops/core/paths";
import { type BackupSummary, summariseBackups } from "@mcops/core/records";
import type { ToolContext } from "@mcops/core/tool";
import { type GamePing, pingGame } from "@mcops/game-log/game-ping";
import { type NotificationEntry, recentNotifications } from "./notifications.ts";
import { panelErrorSummary, pingErrorSummary } from "./remote-answer.ts";
import type { ServeSettings } from "./settings.ts";
import { describeError } from "./settings-store.ts";

/** What the page shows beside the form. Each part that cannot be had says why instead. */
export interface ServerStatus {
  panel: { resources: Resources } | { error: string };
  players: { ping: GamePing; address: string } | { error: string; address: string | undefined };
  backup: BackupSummary;
  notifications: NotificationEntry[];
  /** The idle monitor's latest health figures (tick rate, memory, free disk), if it wrote any. */
  health: HealthFigures | undefined;
  /** Epoch ms the panel and the game were asked. */
  checkedAt: number;
}

type StatusContext = Pick<ToolContext, "paths" | "env" | "clock">;

/** The loaders of backup.env's fields, called at each ask: a change to the file is shown without a restart. */
type StatusSettings = Pick<ServeSettings, "panel" | "gameAddress">;

interface StatusOptions {
  /** The panel and the game are asked at most this often (default 10 s); the logs are read for every page. */
  cacheMs?: number;
  panelTimeoutMs?: number;
  pingTimeoutMs?: number;
}

type Live = Pick<ServerStatus, "panel" | "players" | "checkedAt">;

/** The server's state from the panel (docs/system.md 4.1 client API, resources), or why it cannot be had. */
function askPanel(
  ctx: StatusContext,
  settings: StatusSettings,
  options: StatusOptions,
): Promise<ServerStatus["panel"]> {
  try {
    const env = settings.panel();
    const panel = createPanelClient({
      url: env.CONTROL_URL,
      key: env.CONTROL_KEY,
      serverId: env.SERVER_ID,
      timeoutMs: options.panelTimeoutMs ?? 4000,
      maxAttempts: 1,
      clock: ctx.clock,
    });
    return panel.resources().then(
      (resources) => ({ resources }),
      // The panel's own words stay in no page: its status, and why (remote-answer.ts).
      (error: unknown) => ({ error: panelErrorSummary(error) }),
    );
  } catch (error) {
    return Promise.resolve({ error: describeError(error) });
  }
}

/** The players online from the game (Server List Ping), or why they cannot be had. */
function askGame(settings: StatusSettings, options: StatusOptions): Promise<ServerStatus["players"]> {
  let address: string | undefined;
  try {
    address = settings.gameAddress();
    const at = address;
    return pingGame(at, options.pingTimeoutMs ?? 2500, 1).then((answer) =>
      answer.ping
        ? { ping: answer.ping, address: at }
        : { error: `no answer (${pingErrorSummary(answer.error)})`, address: at },
    );
  } catch (error) {
    return Promise.resolve({ error: describeError(error), address });
  }
}

/** Asks the panel and the game at once. */
async function askLive(ctx: StatusContext, settings: StatusSettings, options: StatusOptions): Promise<Live> {
  const checkedAt = ctx.clock.now();
  const panelPart = askPanel(ctx, settings, options);
  const playersPart = askGame(settings, options);
  const [panel, players] = await Promise.all([panelPart, playersPart]);
  return { panel, players, checkedAt };
}

/** The last backup from the backup's records, and one in progress while a live backup holds the lock. */
function readBackup(ctx: StatusContext): BackupSummary {
  const holder = readLockHolder(backupLockFile(ctx.paths));
  const running = holder !== undefined && holder.tool === "backup" && isHolderAlive(holder);
  return summariseBackups(readRecords(ctx.paths, "backup"), running);
}

export function createStatusReader(ctx: StatusContext, settings: StatusSettings, options: StatusOptions = {}) {
  const cacheMs = options.cacheMs ?? 10_000;
  let cached: { at: number; live: Promise<Live> } | undefined;
  return {
    async read(): Promise<ServerStatus> {
      const now = ctx.clock.now();
      if (!cached || now - cached.at >= cacheMs) cached = { at: now, live: askLive(ctx, settings, options) };
      const live = await cached.live;
      return {
        ...live,
        backup: readBackup(ctx),
        notifications: recentNotifications(ctx.paths),
        health: readHealthFigures(ctx.paths),
      };
    },
  };
}
