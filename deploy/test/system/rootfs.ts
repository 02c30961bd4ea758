import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A Debian 12 root file system for the system test, made by Debian's debootstrap from the package archive this machine
 * already uses, with what the toolkit needs on a VM (systemd, cron, logrotate, restic, rclone). It is cached under
 * /var/cache/mcops-test by a key of what goes into it, built once (a lock keeps two runs from building it together),
 * and never written afterwards: each boot runs on an overlay of it.
 */
const SUITE = "bookworm";
const PACKAGES = [
  "systemd",
  "systemd-sysv",
  "dbus",
  "cron",
  "logrotate",
  "restic",
  "rclone",
  "ca-certificates",
  "procps",
  "util-linux",
];
export const CACHE = process.env.MCOPS_SYSTEM_CACHE ?? "/var/cache/mcops-test";

/** Why this machine cannot boot the system test's container, or undefined when it can. */
export function cannotBoot(): string | undefined {
  if (process.getuid?.() !== 0) return "the system test boots a container with systemd-nspawn, which needs root";
  for (const tool of ["/usr/sbin/debootstrap", "/usr/bin/systemd-nspawn", "/usr/bin/nsenter"]) {
    if (!existsSync(tool)) return `${tool} is missing (npm test's set-up installs debootstrap and systemd-container)`;
  }
  const overlay = readFileSync("/proc/filesystems", "utf8").includes("overlay");
  if (!overlay) return "the kernel has no overlay file system (modprobe overlay)";
  return undefined;
}

/** The archive apt uses here (deb822 sources first, then sources.list), for debootstrap. */
function mirror(): string {
  const texts: string[] = [];
  const dir = "/etc/apt/sources.list.d";
  if (existsSync(dir)) {
    for (const name of readdirSync(dir).sort())
      if (name.endsWith(".sources")) texts.push(readFileSync(join(dir, name), "utf8"));
  }
  for (const text of texts) {
    for (const stanza of text.split(/\n\s*\n/)) {
      const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1];
      const suites = /^Suites:\s*(.+)$/m.exec(stanza)?.[1]?.split(/\s+/) ?? [];
      if (uri && suites.includes(SUITE) && !uri.includes("security")) return uri;
    }
  }
  const list = existsSync("/etc/apt/sources.list") ? readFileSync("/etc/apt/sources.list", "utf8") : "";
  const line = new RegExp(`^deb\\s+(?:\\[[^\\]]*\\]\\s+)?(\\S+)\\s+${SUITE}\\s`, "m").exec(list);
  return line?.[1] ?? "http://deb.debian.org/debian";
}

/** The cached root file system, built when missing (minutes, once; seconds afterwards). */
export function debianRootfs(log: (line: string) => void): string {
  const key = createHash("sha256")
    .update(`${SUITE} minbase ${PACKAGES.join(",")}`)
    .digest("hex")
    .slice(0, 12);
  const dir = join(CACHE, `debian12-${key}`);
  if (existsSync(join(dir, ".complete"))) return dir;
  mkdirSync(CACHE, { recursive: true });
  // One builder at a time: flock holds the lock for the whole build; a second run waits, then finds it complete.
  const script = `
    set -e
    [ -e "$DIR/.complete" ] && exit 0
    rm -rf "$DIR.partial"
    debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$DIR.partial" "$MIRROR" > "$DIR.log" 2>&1 || {
      echo "debootstrap failed; its log: $DIR.log" >&2; tail -n 5 "$DIR.log" >&2; exit 1; }
    rm -rf "$DIR.partial/var/cache/apt/archives/"*.deb
    touch "$DIR.partial/.complete"
    rm -rf "$DIR"
    mv "$DIR.partial" "$DIR"`;
  log(`building the Debian 12 root file system in ${dir} (debootstrap, once)`);
  const built = spawnSync("flock", [join(CACHE, ".lock"), "sh", "-c", script], {
    env: { ...process.env, DIR: dir, PACKAGES: PACKAGES.join(","), SUITE, MIRROR: mirror() },
    encoding: "utf8",
    timeout: 15 * 60_000,
  });
  if (built.status !== 0) throw new Error(`cannot build the root file system: ${built.stderr || built.error}`);
  return dir;
}
