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
 * Time that passes only when the tool sleeps (or the test advances it), with a real millisecond per sleep so that
 * the stand-ins' own timers and sockets keep running.
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
      await new Promise((r) => setTimeout(r, 1));
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
