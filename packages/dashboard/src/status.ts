import { join } from "node:path";
import type { Clock } from "@mcops/core/clock";
import { createPanelClient, type Resources } from "@mcops/core/http";
import { isHolderAlive, readLockHolder } from "@mcops/core/lock";
import { readLogTail } from "@mcops/core/log-lines";
import { backupLockFile, type Paths } from "@mcops/core/paths";
import { type GamePing, pingGame } from "@mcops/game-log/game-ping";
import { type BackupSummary, summariseBackups } from "./backup-log.ts";
import { type NotificationEntry, recentNotifications } from "./notifications.ts";
import { panelErrorSummary, pingErrorSummary } from "./remote-answer.ts";
import { loadGameAddress, loadPanel } from "./settings.ts";
import { describeError } from "./settings-store.ts";

/** What the page shows beside the form. Each part that cannot be had says why instead. */
export interface ServerStatus {
  panel: { resources: Resources } | { error: string };
  players: { ping: GamePing; address: string } | { error: string; address: string | undefined };
  backup: BackupSummary;
  notifications: NotificationEntry[];
  /** Epoch ms the panel and the game were asked. */
  checkedAt: number;
}

export interface StatusContext {
  paths: Paths;
  env: NodeJS.ProcessEnv;
  clock: Clock;
}

export interface StatusOptions {
  /** The panel and the game are asked at most this often (default 10 s); the logs are read for every page. */
  cacheMs?: number;
  panelTimeoutMs?: number;
  pingTimeoutMs?: number;
}

type Live = Pick<ServerStatus, "panel" | "players" | "checkedAt">;

/** Asks the panel (docs/system.md 4.1 client API, resources) and the game (Server List Ping) at once. */
async function askLive(ctx: StatusContext, options: StatusOptions): Promise<Live> {
  const checkedAt = ctx.clock.now();
  let address: string | undefined;
  let panelPart: Promise<ServerStatus["panel"]>;
  try {
    const env = loadPanel(ctx);
    const panel = createPanelClient({
      url: env.CONTROL_URL,
      key: env.CONTROL_KEY,
      serverId: env.SERVER_ID,
      timeoutMs: options.panelTimeoutMs ?? 4000,
      maxAttempts: 1,
      clock: ctx.clock,
    });
    panelPart = panel.resources().then(
      (resources) => ({ resources }),
      // The panel's own words stay in no page: its status, and why (remote-answer.ts).
      (error: unknown) => ({ error: panelErrorSummary(error) }),
    );
  } catch (error) {
    panelPart = Promise.resolve({ error: describeError(error) });
  }
  let playersPart: Promise<ServerStatus["players"]>;
  try {
    address = loadGameAddress(ctx);
    const at = address;
    playersPart = pingGame(at, options.pingTimeoutMs ?? 2500, 1).then((answer) =>
      answer.ping
        ? { ping: answer.ping, address: at }
        : { error: `no answer (${pingErrorSummary(answer.error)})`, address: at },
    );
  } catch (error) {
    playersPart = Promise.resolve({ error: describeError(error), address });
  }
  const [panel, players] = await Promise.all([panelPart, playersPart]);
  return { panel, players, checkedAt };
}

export function createStatusReader(ctx: StatusContext, options: StatusOptions = {}) {
  const cacheMs = options.cacheMs ?? 10_000;
  let cached: { at: number; live: Promise<Live> } | undefined;
  return {
    async read(): Promise<ServerStatus> {
      const now = ctx.clock.now();
      if (!cached || now - cached.at >= cacheMs) cached = { at: now, live: askLive(ctx, options) };
      const live = await cached.live;
      const holder = readLockHolder(backupLockFile(ctx.paths));
      const running = holder !== undefined && holder.tool === "backup" && isHolderAlive(holder);
      const log = join(ctx.paths.logDir, "mc-backup.log");
      // The newest backup may be in the file logrotate renamed (delaycompress keeps .1 plain).
      let backup = summariseBackups(readLogTail(log), running);
      if (!backup.last) backup = { ...backup, last: summariseBackups(readLogTail(`${log}.1`), false).last };
      return { ...live, backup, notifications: recentNotifications(ctx.paths.logDir) };
    },
  };
}
