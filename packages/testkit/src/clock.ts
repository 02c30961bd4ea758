/** The shape of @mcops/core's Clock (testkit does not depend on core, which tests with it). */
export interface VirtualClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Runs `fn` once the virtual time reaches start + offsetMs (checked at each sleep). */
  at(offsetMs: number, fn: () => void): void;
  /** Moves the time on without anyone sleeping. */
  advance(ms: number): void;
}

export interface VirtualClockOptions {
  /**
   * False while a stand-in is between states on its own real timers (a panel's restart: `PanelStandIn.busy`): a sleep
   * waits (real time, 10 s at most) until it is true, so that virtual minutes never pass while a 30 ms transition is
   * still due on a busy machine.
   */
  settled?: () => boolean;
}

/** The longest real wait of one sleep for `settled`. */
const SETTLE_MS = 10_000;

/**
 * Time that passes only when the tool sleeps (or the test advances it), with a real millisecond per sleep (5 for a
 * sleep of a second or more) so that the stand-ins' own timers and sockets keep running; with `settled`, a sleep
 * also waits for the stand-ins' transitions due meanwhile.
 */
export function virtualClock(start: number, options: VirtualClockOptions = {}): VirtualClock {
  let now = start;
  const hooks: Array<{ at: number; fn: () => void }> = [];
  const fire = (): void => {
    const later: typeof hooks = [];
    for (const hook of hooks.splice(0)) {
      if (hook.at <= now) hook.fn();
      else later.push(hook);
    }
    hooks.push(...later);
  };
  return {
    now: () => now,
    async sleep(ms) {
      now += Math.max(0, ms);
      fire();
      // A sleep of a second or more gives the stand-ins 5 real ms, so their own (real) timers keep pace with a tool
      // that polls minutes of virtual time: a panel's 30 ms restart must not be outrun by a 5-minute wait (CI saw
      // restart-with-warning's whole wait pass before the stand-in had restarted, on a busy machine).
      await new Promise((r) => setTimeout(r, ms >= 1000 ? 5 : 1));
      const until = Date.now() + SETTLE_MS;
      while (options.settled && !options.settled() && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 1));
      }
    },
    at(offsetMs, fn) {
      hooks.push({ at: start + offsetMs, fn });
    },
    advance(ms) {
      now += Math.max(0, ms);
      fire();
    },
  };
}
