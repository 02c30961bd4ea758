import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Debian root file systems for the system test, one per release an operator may run (Debian 11, 12 and 13), made by
 * Debian's debootstrap from the package archive this machine already uses, with what the toolkit needs on a VM
 * (systemd, cron, logrotate, restic, rclone). Each is cached under /var/cache/mcops-test by a key of what goes into it,
 * built once (a lock per release keeps two runs from building the same one together), and never written afterwards:
 * each boot runs on an overlay of it.
 */
export interface Release {
  /** Debian's code name, the suite debootstrap installs. */
  suite: "bullseye" | "bookworm" | "trixie";
  /** Debian's version number. */
  debian: 11 | 12 | 13;
  /** The systemd version the release ships (PID 1 in the container). */
  systemd: number;
  /** The restic and rclone versions of the release's packages, which the tests run. */
  restic: string;
  rclone: string;
}

export const RELEASES: readonly Release[] = [
  { suite: "bullseye", debian: 11, systemd: 247, restic: "0.11.0", rclone: "1.53.3" },
  { suite: "bookworm", debian: 12, systemd: 252, restic: "0.14.0", rclone: "1.60.1" },
  { suite: "trixie", debian: 13, systemd: 257, restic: "0.18.0", rclone: "1.60.1" },
];

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

/**
 * The archive apt uses on this machine (scripts/debian-archive.sh: deb822 sources first, then sources.list), for
 * debootstrap; set-up fetches the version matrix's restic and rclone from the same one.
 */
function mirror(): string {
  const script = fileURLToPath(new URL("../../../scripts/debian-archive.sh", import.meta.url));
  return execFileSync("bash", [script], { encoding: "utf8" }).trim();
}

/**
 * The cached root file system of a release, built when missing (a minute or two, once; at once afterwards). Releases
 * build side by side; the same release waits for the build under way.
 */
export async function debianRootfs(release: Release, log: (line: string) => void): Promise<string> {
  const { suite, debian } = release;
  const key = createHash("sha256")
    .update(`${suite} minbase ${PACKAGES.join(",")}`)
    .digest("hex")
    .slice(0, 12);
  const dir = join(CACHE, `debian${debian}-${key}`);
  if (existsSync(join(dir, ".complete"))) return dir;
  mkdirSync(CACHE, { recursive: true });
  // One builder per release at a time: flock holds the release's lock for the whole build; a second run waits, then
  // finds it complete. Different releases build side by side.
  const script = `
    set -e
    [ -e "$DIR/.complete" ] && exit 0
    rm -rf "$DIR.partial"
    debootstrap --variant=minbase --include="$PACKAGES" --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \\
      "$SUITE" "$DIR.partial" "$MIRROR" > "$DIR.log" 2>&1 || {
      echo "debootstrap failed; its log: $DIR.log" >&2; tail -n 5 "$DIR.log" >&2; exit 1; }
    rm -rf "$DIR.partial/var/cache/apt/archives/"*.deb
    touch "$DIR.partial/.complete"
    rm -rf "$DIR"
    mv "$DIR.partial" "$DIR"`;
  log(`building the Debian ${debian} (${suite}) root file system in ${dir} (debootstrap, once)`);
  const started = Date.now();
  const child = spawn("flock", [join(CACHE, `.lock-${suite}`), "sh", "-c", script], {
    env: { ...process.env, DIR: dir, PACKAGES: PACKAGES.join(","), SUITE: suite, MIRROR: mirror() },
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 15 * 60_000,
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => {
    child.once("error", (error) => {
      stderr += error.message;
      resolve(null);
    });
    child.once("close", resolve);
  });
  if (code !== 0) throw new Error(`cannot build the Debian ${debian} root file system: ${stderr}`);
  log(`built the Debian ${debian} root file system in ${Math.round((Date.now() - started) / 1000)} s`);
  return dir;
}
