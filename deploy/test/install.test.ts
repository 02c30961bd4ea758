import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { type TempDir, tempDir } from "@mcops/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const TOOLS = [
  "webhook",
  "backup",
  "restart-with-warning",
  "idle-monitor",
  "log-tailer",
  "jar-download",
  "revive",
  "hibernate",
  "dashboard",
];
const DROPINS = ["backup.sh", "restart-with-warning.sh", "webhook.sh", "idle-monitor.py", "log-tailer.py", "revive.py"];

let work: TempDir;
let release: string;

/** install.sh from the staged release (what the tarball holds), into `root`. */
function install(root: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync("bash", [join(release, "install.sh"), "--root", root, ...args], {
    encoding: "utf8",
    env: { PATH: "/usr/bin:/bin:/usr/sbin:/sbin" },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Every file and link under `dir` with its content hash (or link target), mode and mtime. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (path: string): void => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      const stat = lstatSync(full);
      const key = relative(dir, full);
      if (stat.isSymbolicLink()) out[key] = `-> ${readlinkSync(full)}`;
      else if (stat.isDirectory()) walk(full);
      else {
        const hash = createHash("sha256").update(readFileSync(full)).digest("hex").slice(0, 16);
        out[key] = `${hash} ${(stat.mode & 0o7777).toString(8)} ${stat.mtimeMs}`;
      }
    }
  };
  walk(dir);
  return out;
}

beforeAll(() => {
  work = tempDir("mcops-install-");
  release = join(work.path, "mcops-test-linux-x64");
  execFileSync(process.execPath, [join(REPO, "scripts", "release.ts"), "--stage", release]);
}, 60_000);
afterAll(() => work.cleanup());

describe("install.sh", () => {
  it("installs every executable and drop-in name, runnable with no Node on PATH", () => {
    const root = join(work.path, "root-a");
    const result = install(root, "--create-restic-password");
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/mcops installed in .*\/opt\/mc-tools\. Next: fill in/);
    const prefix = join(root, "opt", "mc-tools");
    for (const name of [...TOOLS, ...DROPINS]) {
      // No PATH at all: the launcher finds its own runtime.
      const run = spawnSync(join(prefix, name), ["--help"], { encoding: "utf8", env: { PATH: "/nonexistent" } });
      expect({ name, status: run.status, stderr: run.stderr }).toEqual({ name, status: 0, stderr: "" });
      expect(run.stdout).toMatch(/Options:|--help/);
    }
    expect(readlinkSync(join(prefix, "backup.sh"))).toBe("backup");
    const version = spawnSync(join(prefix, "webhook"), ["--version"], { encoding: "utf8", env: {} });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  }, 60_000);

  it("writes units, cron, logrotate and mode-600 config templates, and the repository password on request", () => {
    const root = join(work.path, "root-b");
    install(root, "--with-restart", "--create-restic-password", "--prefix", "/srv/mcops");
    const unit = readFileSync(join(root, "etc", "systemd", "system", "log-tailer.service"), "utf8");
    expect(unit).toMatch(/^ExecStart=\/srv\/mcops\/log-tailer$/m);
    expect(existsSync(join(root, "etc", "systemd", "system", "log-tailer@.service"))).toBe(true);
    const cron = readFileSync(join(root, "etc", "cron.d", "mc-backup"), "utf8");
    expect(cron).toContain("\n0 6 * * * root /srv/mcops/backup >> /var/log/mc-backup-cron.log 2>&1\n");
    expect(cron).toContain(
      "\n55 4,10,16,22 * * * root /srv/mcops/restart-with-warning >> /var/log/mc-restart-cron.log 2>&1\n",
    );
    expect(existsSync(join(root, "etc", "logrotate.d", "mc-tools"))).toBe(true);
    for (const file of ["backup.env", "webhook.env"]) {
      expect(lstatSync(join(root, "etc", "mc-backup", file)).mode & 0o777).toBe(0o600);
    }
    expect(lstatSync(join(root, "etc", "mc-backup")).mode & 0o777).toBe(0o700);
    const password = join(root, "root", ".restic-password");
    expect(lstatSync(password).mode & 0o777).toBe(0o600);
    expect(readFileSync(password, "utf8").trim()).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  }, 60_000);

  it("changes nothing the second time, and never overwrites config", () => {
    const root = join(work.path, "root-c");
    install(root);
    const env = join(root, "etc", "mc-backup", "backup.env");
    writeFileSync(env, "CONTROL_URL=https://panel.example.org\n", { mode: 0o600 });
    const before = snapshot(root);
    const again = install(root);
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(/nothing changed$/m);
    expect(again.stdout).toContain(`keep ${env} (yours; the shipped one is`);
    expect(snapshot(root)).toEqual(before);
  }, 60_000);

  it("--dry-run prints the plan and writes nothing; --uninstall keeps config, logs and data", () => {
    const root = join(work.path, "root-d");
    const dry = install(root, "--dry-run");
    expect(dry.status).toBe(0);
    expect(dry.stdout).toMatch(/^install .*\/opt\/mc-tools\/runtime\/node$/m);
    expect(dry.stdout).toMatch(/would: install -m 0755/);
    expect(existsSync(root)).toBe(false);

    install(root);
    const gone = install(root, "--uninstall");
    expect(gone.status).toBe(0);
    expect(existsSync(join(root, "opt", "mc-tools"))).toBe(false);
    expect(existsSync(join(root, "etc", "systemd", "system", "idle-monitor.service"))).toBe(false);
    expect(existsSync(join(root, "etc", "cron.d", "mc-backup"))).toBe(false);
    expect(existsSync(join(root, "etc", "mc-backup", "backup.env"))).toBe(true);
    expect(gone.stdout).toMatch(/^kept: /m);
  }, 60_000);

  it("refuses unknown options and a relative prefix in one line (exit 2)", () => {
    const root = join(work.path, "root-e");
    expect(install(root, "--frobnicate")).toMatchObject({
      status: 2,
      stderr: "install.sh: unknown option --frobnicate — see install.sh --help\n",
    });
    expect(install(root, "--prefix", "opt")).toMatchObject({ status: 2 });
  });
});
