import { isAbsolute, posix } from "node:path";

/** What `rclone config dump` says of one remote (only what is read here). */
export interface RcloneRemote {
  type?: string;
  remote?: string;
}

/** Remotes that keep their data below another remote's path (`remote = other:path`); their files are that path's. */
const WRAPPERS = new Set(["alias", "crypt", "chunker", "compress", "hasher"]);

/** Unit files read `%` as a specifier and split on white space; such a folder is not written into a drop-in. */
const UNIT_SAFE = /^\/[A-Za-z0-9._/+@,:=~-]*$/;

/**
 * The folder on this machine's own disk that a restic repository writes to, or undefined when it is elsewhere (a cloud
 * remote, a REST server): a plain path, `local:<path>`, or `rclone:<remote>:<path>` where the remote is rclone's local
 * file system (`:local` or a remote of type local), or an alias, crypt, chunker, compress or hasher remote over one
 * (their whole base folder). The idle monitor's unit (ProtectSystem=strict) must be allowed to write it; install.sh
 * writes the drop-in that does.
 */
export function repositoryFolder(repository: string, remotes: Record<string, RcloneRemote>): string | undefined {
  if (repository.startsWith("/")) return absolute(repository);
  if (repository.startsWith("local:")) return absolute(repository.slice("local:".length));
  const rclone = /^rclone:(:?[^:]+):(.*)$/.exec(repository);
  if (!rclone) return undefined;
  return rcloneFolder(rclone[1] as string, rclone[2] as string, remotes, 0);
}

function rcloneFolder(
  remote: string,
  path: string,
  remotes: Record<string, RcloneRemote>,
  depth: number,
): string | undefined {
  // An on-the-fly backend (`:local:`, `:local,opt=x:`) is local by its name.
  if (remote.startsWith(":")) return remote.split(",")[0] === ":local" ? absolute(path) : undefined;
  const config = Object.hasOwn(remotes, remote) ? remotes[remote] : undefined;
  if (!config || depth > 8) return undefined;
  if (config.type === "local") return absolute(path);
  if (!config.type || !WRAPPERS.has(config.type) || !config.remote) return undefined;
  const base = config.remote;
  const inner = /^(:?[^:/]+):(.*)$/.exec(base);
  // An alias keeps names as they are: the folder is the path below its base. The others change names or split files:
  // their whole base folder.
  const below =
    config.type === "alias" ? posix.join(inner ? (inner[2] as string) : base, path) : inner ? inner[2] : base;
  if (!inner) return absolute(below as string);
  return rcloneFolder(inner[1] as string, below as string, remotes, depth + 1);
}

function absolute(path: string): string | undefined {
  return isAbsolute(path) ? posix.normalize(path).replace(/(.)\/+$/, "$1") : undefined;
}

/**
 * Folders the idle monitor's sandbox keeps read-only and that no repository belongs in: the system's (a repository in
 * one, or one above it, would let the sandbox rewrite programs and configuration that root runs outside it).
 */
const SYSTEM = [
  "/bin",
  "/boot",
  "/dev",
  "/etc",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/proc",
  "/run",
  "/sbin",
  "/sys",
  "/usr",
  "/root/.ssh",
];
/** Folders that hold others' files: a repository may be below them (/srv/restic, /root/restic), not them themselves. */
const SHARED = ["/home", "/media", "/mnt", "/opt", "/root", "/srv", "/tmp", "/var", "/var/lib", "/var/log", "/var/tmp"];

/**
 * Why the idle monitor's unit must not be allowed to write `folder` (a normalised absolute path), or undefined: `/`,
 * a system folder or one below it, a folder above one (`/var` holds /var/lib), or a shared folder itself. A typo such
 * as `RESTIC_REPOSITORY=/srv/restic/..` or an alias to `/` would otherwise undo ProtectSystem=strict.
 */
export function tooWide(folder: string): string | undefined {
  const within = (dir: string, parent: string) => dir === parent || dir.startsWith(`${parent}/`);
  if (folder === "/") return "it is the whole file system";
  const system = SYSTEM.find((dir) => within(folder, dir));
  if (system) return `it is in ${system}, which the system keeps read-only`;
  const above = [...SYSTEM, ...SHARED].find((dir) => dir !== folder && within(dir, folder));
  if (above) return `it holds ${above}`;
  if (SHARED.includes(folder)) return "it holds other software's files";
  return undefined;
}

/** Whether `folder` can be written into a unit file as it is. */
export function unitSafe(folder: string): boolean {
  return UNIT_SAFE.test(folder);
}
