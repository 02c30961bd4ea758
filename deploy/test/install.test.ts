import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
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
  "certs",
];
const DROPINS = ["backup.sh", "restart-with-warning.sh", "webhook.sh", "idle-monitor.py", "log-tailer.py", "revive.py"];

let work: TempDir;
let release: string;

type Result = { status: number | null; stdout: string; stderr: string };

/** install.sh from the staged release (what the tarball holds), into `root`. */
function install(root: string, ...args: string[]): Result {
  return installWith({}, root, ...args);
}

/** install() with extra environment (MCOPS_SYSTEMCTL: a stand-in for systemctl). */
function installWith(env: Record<string, string>, root: string, ...args: string[]): Result {
  const result = spawnSync("bash", [join(release, "install.sh"), "--root", root, ...args], {
    encoding: "utf8",
    env: { PATH: "/usr/bin:/bin:/usr/sbin:/sbin", ...env },
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * A systemctl stand-in that appends each call to `log` and, asked for the loaded instances of a template, reports a
 * running log-tailer@alpha and a failed idle-monitor@beta (with the bullet systemctl prints before failed units).
 */
function fakeSystemctl(dir: string, log: string): string {
  const path = join(dir, "systemctl");
  writeFileSync(
    path,
    `#!/bin/bash
echo "$*" >> ${JSON.stringify(log)}
if [ "$1" = list-units ]; then
  case "\${*: -1}" in
    'log-tailer@*.service') echo "log-tailer@alpha.service loaded active running mcops log-tailer for server alpha" ;;
    'idle-monitor@*.service') echo "● idle-monitor@beta.service loaded failed failed mcops idle-monitor for server beta" ;;
  esac
fi
exit 0
`,
    { mode: 0o755 },
  );
  return path;
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
});
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
  });

  it("a launcher gives MCOPS_NODE_FLAGS to Node for its own process only, split into words and never globbed", () => {
    const root = join(work.path, "root-flags");
    install(root);
    const launcher = join(root, "opt", "mc-tools", "log-tailer");
    // -p prints what Node was given and whether the variable is still there for the programs the tool would start;
    // the brackets would match a one-letter file in the working directory if the shell globbed them.
    writeFileSync(join(work.path, "p"), "");
    const run = spawnSync(launcher, ["--help"], {
      encoding: "utf8",
      cwd: work.path,
      env: { MCOPS_NODE_FLAGS: "--max-semi-space-size=1 -p [process.execArgv,process.env.MCOPS_NODE_FLAGS]" },
    });
    expect(run.stderr).toBe("");
    expect(run.stdout.replace(/\s+/g, " ").trim()).toBe(
      "[ [ '--max-semi-space-size=1', '-p', '[process.execArgv,process.env.MCOPS_NODE_FLAGS]' ], undefined ]",
    );
    // The compile cache's directory: root's alone; --uninstall takes it.
    expect(statSync(join(root, "var", "cache", "mc-tools")).mode & 0o777).toBe(0o700);
    mkdirSync(join(root, "var", "cache", "mc-tools", "node", "v0"), { recursive: true });
    writeFileSync(join(root, "var", "cache", "mc-tools", "node", "v0", "entry"), "");
    expect(install(root, "--uninstall").status).toBe(0);
    expect(existsSync(join(root, "var", "cache", "mc-tools"))).toBe(false);
    expect(existsSync(join(root, "var", "cache"))).toBe(true);
  });

  it("installs in full when the compile cache's place holds a link or a file, and leaves it as it is", () => {
    for (const [name, plant] of [
      ["root-cache-link", (path: string) => symlinkSync("/nonexistent", path)],
      ["root-cache-file", (path: string) => writeFileSync(path, "not a directory\n")],
    ] as const) {
      const root = join(work.path, name);
      const cache = join(root, "var", "cache", "mc-tools");
      mkdirSync(join(cache, ".."), { recursive: true });
      plant(cache);
      const result = install(root);
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
      expect(result.stdout).toContain(`keep ${cache} (not a directory install.sh made`);
      expect(existsSync(join(root, "etc", "systemd", "system", "log-tailer.service"))).toBe(true);
      expect(install(root, "--uninstall").status).toBe(0);
      expect(lstatSync(cache).isDirectory()).toBe(false);
    }
  });

  it("--uninstall keeps a compile cache directory that holds a file of someone else's, and finishes", () => {
    const root = join(work.path, "root-cache-kept");
    install(root);
    const cache = join(root, "var", "cache", "mc-tools");
    mkdirSync(join(cache, "node", "v0"), { recursive: true });
    writeFileSync(join(cache, "node", "v0", "entry"), "");
    writeFileSync(join(cache, "notes.txt"), "the operator's\n");
    const dry = install(root, "--uninstall", "--dry-run");
    expect(dry.status).toBe(0);
    expect(dry.stdout).toContain(`keep ${cache} (holds files install.sh did not write)`);
    const gone = install(root, "--uninstall");
    expect(gone.stderr).toBe("");
    expect(gone.status).toBe(0);
    expect(gone.stdout).toContain(`keep ${cache} (holds files install.sh did not write)`);
    expect(gone.stdout).toContain("kept: ");
    expect(readdirSync(cache)).toEqual(["notes.txt"]);
    expect(existsSync(join(root, "opt", "mc-tools"))).toBe(false);
  });

  it("--uninstall --dry-run says the empty compile cache directory would go, as the run does", () => {
    const root = join(work.path, "root-cache-dry");
    install(root);
    const cache = join(root, "var", "cache", "mc-tools");
    mkdirSync(join(cache, "node", "v0"), { recursive: true });
    expect(install(root, "--uninstall", "--dry-run").stdout).toContain(`remove ${cache}/`);
    expect(install(root, "--uninstall").stdout).toContain(`remove ${cache}/`);
    expect(existsSync(cache)).toBe(false);
  });

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
    for (const name of ["idle-monitor.service", "idle-monitor@.service"]) {
      const idle = readFileSync(join(root, "etc", "systemd", "system", name), "utf8");
      expect(idle).toMatch(/^ExecStart=\/srv\/mcops\/idle-monitor$/m);
      expect(idle).not.toContain("/opt/mc-tools");
    }
    for (const file of ["backup.env", "webhook.env"]) {
      expect(lstatSync(join(root, "etc", "mc-backup", file)).mode & 0o777).toBe(0o600);
    }
    expect(lstatSync(join(root, "etc", "mc-backup")).mode & 0o777).toBe(0o700);
    const password = join(root, "root", ".restic-password");
    expect(lstatSync(password).mode & 0o777).toBe(0o600);
    expect(readFileSync(password, "utf8").trim()).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  });

  it("installs the Wings renewal hook (mode 755, calling the installed tools) where certbot is set up, and only there", () => {
    const root = join(work.path, "root-le");
    mkdirSync(join(root, "etc", "letsencrypt"), { recursive: true });
    const result = install(root, "--prefix", "/srv/mcops");
    expect(result.status, result.stderr).toBe(0);
    const hook = join(root, "etc", "letsencrypt", "renewal-hooks", "deploy", "restart-wings.sh");
    expect(result.stdout).toMatch(new RegExp(`^install ${hook}$`, "m"));
    expect(statSync(hook).mode & 0o777).toBe(0o755);
    expect(readFileSync(hook, "utf8")).toMatch(/^MCOPS=\$\{MCOPS_PREFIX:-'\/srv\/mcops'\}$/m);
    expect(spawnSync("bash", ["-n", hook]).status).toBe(0);
    // Part of the plan like any other file: a second run changes nothing, a dry run says it, --uninstall removes it.
    expect(install(root, "--prefix", "/srv/mcops").stdout).toMatch(/nothing changed$/m);
    const fresh = join(work.path, "root-le-dry");
    mkdirSync(join(fresh, "etc", "letsencrypt"), { recursive: true });
    expect(install(fresh, "--dry-run").stdout).toContain("restart-wings.sh");
    expect(existsSync(join(fresh, "etc", "letsencrypt", "renewal-hooks"))).toBe(false);
    const gone = install(root, "--uninstall", "--prefix", "/srv/mcops");
    expect(gone.stdout).toContain(`remove ${hook}`);
    expect(existsSync(hook)).toBe(false);
    const without = join(work.path, "root-no-le");
    install(without);
    expect(existsSync(join(without, "etc", "letsencrypt"))).toBe(false);
  });

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
    expect(again.stdout).not.toMatch(/\/tmp\/tmp\./);
    expect(snapshot(root)).toEqual(before);
  });

  it("ships every document the tools' messages cite, under <prefix>/docs/, and --uninstall takes them away", () => {
    const root = join(work.path, "root-docs");
    install(root);
    const docs = join(root, "opt", "mc-tools", "docs");
    const cited = new Set<string>();
    for (const name of readdirSync(join(release, "lib"))) {
      const text = readFileSync(join(release, "lib", name), "utf8");
      for (const [, doc] of text.matchAll(/\b(docs\/[a-z-]+\.md|SECURITY\.md|packages\/[a-z-]+\/README\.md)/g))
        cited.add((doc as string).replace(/^docs\//, ""));
    }
    expect([...cited]).toEqual(expect.arrayContaining(["system.md", "SECURITY.md"]));
    for (const doc of cited) expect(existsSync(join(docs, doc)), doc).toBe(true);
    install(root, "--uninstall");
    expect(existsSync(join(root, "opt", "mc-tools"))).toBe(false);
  });

  it("takes a cron file it wrote itself, with or without --with-restart, as its own, and names no temporary file", () => {
    const root = join(work.path, "root-cron");
    install(root, "--with-restart");
    const again = install(root);
    expect(again.stdout).not.toContain("keep");
    expect(again.stdout).toMatch(/nothing changed$/m);
    const cron = join(root, "etc", "cron.d", "mc-backup");
    writeFileSync(cron, `${readFileSync(cron, "utf8")}# mine\n`);
    expect(install(root).stdout).toContain(`keep ${cron} (yours; the shipped one is cron.d/mc-backup in the release)`);
  });

  it("allows the idle monitor to write a repository on this disk (a drop-in per server), and only such a one", () => {
    const root = join(work.path, "root-repo");
    install(root);
    const env = join(root, "etc", "mc-backup", "backup.env");
    const dropin = join(root, "etc", "systemd", "system", "idle-monitor.service.d", "repository.conf");
    writeFileSync(env, "RESTIC_REPOSITORY=rclone:disk:/srv/restic/../restic\n", { mode: 0o600 });
    mkdirSync(join(root, "root", ".config", "rclone"), { recursive: true });
    writeFileSync(join(root, "root", ".config", "rclone", "rclone.conf"), "[disk]\ntype = local\n");
    const first = install(root);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toContain(`install ${dropin}`);
    expect(first.stdout).toContain("note: /srv/restic does not exist yet");
    expect(readFileSync(dropin, "utf8")).toMatch(/^\[Service\]\nReadWritePaths=-\/srv\/restic\n$/m);
    expect(install(root).stdout).toMatch(/nothing changed$/m);

    // A second server's own repository: its own instance's drop-in.
    mkdirSync(join(root, "etc", "mc-backup", "beta"));
    writeFileSync(join(root, "etc", "mc-backup", "beta", "backup.env"), "RESTIC_REPOSITORY=/srv/beta-restic\n", {
      mode: 0o600,
    });
    install(root);
    const beta = join(root, "etc", "systemd", "system", "idle-monitor@beta.service.d", "repository.conf");
    expect(readFileSync(beta, "utf8")).toContain("ReadWritePaths=-/srv/beta-restic\n");

    // Moved to the cloud: the drop-in goes. A folder a unit file cannot hold is said, and written nowhere.
    writeFileSync(env, "RESTIC_REPOSITORY=rclone:gdrive:restic\n");
    writeFileSync(join(root, "etc", "mc-backup", "beta", "backup.env"), "RESTIC_REPOSITORY=/srv/restic%i\n", {
      mode: 0o600,
    });
    const moved = install(root);
    expect(moved.stdout).toContain(`remove ${dropin}`);
    expect(existsSync(dropin)).toBe(false);
    expect(moved.stdout).toMatch(
      /^note: backup: the repository's folder "\/srv\/restic%i" cannot be written into a unit file/m,
    );
    expect(readFileSync(beta, "utf8")).toContain("ReadWritePaths=-/srv/beta-restic\n");

    const gone = install(root, "--uninstall");
    expect(gone.status).toBe(0);
    expect(existsSync(join(root, "etc", "systemd", "system", "idle-monitor@beta.service.d"))).toBe(false);
  });

  it("adds the weekly drill to a cron file from before it, once, and leaves one whose drill line is commented out", () => {
    const root = join(work.path, "root-drill");
    install(root);
    const cron = join(root, "etc", "cron.d", "mc-backup");
    const mine = "# my own schedule\n0 5 * * * root /opt/mc-tools/backup >> /var/log/mc-backup-cron.log 2>&1\n";
    writeFileSync(cron, mine);
    const upgraded = install(root);
    expect(upgraded.status).toBe(0);
    expect(upgraded.stdout).toContain(`add the weekly restore drill to ${cron}`);
    const text = readFileSync(cron, "utf8");
    expect(text.startsWith(mine)).toBe(true);
    expect(text).toMatch(
      /\n0 7 \* \* 0 root systemd-run --scope --quiet --collect -p MemoryMax=1536M \/opt\/mc-tools\/backup drill --wait >> \/var\/log\/mc-backup-cron.log 2>&1\n$/,
    );
    expect(install(root).stdout).toMatch(/nothing changed$/m);
    expect(readFileSync(cron, "utf8")).toBe(text);
    const off = text.replace(/^0 7 \* \* 0/m, "#0 7 * * 0");
    writeFileSync(cron, off);
    expect(install(root).stdout).not.toContain("add the weekly restore drill");
    expect(readFileSync(cron, "utf8")).toBe(off);
  });

  it("--download-contact puts PaperMC's contact into backup.env once, and refuses a value the env file cannot hold", () => {
    const root = join(work.path, "root-contact");
    const env = join(root, "etc", "mc-backup", "backup.env");
    const first = install(root);
    expect(first.stdout).toContain(`next: add DOWNLOAD_CONTACT=<your e-mail or web address> to ${env}`);
    const set = install(root, "--download-contact", "ops@example.com");
    expect(set.status).toBe(0);
    expect(set.stdout).toContain(`add DOWNLOAD_CONTACT=ops@example.com to ${env}`);
    const again = install(root, "--download-contact=other@example.com");
    expect(again.stdout).toMatch(/nothing changed$/m);
    expect(readFileSync(env, "utf8").match(/^DOWNLOAD_CONTACT=.*$/gm)).toEqual(["DOWNLOAD_CONTACT=ops@example.com"]);
    expect(statSync(env).mode & 0o777).toBe(0o600);
    const other = join(work.path, "root-contact-bad");
    const bad = install(other, "--download-contact", "ops@example.com $(id)");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^install\.sh: --download-contact must be one word without quotes or \$/);
    expect(existsSync(other)).toBe(false);
  });

  it("--dry-run prints the plan and writes nothing; --uninstall keeps config, logs and data", () => {
    const root = join(work.path, "root-d");
    const dry = install(root, "--dry-run");
    expect(dry.status).toBe(0);
    expect(dry.stdout).toMatch(/^install .*\/opt\/mc-tools\/runtime\/node$/m);
    expect(dry.stdout).toMatch(/would: install -m 0755/);
    const planned = install(root, "--dry-run", "--download-contact", "ops@example.com", "--create-restic-password");
    expect(planned.stdout).toContain("add DOWNLOAD_CONTACT=ops@example.com to");
    expect(planned.stdout).toContain("create ");
    expect(planned.stdout).toMatch(/^create .*\/etc\/cron\.d\/mc-backup/m);
    expect(existsSync(root)).toBe(false);

    install(root);
    const gone = install(root, "--uninstall");
    expect(gone.status).toBe(0);
    expect(existsSync(join(root, "opt", "mc-tools"))).toBe(false);
    expect(existsSync(join(root, "etc", "systemd", "system", "idle-monitor.service"))).toBe(false);
    expect(existsSync(join(root, "etc", "cron.d", "mc-backup"))).toBe(false);
    expect(existsSync(join(root, "etc", "mc-backup", "backup.env"))).toBe(true);
    expect(gone.stdout).toMatch(/^kept: /m);
  });

  it("--uninstall from a shared prefix (/usr/local) removes every file it installed and nothing else", () => {
    const root = join(work.path, "root-f");
    const local = join(root, "usr", "local");
    // Someone else's files: beside the tools, in the lib/ the bundles go to, and in bin/.
    const foreign = [join(local, "notes.txt"), join(local, "lib", "libfoo.so.1"), join(local, "bin", "other-tool")];
    for (const file of foreign) {
      mkdirSync(join(file, ".."), { recursive: true });
      writeFileSync(file, "not mcops\n");
    }
    const before = snapshot(root);
    expect(install(root, "--prefix", "/usr/local")).toMatchObject({ status: 0, stderr: "" });
    const installed = Object.keys(snapshot(root)).filter((path) => !(path in before));
    const inPrefix = installed.filter((path) => path.startsWith(join("usr", "local")));
    expect(inPrefix).toContain(join("usr", "local", "lib", "backup.mjs"));
    expect(inPrefix).toContain(join("usr", "local", "backup.sh"));
    expect(inPrefix.length).toBeGreaterThanOrEqual(2 * TOOLS.length + DROPINS.length + 3);

    // A dry run names the files and removes nothing.
    const afterInstall = snapshot(root);
    const dry = install(root, "--prefix", "/usr/local", "--uninstall", "--dry-run");
    expect(dry.status).toBe(0);
    expect(dry.stdout).toMatch(/^remove .*\/usr\/local\/lib\/backup\.mjs$/m);
    expect(dry.stdout).not.toMatch(/^remove .*\/usr\/local\/?$/m);
    expect(snapshot(root)).toEqual(afterInstall);

    const gone = install(root, "--prefix", "/usr/local", "--uninstall");
    expect(gone).toMatchObject({ status: 0, stderr: "" });
    const after = snapshot(root);
    for (const file of foreign) expect(readFileSync(file, "utf8")).toBe("not mcops\n");
    const config = installed.filter((path) => path.startsWith(join("etc", "mc-backup")));
    expect(installed.filter((path) => path in after)).toEqual(config);
    for (const dir of ["runtime", "nginx"]) expect(existsSync(join(local, dir))).toBe(false);
    expect(existsSync(join(local, "lib"))).toBe(true);
  });

  it("--uninstall keeps the prefix directory, and what is in it, when it holds files it did not install", () => {
    const root = join(work.path, "root-g");
    install(root);
    const prefix = join(root, "opt", "mc-tools");
    writeFileSync(join(prefix, "my-notes.txt"), "mine\n");
    const gone = install(root, "--uninstall");
    expect(gone.status).toBe(0);
    expect(gone.stdout).toContain(`keep ${prefix} (holds files install.sh did not write)`);
    expect(readdirSync(prefix)).toEqual(["my-notes.txt"]);
  });

  it("--uninstall stops and disables every running template instance, then the template, through systemctl", () => {
    const root = join(work.path, "root-h");
    const calls = join(work.path, "systemctl-h.log");
    const systemctl = fakeSystemctl(work.path, calls);
    install(root);

    // --root alone leaves systemd alone (no stand-in: nothing to stop).
    const dry = installWith({ MCOPS_SYSTEMCTL: systemctl }, root, "--uninstall", "--dry-run");
    expect(dry.status).toBe(0);
    expect(dry.stdout).toContain(`would: ${systemctl} disable --now log-tailer@alpha.service`);
    expect(dry.stdout).toContain(`would: ${systemctl} disable --now idle-monitor@beta.service`);
    // A dry run only asks.
    expect(
      readFileSync(calls, "utf8")
        .split("\n")
        .filter(Boolean)
        .every((c) => c.startsWith("list-units ")),
    ).toBe(true);
    writeFileSync(calls, "");

    const gone = installWith({ MCOPS_SYSTEMCTL: systemctl }, root, "--uninstall");
    expect(gone).toMatchObject({ status: 0, stderr: "" });
    expect(gone.stdout).toMatch(/^stop and disable log-tailer@alpha\.service$/m);
    const made = readFileSync(calls, "utf8")
      .split("\n")
      .filter((c) => c && !c.startsWith("list-units "));
    expect(made).toEqual([
      "disable --now log-tailer.service",
      "disable --now log-tailer@alpha.service",
      "disable log-tailer@.service",
      "disable --now idle-monitor.service",
      "disable --now idle-monitor@beta.service",
      "disable idle-monitor@.service",
      "disable --now dashboard.service",
      // A failed unit (idle-monitor@beta) would stay listed as not-found and failed after its file is gone.
      "reset-failed log-tailer.service idle-monitor.service dashboard.service log-tailer@*.service idle-monitor@*.service",
      "daemon-reload",
    ]);
  });

  it("restarts the running services after an upgrade, and nothing when nothing changed", () => {
    const root = join(work.path, "root-u");
    const calls = join(work.path, "calls-u.log");
    const systemctl = fakeSystemctl(work.path, calls);
    install(root);
    // A newer program: one bundle differs from what is installed.
    writeFileSync(join(root, "opt", "mc-tools", "lib", "webhook.mjs"), "// an older webhook\n");
    const upgrade = installWith({ MCOPS_SYSTEMCTL: systemctl }, root);
    expect(upgrade).toMatchObject({ status: 0, stderr: "" });
    expect(upgrade.stdout).toMatch(/^restart the running services with the new program$/m);
    expect(upgrade.stdout).toMatch(/^mcops \S+ in .*: brought up to date$/m);
    expect(upgrade.stdout).not.toContain("Next:");
    expect(readFileSync(calls, "utf8").split("\n").filter(Boolean)).toEqual([
      "try-restart log-tailer.service idle-monitor.service dashboard.service log-tailer@*.service idle-monitor@*.service",
    ]);
    // A unit that changed (an older MemoryMax): systemd reloads the units before the restart.
    writeFileSync(calls, "");
    const unit = join(root, "etc", "systemd", "system", "log-tailer.service");
    writeFileSync(unit, readFileSync(unit, "utf8").replace(/^MemoryMax=.*$/m, "MemoryMax=128M"));
    writeFileSync(join(root, "opt", "mc-tools", "VERSION"), "0.0.1\n");
    const units = installWith({ MCOPS_SYSTEMCTL: systemctl }, root);
    expect(units.stdout).toContain(`install ${unit}`);
    expect(units.stdout).toMatch(/^mcops upgraded in .*: 0\.0\.1 -> \S+$/m);
    expect(readFileSync(calls, "utf8").split("\n").filter(Boolean)).toEqual([
      "daemon-reload",
      "try-restart log-tailer.service idle-monitor.service dashboard.service log-tailer@*.service idle-monitor@*.service",
    ]);
    writeFileSync(calls, "");
    const again = installWith({ MCOPS_SYSTEMCTL: systemctl }, root);
    expect(again.stdout).toMatch(/nothing changed/);
    expect(readFileSync(calls, "utf8")).toBe("");
  });

  it("--uninstall with --root and no systemctl stand-in calls no systemctl", () => {
    const root = join(work.path, "root-i");
    install(root);
    const gone = install(root, "--uninstall");
    expect(gone.status).toBe(0);
    expect(gone.stdout).not.toMatch(/stop and disable|systemctl/);
  });

  it("refuses unknown options and a relative prefix in one line (exit 2)", () => {
    const root = join(work.path, "root-e");
    expect(install(root, "--frobnicate")).toMatchObject({
      status: 2,
      stderr: "install.sh: unknown option --frobnicate — see install.sh --help\n",
    });
    expect(install(root, "--prefix", "opt")).toMatchObject({ status: 2 });
    // What units, cron and sed would read otherwise: a space, %, & and #. Nothing is written.
    for (const prefix of ["/opt/my tools", "/opt/50%", "/opt/a&b", "/opt/a#b"]) {
      const refused = install(root, "--prefix", prefix);
      expect(refused.status, prefix).toBe(2);
      expect(refused.stderr).toMatch(/^install\.sh: --prefix may hold only letters, digits and/);
    }
    expect(existsSync(root)).toBe(false);
  });

  it("keeps someone else's docs/, VERSION and restart-wings.sh in a shared prefix, installed over and uninstalled", () => {
    const root = join(work.path, "root-foreign");
    const local = join(root, "usr", "local");
    const theirs = { [join(local, "docs", "system.md")]: "my notes\n", [join(local, "VERSION")]: "3.2.1\n" };
    const hook = join(root, "etc", "letsencrypt", "renewal-hooks", "deploy", "restart-wings.sh");
    theirs[hook] = "#!/bin/sh\n# the operator's own\nsystemctl restart wings\n";
    for (const [file, text] of Object.entries(theirs)) {
      mkdirSync(join(file, ".."), { recursive: true });
      writeFileSync(file, text, { mode: 0o755 });
    }
    const first = install(root, "--prefix", "/usr/local");
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toContain(`keep ${join(local, "docs", "system.md")} (not installed by mcops)`);
    expect(first.stdout).toContain(`keep ${hook} (yours;`);
    expect(first.stdout).toMatch(/^mcops installed in /m);
    expect(existsSync(join(local, "docs", "contract.md"))).toBe(true);
    const again = install(root, "--prefix", "/usr/local");
    expect(again.stdout).toMatch(/nothing changed$/m);
    expect(install(root, "--prefix", "/usr/local", "--uninstall").status).toBe(0);
    for (const [file, text] of Object.entries(theirs)) expect(readFileSync(file, "utf8"), file).toBe(text);
    expect(existsSync(join(local, "docs", "contract.md"))).toBe(false);
  });

  it("--uninstall follows no link planted in <prefix>/docs", () => {
    const root = join(work.path, "root-doclink");
    install(root);
    const docs = join(root, "opt", "mc-tools", "docs");
    const elsewhere = join(root, "elsewhere");
    mkdirSync(join(elsewhere, "backup"), { recursive: true });
    writeFileSync(join(elsewhere, "backup", "README.md"), "precious\n");
    execFileSync("rm", ["-rf", join(docs, "packages")]);
    execFileSync("ln", ["-s", elsewhere, join(docs, "packages")]);
    expect(install(root, "--uninstall").status).toBe(0);
    expect(readFileSync(join(elsewhere, "backup", "README.md"), "utf8")).toBe("precious\n");
  });

  it("writes no drop-in that would open the system or the program to the idle monitor; reads backup.env as backup does", () => {
    const root = join(work.path, "root-wide");
    install(root);
    const env = join(root, "etc", "mc-backup", "backup.env");
    const dropin = join(root, "etc", "systemd", "system", "idle-monitor.service.d", "repository.conf");
    for (const [repository, said] of [
      [
        "/",
        /^note: backup: the repository's folder \/ is not allowed to the idle monitor: it is the whole file system/m,
      ],
      ["/srv/restic/../..", /^note: backup: the repository's folder \/ is not allowed/m],
      ["/etc", /^note: backup: the repository's folder \/etc is not allowed/m],
      ["/root", /^note: backup: the repository's folder \/root is not allowed/m],
      [
        "/opt/mc-tools/restic",
        /^note: the repository's folder \/opt\/mc-tools\/restic is not allowed .* \/opt\/mc-tools/m,
      ],
    ] as const) {
      writeFileSync(env, `RESTIC_REPOSITORY=${repository}\n`, { mode: 0o600 });
      const result = install(root);
      expect(result.stdout, repository).toMatch(said);
      expect(existsSync(dropin), repository).toBe(false);
    }
    writeFileSync(env, "  export RESTIC_REPOSITORY=/srv/restic\n", { mode: 0o600 });
    install(root);
    expect(readFileSync(dropin, "utf8")).toContain("ReadWritePaths=-/srv/restic\n");
  });
});
