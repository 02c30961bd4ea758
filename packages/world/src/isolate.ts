/**
 * The script `unshare --mount --propagation private` runs before restic: `$1` (the server volume) is bind-mounted onto
 * itself read-only and `nosymfollow`, in this process's own mount namespace only, then restic takes its place (same
 * pid). restic walks the world by path names; without this, the game's user could swap a directory for a link while
 * restic reads and have it read any file on the host into the snapshot, which a restore would then give to the game.
 * With it, no link inside the volume is followed (the kernel answers ELOOP) and nothing there can be written.
 */
const ISOLATE_SCRIPT =
  'mount --bind -- "$1" "$1" && mount -o remount,bind,ro,nosymfollow -- "$1" && shift && exec "$@"';

/** unshare's arguments that run `command args` with no link followed below `dir`. */
export function isolated(dir: string, command: string, args: readonly string[]): string[] {
  return [
    "--mount",
    "--propagation",
    "private",
    "--",
    "sh",
    "-c",
    ISOLATE_SCRIPT,
    "mcops-isolate",
    dir,
    command,
    ...args,
  ];
}
