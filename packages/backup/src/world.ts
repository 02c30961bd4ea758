import { existsSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { JobError } from "@mcops/core/errors";

/**
 * Which directories make up the world (issue: level-name from server.properties, default "world", with its _nether
 * and _the_end siblings when present; Bukkit-style servers keep the dimensions there, vanilla keeps them inside).
 */
export function levelName(worldDir: string): string {
  const file = join(worldDir, "server.properties");
  if (!existsSync(file)) return "world";
  for (const line of readFileSync(file, "utf8").split(/\r?\n/)) {
    const match = /^\s*level-name\s*[=:]\s*(.*?)\s*$/.exec(line);
    // server.properties is a Java properties file: \: and \= are escapes.
    if (match) return (match[1] ?? "").replace(/\\(.)/g, "$1") || "world";
  }
  return "world";
}

export function worldDirectories(worldDir: string): string[] {
  const level = levelName(worldDir);
  const main = join(worldDir, level);
  if (!isDirectory(main)) {
    throw new JobError(`the world "${level}" is not in the server volume`, {
      where: main,
      hint: "check WORLD_DIR in backup.env (the server's volume, /var/lib/pterodactyl/volumes/<uuid>) and level-name in server.properties",
    });
  }
  return [level, `${level}_nether`, `${level}_the_end`].map((name) => join(worldDir, name)).filter(isDirectory);
}

export function backupPaths(worldDir: string, extra: readonly string[] = []): string[] {
  const paths = worldDirectories(worldDir);
  for (const path of extra) {
    const full = isAbsolute(path) ? path : join(worldDir, path);
    if (!existsSync(full)) {
      throw new JobError(`the extra path "${path}" does not exist`, {
        where: full,
        hint: "fix BACKUP_EXTRA_PATHS or --extra-path",
      });
    }
    if (!paths.includes(full)) paths.push(full);
  }
  return paths;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
