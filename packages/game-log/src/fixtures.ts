import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Test support, never imported by a tool: the real published server logs the parser is proven against
 * (test/fixtures/real-logs; where each came from, and its licence, is in the README beside them), for the tests and
 * benchmarks of other packages that feed them to a tool.
 */

/** The directory of the real logs, with a trailing slash. */
export const REAL_LOGS_DIR = fileURLToPath(new URL("../test/fixtures/real-logs/", import.meta.url));

/** The file names of the real logs (`*.log`), sorted. */
export function realLogNames(): string[] {
  return readdirSync(REAL_LOGS_DIR)
    .filter((f) => f.endsWith(".log"))
    .sort();
}

/** The path of one real log, e.g. `realLogPath("vanilla-1.21.5-dawncraft-2025-03-30-4.log")`. */
export function realLogPath(name: string): string {
  return join(REAL_LOGS_DIR, name);
}
