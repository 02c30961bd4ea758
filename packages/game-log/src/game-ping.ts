import { status } from "minecraft-server-util";
import { parseGameAddress } from "./list-ping.ts";

export { parseGameAddress };

/**
 * Who plays, asked of the game itself: the Minecraft Server List Ping on the game port, through minecraft-server-util
 * (a small library made for the protocol; minecraft-protocol, which the tests use as the server, would drag its
 * protocol tables into every bundle). Used by restart-with-warning and the idle monitor.
 */
export interface GamePing {
  online: number;
  max: number;
  /** The sample of names the server sends (often not all, or none). */
  names: string[];
}

/**
 * The players online, or undefined (with the reason) when the server does not answer `attempts` pings in a row (each
 * given `timeoutMs`): one lost ping, or a game busy saving, does not decide what a tool does.
 */
export async function pingGame(
  address: string,
  timeoutMs = 3000,
  attempts = 2,
): Promise<{ ping: GamePing; error?: undefined } | { ping?: undefined; error: string }> {
  const { host, port } = parseGameAddress(address);
  let error = "";
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const answer = await status(host, port, { timeout: timeoutMs, enableSRV: false });
      return {
        ping: {
          online: answer.players.online,
          max: answer.players.max,
          names: (answer.players.sample ?? []).map((p) => p.name),
        },
      };
    } catch (failure) {
      error = (failure as Error).message || String(failure);
    }
  }
  return { error };
}
