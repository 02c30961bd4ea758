import { ExitCode } from "@mcops/core/errors";
import { formatSpan } from "@mcops/core/format";

/** How long `--wait` waits for the backup lock (backup, restore, drill): a backup of a large world, and its prune. */
export const LOCK_WAIT_MS = 2 * 60 * 60 * 1000;

/** `--wait`, declared once for the commands that take it (cli.ts: a light module, read by the CLI's entry). */
export const waitOption = {
  type: "boolean",
  default: false,
  describe: `wait (up to ${formatSpan(LOCK_WAIT_MS)}) for a running backup instead of exiting ${ExitCode.busy}`,
} as const;
