import { readNbtFields } from "./nbt-walk.ts";
import { gunzipNbt } from "./region.ts";

/** level.dat and a player's file are a few KiB inflated; anything near this is not the game's. */
export const MAX_SMALL_FILE = 16 * 1024 * 1024;

/** What level.dat says of its world, as read; each field undefined when it is missing (or not of its type). */
export interface LevelDat {
  levelName: string | undefined;
  /** Data.DataVersion: the number each game version writes (1.21.4 writes 4189). */
  dataVersion: number | undefined;
  /** Data.Version.Name, e.g. "1.21.4" (1.9 and later). */
  versionName: string | undefined;
}

/**
 * level.dat's name and version, read by the NBT walk that checks the whole file (nbt-walk.ts: no tree is built, so a
 * level.dat made to exhaust memory is only a reason); or why it is not a level.dat at all.
 */
export function readLevelDat(data: Buffer): LevelDat | { problem: string } {
  const inflated = gunzipNbt(data, MAX_SMALL_FILE);
  if ("problem" in inflated) return inflated;
  const read = readNbtFields(inflated.nbt, [
    ["Data", "LevelName"],
    ["Data", "DataVersion"],
    ["Data", "Version", "Name"],
  ]);
  if ("problem" in read) return { problem: `not NBT (${read.problem})` };
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  const dataVersion = read.fields.get("Data.DataVersion");
  return {
    levelName: text(read.fields.get("Data.LevelName")),
    dataVersion: typeof dataVersion === "number" ? dataVersion : undefined,
    versionName: text(read.fields.get("Data.Version.Name")),
  };
}
