import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "@mcops/core/fs";
import type { Logger } from "@mcops/core/log";
import type { Paths } from "@mcops/core/paths";

/**
 * The state files' mode is what writeFileSync gave them: 666 less the umask, so 600 under the unit's UMask=0077. They
 * hold a position in the log, where Docker's stream got to, and the messages a stop left unsent.
 */
const STATE_MODE = 0o666;

/** A state file of the tailer for this log: `log-tailer-<hash of the log's path>[-<what>].json`. */
export function stateFile(paths: Paths, logFile: string, what?: string): string {
  mkdirSync(paths.stateDir, { recursive: true });
  // Taken here, not imported: an ES import of node:crypto loads all of it at the start (issue 35).
  const { createHash } = process.getBuiltinModule("node:crypto");
  const hash = createHash("sha256").update(logFile).digest("hex").slice(0, 12);
  return join(paths.stateDir, `log-tailer-${hash}${what ? `-${what}` : ""}.json`);
}

export function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    return undefined;
  }
}

/** Writes a state file (atomically, flushed); a failure is one WARN line, and the service goes on. */
export function saveJson(file: string, value: unknown, logger: Logger): boolean {
  try {
    writeFileAtomic(file, JSON.stringify(value), STATE_MODE);
    return true;
  } catch (error) {
    logger.warn(`cannot save ${file} (${(error as NodeJS.ErrnoException).code})`);
    return false;
  }
}
