/** The shape of @mcops/core's Clock (testkit does not depend on core, which tests with it). */
export interface VirtualClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Runs `fn` once the virtual time reaches start + offsetMs (checked at each sleep). */
  at(offsetMs: number, fn: () => void): void;
  /** Moves the time on without anyone sleeping. */
  advance(ms: number): void;
}

/**
 * Time that passes only when the tool sleeps (or the test advances it), with a real millisecond per sleep (5 for a
 * sleep of a second or more) so that the stand-ins' own timers and sockets keep running.
 */
export function virtualClock(start: number): VirtualClock {
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
