import { formatBytes, formatSpan } from "@mcops/core/format";
import type { IdleState } from "./decide.ts";

/**
 * Memory (issue 18), as a pure function like checkBackupAge(): what the container uses against its limit (the panel's
 * resources and the server's limits). Above HIGH for HIGH_FOR, one yellow post; one green post once it is below again.
 * A server without a limit, or a panel that did not answer, is not judged.
 */
export const HIGH = 0.95;
export const HIGH_FOR_MS = 10 * 60_000;

export interface MemoryCheck {
  state: IdleState;
  /** Used over the limit, when both are known. */
  ratio: number | undefined;
  post?: { kind: "high" | "recovered"; title: string; description: string } | undefined;
}

export function checkMemory(
  previous: IdleState,
  now: number,
  usedBytes: number | undefined,
  limitBytes: number | undefined,
): MemoryCheck {
  if (usedBytes === undefined || !limitBytes) return { state: previous, ratio: undefined };
  const state: IdleState = { ...previous };
  const ratio = usedBytes / limitBytes;
  const share = `${Math.round(ratio * 100)} % of ${formatBytes(limitBytes)}`;
  if (ratio <= HIGH) {
    state.memoryHighSince = undefined;
    if (state.memoryAlert === undefined) return { state, ratio };
    state.memoryAlert = undefined;
    return {
      state,
      ratio,
      post: { kind: "recovered", title: `Memory back to ${share}`, description: `${formatBytes(usedBytes)} used.` },
    };
  }
  state.memoryHighSince ??= now;
  if (state.memoryAlert !== undefined || now - state.memoryHighSince < HIGH_FOR_MS) return { state, ratio };
  state.memoryAlert = now;
  const span = formatSpan(now - state.memoryHighSince);
  return {
    state,
    ratio,
    post: {
      kind: "high",
      title: `Memory: ${share} for ${span}`,
      description: `${formatBytes(usedBytes)} used. Near its limit the server pauses to collect garbage (lag) and the container may be killed: look for a leaking plugin, or give the server more memory in the panel.`,
    },
  };
}
