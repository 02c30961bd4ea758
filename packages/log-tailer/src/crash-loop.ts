import type { Clock } from "@mcops/core/clock";
import { formatSpan } from "@mcops/core/format";
import { COLOURS, escapeGameText, type Notice } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import type { GameEvent } from "@mcops/game-log/game-log";
import { after } from "./messages.ts";
import type { CrashLoopRule } from "./settings.ts";

/**
 * A crash loop (issue 18): a server that crashes, is restarted by the panel, and crashes again floods the channel
 * with "Server crashed" and keeps writing half-saved chunks. CRASH_LOOP (`3/10m`) crashes within the window post one
 * red "Crash loop" message under the `health` category, with the first exception line of each crash, instead of the
 * last crash's own post; the loop's further crashes post nothing (each is still logged). With CRASH_LOOP_STOP the
 * server is also stopped through the panel, and the message says so. The loop ends when the server has run for
 * QUIET_MS after a start without crashing: one green "Crash loop over" message.
 */
export const QUIET_MS = 30 * 60_000;

export interface CrashLoopOptions {
  clock: Clock;
  rule: CrashLoopRule;
  logger: Logger;
  /** Posts in order: the loop's message holds its place while the server is being stopped. */
  send(notice: Notice | Promise<Notice>): void;
  /** Stops the server through the panel (CRASH_LOOP_STOP); undefined: the loop is only announced. */
  stop?: (() => Promise<void>) | undefined;
  quietMs?: number;
}

interface Crash {
  at: number;
  /** The crash's first exception line, or its message. */
  line: string;
}

export class CrashLoop {
  readonly #o: CrashLoopOptions;
  #crashes: Crash[] = [];
  /** The crashes of the loop under way; undefined while there is none. */
  #loop: { since: number; count: number } | undefined;
  /** Cancels the pending "Crash loop over". */
  #cancelQuiet: (() => void) | undefined;

  constructor(options: CrashLoopOptions) {
    this.#o = options;
  }

  /** A crash; true when its own "Server crashed" post is replaced (it began a loop) or dropped (the loop goes on). */
  crashed(event: GameEvent): boolean {
    const { clock, rule, logger } = this.#o;
    const now = clock.now();
    this.#cancelQuiet?.();
    this.#cancelQuiet = undefined;
    if (this.#loop) {
      this.#loop.count++;
      logger.warn(`crash ${this.#loop.count} of the crash loop: not posted (${firstLine(event)})`);
      return true;
    }
    this.#crashes = this.#crashes.filter((c) => c.at > now - rule.windowMs);
    this.#crashes.push({ at: now, line: firstLine(event) });
    if (this.#crashes.length < rule.count) return false;
    this.#loop = { since: now, count: this.#crashes.length };
    this.#o.send(this.#announce(this.#crashes.splice(0), now));
    return true;
  }

  /** The server is up ("Done"): a loop ends once it stays up for the quiet time. */
  started(): void {
    if (!this.#loop) return;
    this.#cancelQuiet?.();
    this.#cancelQuiet = after(this.#o.clock, this.#o.quietMs ?? QUIET_MS, () => this.#over());
  }

  /** A clean stop is not "running again": the quiet time begins at the next start. */
  stopped(): void {
    this.#cancelQuiet?.();
    this.#cancelQuiet = undefined;
  }

  /** Cancels the pending timer (at shutdown). */
  close(): void {
    this.stopped();
  }

  async #announce(crashes: Crash[], now: number): Promise<Notice> {
    const { rule, logger, stop } = this.#o;
    const within = formatSpan(Math.max(now - (crashes[0]?.at ?? now), 1000));
    const title = `Crash loop: the server crashed ${crashes.length} times in ${within}`;
    logger.error(
      `${title.replace("Crash loop: t", "crash loop: t")} (CRASH_LOOP ${rule.count}/${formatSpan(rule.windowMs)})`,
    );
    // The crashes' lines are the game's text (escaped: no mention, no formatting); the rest is ours.
    const lines = crashes.map((c, i) => `${i + 1}. ${escapeGameText(c.line)}`);
    let outcome = `Further crashes are not posted until it has run for ${formatSpan(this.#o.quietMs ?? QUIET_MS)}.`;
    if (stop) {
      try {
        await stop();
        logger.info("crash loop: the server was stopped through the panel (CRASH_LOOP_STOP)");
        outcome =
          "The server was stopped through the panel so it does not keep corrupting chunks (CRASH_LOOP_STOP): start it from the panel once the cause is fixed.";
      } catch (error) {
        const reason = (error as Error).message;
        logger.error(`crash loop: stopping the server through the panel failed: ${reason}`);
        outcome = `Stopping it through the panel failed (${reason}). ${outcome}`;
      }
    }
    return {
      title,
      description: `${lines.join("\n")}\n${outcome}`,
      colour: COLOURS.error,
      category: "health",
    };
  }

  #over(): void {
    const loop = this.#loop;
    if (!loop) return;
    this.#loop = undefined;
    this.#cancelQuiet = undefined;
    const quiet = formatSpan(this.#o.quietMs ?? QUIET_MS);
    this.#o.logger.info(`crash loop over: running again for ${quiet} after ${loop.count} crashes`);
    this.#o.send({
      title: "Crash loop over",
      description: `The server has been running again for ${quiet}, after ${loop.count} crashes in the loop.`,
      colour: COLOURS.success,
      category: "health",
    });
  }
}

/** A crash in one line: its exception (the first stack line naming one), else its message. */
function firstLine(event: GameEvent): string {
  return (event.exception ?? event.message).slice(0, 300);
}
