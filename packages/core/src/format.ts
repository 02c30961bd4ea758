import { UsageError } from "./errors.ts";

/** Numbers the way an operator reads them in logs and messages. */

/** `1.2 s`, `3 min 4 s`, `2 h 5 min`: durations the way an operator reads them. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min ${Math.round(s % 60)} s`;
  return `${Math.floor(min / 60)} h ${min % 60} min`;
}

/** A span in round words, for a message's title: `3 s`, `10 min`, `1 h`, `10 min 30 s` (no trailing zero unit). */
export function formatSpan(ms: number): string {
  if (ms < 60_000) return `${Math.max(1, Math.round(ms / 1000))} s`;
  return formatDuration(ms).replace(/ 0 (s|min)$/, "");
}

/** `1.2 GiB`, `340 MiB`, `12 KiB`. */
export function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}

/** `14d`, `2h`, `30m`, `90s`, `1m30s`, `300` (seconds) in milliseconds; undefined when it is not a duration. */
export function durationMs(text: string): number | undefined {
  const match = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s?)?$/.exec(text.trim());
  if (!match || (!match[1] && !match[2] && !match[3] && !match[4])) return undefined;
  const hours = Number(match[1] ?? 0) * 24 + Number(match[2] ?? 0);
  return ((hours * 60 + Number(match[3] ?? 0)) * 60 + Number(match[4] ?? 0)) * 1000;
}

/** A duration given on the command line; a usage error (exit 2) when it is not one. */
export function parseDuration(text: string): number {
  const ms = durationMs(text);
  if (ms === undefined) {
    throw new UsageError(`"${text}" is not a duration`, { hint: "write it like 5m, 90s, 1m30s or 2h" });
  }
  return ms;
}

/** `text` parsed as JSON, or undefined when it is not JSON (another program's output, a file that may be cut short). */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
