import { worldDirField } from "@mcops/core/config";

/** What the tailer reads of backup.env (docs/system.md 2.1): the volume whose logs/latest.log it follows. */
export const fields = {
  WORLD_DIR: worldDirField,
};
