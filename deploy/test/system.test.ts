import { execFile, execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  appendFileSync,
  chmodSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import {
  buildWorld,
  type DiscordStandIn,
  type GameServer,
  type PanelStandIn,
  startDiscordStandIn,
  startGameServer,
  startPanelStandIn,
  type TempDir,
  tempDir,
} from "@mcops/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Container } from "./system/container.ts";
import { cannotBoot, debianRootfs, RELEASES, type Release } from "./system/rootfs.ts";

/**
 * The release installed and run under real systemd, on each Debian an operator may run (11, 12 and 13, with systemd
 * 247, 252 and 257): the Debian booted with systemd-nspawn (systemd as PID 1), the release tarball installed by its own
 * install.sh as deploy/README.md says, restic and rclone from that Debian's packages inside, the panel, Discord and the
 * game stand-ins on the host's loopback (the container shares its network). The steps run in order, each on what the
 * one before left, as an operator's first days would; every release runs the same steps with the same assertions.
 */
const REPO = fileURLToPath(new URL("../..", import.meta.url));
const WHY_NOT = cannotBoot();
const VOLUMES = "/var/lib/pterodactyl/volumes";
/** The units the release installs, by name; a template by an instance of it. */
const UNITS = readdirSync(join(REPO, "deploy", "systemd"))
  .filter((f) => f.endsWith(".service"))
  .map((f) => f.replace("@.service", "@verify.service"));

/** A unit's hardening settings that take one word (yes, strict, read-only, invisible, native, mnt), as its file has them. */
function oneWordSettings(unit: string): string[] {
  const text = readFileSync(join(REPO, "deploy", "systemd", unit.replace(/@\w+\.service$/, "@.service")), "utf8");
  const settings =
    /^(?:Protect\w+|Private\w+|Restrict\w+|LockPersonality|MemoryDenyWriteExecute|NoNewPrivileges|SystemCallArchitectures)=\S+$/gm;
  return [...text.matchAll(settings)].map((m) => m[0]);
}

/**
 * What systemd (PID 1) said about a unit file of the release or a drop-in of it: a line it could not take ("Unknown key
 * name", "Unknown lvalue", "Failed to parse", each "FILE:LINE: ..."), or a setting it ignores or cannot apply.
 */
const UNIT_FILE_WORD = /\/(?:log-tailer|idle-monitor|dashboard)@?\.service(?:\.d\/[^:]*)?:\d+: /;
const UNIT_WORD =
  /^(?:log-tailer|idle-monitor|dashboard)(?:@[\w-]+)?\.service: .*\b[A-Z]\w+=.*\b(?:ignoring|not supported|unsupported|deprecated)\b/;

/** The release tarballs every Debian installs: 1.0.0 and the upgrade to 1.0.1, built once for all of them. */
const tarball = { first: "", upgrade: "" };
let tarballs: TempDir | undefined;

/** Each release's root file system, all built side by side from the start (debootstrap, once per machine). */
const rootfs = new Map<string, Promise<string>>();

beforeAll(async () => {
  for (const release of WHY_NOT ? [] : RELEASES) {
    const built = debianRootfs(release, (line) => process.stderr.write(`system test: ${line}\n`));
    built.catch(() => {}); // its release's describe reports the failure
    rootfs.set(release.suite, built);
  }
  tarballs = tempDir("mcops-system-");
  const dir = tarballs.path;
  await run(process.execPath, [join(REPO, "scripts", "release.ts"), "--tarball", dir]);
  const [made] = readdirSync(dir).filter((f) => f.endsWith(".tar.gz"));
  tarball.first = await asVersion(dir, join(dir, made as string), "1.0.0");
  // The upgrade's change: the log tailer's unit has a new MemoryMax=.
  tarball.upgrade = await asVersion(dir, join(dir, made as string), "1.0.1", (tree) => {
    const unit = join(tree, "systemd", "log-tailer.service");
    writeFileSync(unit, readFileSync(unit, "utf8").replace(/^MemoryMax=.*$/m, "MemoryMax=300M"));
  });
}, 10 * 60_000);

afterAll(() => tarballs?.cleanup());

/** A command run without blocking: the root file systems may be building meanwhile. */
function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => execFile(command, args, (error) => (error ? reject(error) : resolve())));
}

/** The tarball `made` (as `npm run release` makes it) as `version`, with `edit` applied to its tree. */
async function asVersion(dir: string, made: string, version: string, edit: (tree: string) => void = () => {}) {
  const tree = join(dir, version);
  mkdirSync(tree);
  await run("tar", ["-xzf", made, "-C", tree]);
  const [top] = readdirSync(tree);
  writeFileSync(join(tree, top as string, "VERSION"), `${version}\n`);
  edit(join(tree, top as string));
  const out = join(dir, `mcops-${version}-linux-x64.tar.gz`);
  await run("tar", ["-czf", out, "-C", tree, "--owner=0", "--group=0", top as string]);
  return out;
}

function systemTest(release: Release): void {
  let box: Container;
  let panel: PanelStandIn;
  let discord: DiscordStandIn;
  let game: GameServer;
  const uuid = randomUUID();
  const world = `${VOLUMES}/${uuid}`;

  let handSnapshot = "";
  const newestSnapshot = async () => {
    const list = JSON.parse(await box.run("/opt/mc-tools/backup snapshots --json")) as { id: string; time: string }[];
    return list.sort((a, b) => a.time.localeCompare(b.time)).at(-1)?.id ?? "";
  };

  const titles = () => discord.messages.map((m) => String(m.body.embeds?.[0]?.title ?? m.body.content));
  const count = (title: string) => titles().filter((t) => t === title).length;

  /** Waits (bounded) for a condition that may need the container to answer. */
  async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) {
        const logs = await box.exec("tail -n 20 /var/log/mc-*.log; journalctl -n 30 --no-pager -o short-monotonic");
        throw new Error(
          `waited ${timeoutMs / 1000} s for ${what}; Discord has: ${titles().join(" | ")}\n${logs.stdout}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** A line of the game's log, appended as the game does, to the volume of `dir` (inside the container). */
  function gameSays(dir: string, text: string): void {
    appendFileSync(box.path(`${dir}/logs/latest.log`), `[12:00:00] [Server thread/INFO]: ${text}\n`);
  }

  /** A join, posted before the next (joins close together are posted as one message). */
  async function joins(dir: string, player: string): Promise<void> {
    const before = count(`${player} joined the game`);
    gameSays(dir, `${player} joined the game`);
    await until(`${player}'s join posted`, () => count(`${player} joined the game`) > before);
  }

  function writeConfig(inside: string, text: string): void {
    const file = box.path(inside);
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(file, text, { mode: 0o600 });
    chmodSync(file, 0o600);
  }

  /** A server's volume as Wings makes it: the world, owned by the game's user (988), mode 700. */
  function volume(dir: string): void {
    const host = box.path(dir);
    mkdirSync(join(host, "logs"), { recursive: true });
    buildWorld(host, { chunksPerRegion: 2 });
    writeFileSync(join(host, "logs", "latest.log"), "");
    execFileSync("chown", ["-R", "988:988", host]);
    chmodSync(host, 0o700);
  }

  // One release after the other: each container's systemd runs in the test's own cgroup (container.ts), which two
  // systemd instances side by side would share (each stopping and moving the other's services).
  describe(`the release on a booted Debian ${release.debian} (systemd ${release.systemd})`, () => {
    beforeAll(async () => {
      // Fails, not skips, when the machine cannot boot a container: the reason is the test's error.
      if (WHY_NOT) throw new Error(`the system test cannot run here: ${WHY_NOT}`);
      const lower = await rootfs.get(release.suite);
      if (!lower) throw new Error(`no root file system was started for Debian ${release.debian}`);
      box = await Container.boot(lower, `mcops-${release.suite}-${process.pid}`);
      volume(world);
      panel = await startPanelStandIn({
        servers: [{ uuid, state: "running" }],
        logFile: box.path(`${world}/logs/latest.log`),
      });
      discord = await startDiscordStandIn();
      game = await startGameServer();
    }, 20 * 60_000);

    afterAll(async () => {
      await box?.close();
      await Promise.all([panel?.close(), discord?.close(), game?.close()]);
    }, 120_000);

    it(`runs systemd ${release.systemd}, restic ${release.restic} and rclone ${release.rclone}, Debian ${release.debian}'s own`, async () => {
      expect(await box.run("cat /etc/debian_version")).toMatch(new RegExp(`^${release.debian}\\.`));
      expect(await box.run("systemctl --version")).toMatch(new RegExp(`^systemd ${release.systemd} `));
      expect(await box.run("restic version")).toMatch(new RegExp(`^restic ${release.restic.replaceAll(".", "\\.")} `));
      expect(await box.run("rclone version")).toMatch(
        new RegExp(`^rclone v${release.rclone.replaceAll(".", "\\.")}\\b`),
      );
    });

    it("installs from the release tarball with its install.sh, as deploy/README.md says", async () => {
      copyFileSync(tarball.first, box.path("/root/mcops-1.0.0-linux-x64.tar.gz"));
      const out = await box.run(
        "cd /root && tar -xzf mcops-1.0.0-linux-x64.tar.gz && ./mcops-*/install.sh --create-restic-password --download-contact admin@example.com",
      );
      expect(out).toMatch(/^mcops installed in \/opt\/mc-tools\. Next:/m);
      expect(await box.run("systemctl cat log-tailer.service | head -n 1")).toContain(
        "/etc/systemd/system/log-tailer.service",
      );
      expect(await box.run("ls /opt/mc-tools/docs")).toMatch(/system\.md/);
      // The launchers' compile cache: root's directory, filled by a first start.
      expect(await box.run("stat -c '%a %U' /var/cache/mc-tools")).toBe("700 root\n");
      await box.run("/opt/mc-tools/webhook --version");
      expect(await box.run("find /var/cache/mc-tools/node -type f | wc -l")).not.toBe("0\n");
    });

    it(`systemd ${release.systemd} takes every unit as written: verify says nothing, each hardening setting is in force, the exposure is deploy/README.md's`, async () => {
      // On this Debian's own systemd-analyze: silent, not only exit 0 (a warning there is an ignored setting).
      const verify = await box.exec(`SYSTEMD_COLORS=0 systemd-analyze verify ${UNITS.join(" ")}`);
      expect(verify.stderr + verify.stdout).toBe("");
      expect(verify.code).toBe(0);
      for (const unit of UNITS) {
        const settings = oneWordSettings(unit);
        expect(settings.length).toBeGreaterThan(15);
        const keys = settings.map((line) => `-p ${line.split("=")[0]}`).join(" ");
        const shown = (await box.run(`systemctl show ${keys} ${unit}`)).trim().split("\n");
        expect(shown.sort(), unit).toEqual(settings.sort());
      }
      // The exposure deploy/README.md gives this release, as this systemd scores the loaded units (a template's
      // instance as the unit it is a template of).
      const exposure = async (unit: string) => {
        const out = await box.run(`systemd-analyze security --no-pager ${unit}`);
        return /Overall exposure level for \S+: (\d+\.\d)/.exec(out)?.[1];
      };
      const [tailer, monitor, dashboard] = await Promise.all(
        ["log-tailer.service", "idle-monitor.service", "dashboard.service"].map(exposure),
      );
      expect(await exposure("log-tailer@verify.service")).toBe(tailer);
      expect(await exposure("idle-monitor@verify.service")).toBe(monitor);
      const readme = readFileSync(join(REPO, "deploy", "README.md"), "utf8");
      const row = new RegExp(
        `^\\| Debian ${release.debian} +\\| ${release.systemd} +\\| yes +\\| ${tailer}, ${monitor}, ${dashboard} +\\|`,
        "m",
      );
      expect(readme).toMatch(row);
    });

    it("is configured, allows the idle monitor its local repository, initialises it and backs up by hand", async () => {
      writeConfig(
        "/etc/mc-backup/backup.env",
        [
          `CONTROL_URL=${panel.url}`,
          `CONTROL_KEY=${panel.apiKey}`,
          `SERVER_ID=${panel.server.identifier}`,
          `WORLD_DIR=${world}`,
          "RESTIC_REPOSITORY=rclone:local:/srv/restic",
          "RESTIC_PASSWORD_FILE=/root/.restic-password",
          `GAME_ADDRESS=${game.address}`,
          "IDLE_POLL=2s",
          "IDLE_AFTER=4s",
          "DOWNLOAD_CONTACT=admin@example.com",
          "",
        ].join("\n"),
      );
      writeConfig("/etc/mc-backup/webhook.env", `WEBHOOK_URL=${discord.webhookUrl()}\nPLAY_HOST=play.example.test\n`);
      writeConfig("/root/.config/rclone/rclone.conf", "[local]\ntype = local\n");
      const again = await box.run("./mcops-*/install.sh");
      expect(again).toMatch(/^install \/etc\/systemd\/system\/idle-monitor\.service\.d\/repository\.conf$/m);
      expect(again).toMatch(/^note: \/srv\/restic does not exist yet/m);
      await box.run("/opt/mc-tools/backup init");
      await box.run("/opt/mc-tools/backup");
      expect(titles()).toEqual(["Backup started", "Backup completed"]);
      handSnapshot = await newestSnapshot();
    }, 180_000);

    it("runs log-tailer and idle-monitor; a join is posted; the idle backup writes the local repository from its sandbox", async () => {
      // restic's cache folder is gone (a fresh /root): the unit makes it before its sandbox is set up.
      rmSync(box.path("/root/.cache"), { recursive: true, force: true });
      await box.run("systemctl enable --now log-tailer idle-monitor");
      await joins(world, "Steve");
      // Somebody plays (the game's ping says so), then leaves: IDLE_AFTER later the idle monitor backs up.
      const steve = await game.join("Steve");
      // The monitor writes its log at the end of its first decision, which may still be under way: no file yet is "not yet".
      const monitorLog = () => {
        try {
          return readFileSync(box.path("/var/log/mc-idle-monitor.log"), "utf8");
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "ENOENT") return "";
          throw error;
        }
      };
      await until("the idle monitor to see Steve", () => /1 player online/.test(monitorLog()));
      await steve.leave();
      await until("the idle backup", () => count("Backup completed") === 2, 180_000);
      expect(count("Backup failed")).toBe(0);
      // Retention keeps one a day: the idle backup's snapshot took the place of the one made by hand.
      expect(await newestSnapshot()).not.toBe(handSnapshot);
      expect(readdirSync(box.path("/root/.cache/restic"))).not.toEqual([]);
      expect(await box.run("grep -c 'idle backup' /var/log/mc-idle-monitor.log")).not.toBe("0\n");
      // The idle backup, run from the monitor's sandbox, kept its record; backup status shows its figures from it.
      const records = readFileSync(box.path("/var/lib/mc-tools/events/backup.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { type: string; snapshot?: string; addedBytes?: unknown });
      const done = records.filter((r) => r.type === "backup.done").at(-1);
      expect(done).toMatchObject({ snapshot: expect.any(String), addedBytes: expect.any(Number) });
      expect((await newestSnapshot()).startsWith(done?.snapshot as string)).toBe(true);
      const status = JSON.parse(await box.run("/opt/mc-tools/backup status --json")) as {
        newest: { id: string; addedBytes?: number };
      };
      expect(status.newest).toMatchObject({ id: done?.snapshot, addedBytes: done?.addedBytes });
    }, 300_000);

    it("stops a unit whose config is wrong once (exit 78, no restarts), its error in the journal as an error", async () => {
      await box.exec("systemctl start idle-monitor@nosuch");
      await until(
        "idle-monitor@nosuch failed",
        async () => (await box.run("systemctl show -p ActiveState --value idle-monitor@nosuch")).trim() === "failed",
      );
      const show = await box.run("systemctl show -p NRestarts -p ExecMainStatus idle-monitor@nosuch");
      expect(show).toContain("NRestarts=0");
      expect(show).toContain("ExecMainStatus=78");
      const errors = await box.run("journalctl -u idle-monitor@nosuch -p err -o cat --no-pager");
      expect(errors).toMatch(/^idle-monitor: /m);
      // A running service's WARN line (no Docker socket in this container) at priority warning.
      const warnings = await box.run("journalctl -u log-tailer -p warning -o cat --no-pager");
      expect(warnings).toMatch(/ WARN no Docker socket at /);
    });

    it("fires a cron line under cron's environment", async () => {
      // The shipped backup line's environment, every minute, running `backup status` (a read of the repository).
      writeFileSync(
        box.path("/etc/cron.d/mcops-system-test"),
        '* * * * * root /opt/mc-tools/backup status >> /var/log/mc-status-cron.log 2>&1; echo "exit $?" >> /var/log/mc-status-cron.log\n',
      );
      await until(
        "cron to run backup status",
        () => {
          try {
            return /^exit 0$/m.test(readFileSync(box.path("/var/log/mc-status-cron.log"), "utf8"));
          } catch {
            return false;
          }
        },
        130_000,
      );
      rmSync(box.path("/etc/cron.d/mcops-system-test"));
    }, 150_000);

    it("loses no log line over forced logrotates, and posts each join once over restart, kill -9 and reboot", async () => {
      const tailerLog = () =>
        readdirSync(box.path("/var/log"))
          .filter((f) => f.startsWith("mc-log-tailer.log"))
          .map((f) => {
            const bytes = readFileSync(box.path(`/var/log/${f}`));
            return (f.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("utf8");
          })
          .join("");
      for (let i = 0; i < 3; i++) {
        await joins(world, `Rot${i}`);
        await box.run("logrotate -f /etc/logrotate.d/mc-tools");
      }
      await joins(world, "Rot3");
      for (let i = 0; i < 4; i++) expect(tailerLog().match(new RegExp(`join Rot${i}:`, "g"))).toHaveLength(1);

      await box.run("systemctl restart log-tailer");
      await joins(world, "AfterRestart");
      const pid = (await box.run("systemctl show -p MainPID --value log-tailer")).trim();
      await box.run("systemctl kill -s KILL log-tailer");
      await until("log-tailer restarted after kill -9", async () => {
        const now = (await box.run("systemctl show -p MainPID -p ActiveState --value log-tailer")).split("\n");
        return now[0] !== pid && now[0] !== "0" && now[1] === "active";
      });
      await joins(world, "AfterKill");

      // Discord unreachable: the stop ends within TimeoutStopSec, says what it could not send, and the next start posts it.
      discord.inject({ kind: "drop", times: 10_000 });
      gameSays(world, "WhileDown joined the game");
      await until("the tailer to read WhileDown's join", () => /join WhileDown:/.test(tailerLog()));
      await box.run("systemctl stop log-tailer");
      const stopped = await box.run("systemctl show -p Result --value log-tailer");
      expect(stopped.trim()).toBe("success");
      expect(tailerLog()).toMatch(/WARN notification "WhileDown joined the game" not sent/);
      const posted = [...discord.messages];
      discord.reset(); // the faults go; the messages so far are kept
      discord.messages.push(...posted);
      await box.run("systemctl start log-tailer");
      await until("WhileDown's join posted after the start", () => count("WhileDown joined the game") === 1);
      await box.reboot();
      await joins(world, "AfterReboot");
      const joined = titles().filter((t) => t.endsWith(" joined the game"));
      expect(joined).toEqual([
        "Steve joined the game",
        "Rot0 joined the game",
        "Rot1 joined the game",
        "Rot2 joined the game",
        "Rot3 joined the game",
        "AfterRestart joined the game",
        "AfterKill joined the game",
        "WhileDown joined the game",
        "AfterReboot joined the game",
      ]);
    }, 400_000);

    it("upgrades: a unit that changed is reloaded and the running service has the new setting", async () => {
      copyFileSync(tarball.upgrade, box.path("/root/mcops-1.0.1-linux-x64.tar.gz"));
      const before = (await box.run("systemctl show -p MainPID --value log-tailer")).trim();
      const out = await box.run(
        "cd /root && rm -rf up && mkdir up && tar -xzf mcops-1.0.1-linux-x64.tar.gz -C up && ./up/mcops-*/install.sh",
      );
      expect(out).toMatch(/^mcops upgraded in \/opt\/mc-tools: 1\.0\.0 -> 1\.0\.1$/m);
      expect(out).not.toContain("Next:");
      const show = await box.run("systemctl show -p MemoryMax -p NeedDaemonReload -p MainPID log-tailer");
      expect(show).toContain(`MemoryMax=${300 * 1024 * 1024}`);
      expect(show).toContain("NeedDaemonReload=no");
      expect(show).not.toContain(`MainPID=${before}\n`);
      await joins(world, "AfterUpgrade");
    }, 180_000);

    it("runs a second server's template instances, each with its own config, state, logs and repository drop-in", async () => {
      const uuid2 = randomUUID();
      const world2 = `${VOLUMES}/${uuid2}`;
      volume(world2);
      writeConfig(
        "/etc/mc-backup/beta/backup.env",
        [
          `CONTROL_URL=${panel.url}`,
          `CONTROL_KEY=${panel.apiKey}`,
          `SERVER_ID=${panel.server.identifier}`,
          `WORLD_DIR=${world2}`,
          "RESTIC_REPOSITORY=/srv/restic-beta",
          "RESTIC_PASSWORD_FILE=/root/.restic-password",
          `GAME_ADDRESS=${game.address}`,
          "IDLE_POLL=2s",
          "",
        ].join("\n"),
      );
      writeConfig("/etc/mc-backup/beta/webhook.env", `WEBHOOK_URL=${discord.webhookUrl()}\n`);
      await box.run("mkdir -p /srv/restic-beta");
      const again = await box.run("./up/mcops-*/install.sh");
      expect(again).toMatch(/^install \/etc\/systemd\/system\/idle-monitor@beta\.service\.d\/repository\.conf$/m);
      await box.run("systemctl enable --now log-tailer@beta idle-monitor@beta");
      await until("log-tailer@beta following", () => {
        try {
          return readFileSync(box.path("/var/log/mc-tools/beta/mc-log-tailer.log"), "utf8").includes("following");
        } catch {
          return false;
        }
      });
      await joins(world2, "Alex");
      expect(readdirSync(box.path("/var/lib/mc-tools/beta")).some((f) => /^log-tailer-.*\.json$/.test(f))).toBe(true);
      await until("idle-monitor@beta's first look", () => {
        try {
          return /players? online \[ping\]/.test(
            readFileSync(box.path("/var/log/mc-tools/beta/mc-idle-monitor.log"), "utf8"),
          );
        } catch {
          return false;
        }
      });
      const sandbox = await box.run("systemctl show -p ReadWritePaths --value idle-monitor@beta");
      expect(sandbox).toContain("/srv/restic-beta");
      expect(sandbox).not.toContain("/srv/restic ");
    }, 120_000);

    it(`systemd ${release.systemd} said nothing about a unit file over every boot, reload and upgrade`, async () => {
      const said = (await box.run("journalctl _PID=1 -o cat --no-pager")).split("\n");
      expect(said.length).toBeGreaterThan(100);
      expect(said.filter((line) => UNIT_FILE_WORD.test(line) || UNIT_WORD.test(line))).toEqual([]);
    });

    it("--uninstall stops and removes everything it installed, and keeps config, logs and backups", async () => {
      const out = await box.run("./up/mcops-*/install.sh --uninstall");
      expect(out).toMatch(/^stop and disable log-tailer@beta\.service$/m);
      expect(out).toMatch(/^stop and disable idle-monitor@beta\.service$/m);
      const units = await box.run("systemctl list-units --all --plain --no-legend 'log-tailer*' 'idle-monitor*'");
      expect(units.trim()).toBe("");
      expect(await box.run("ls /opt /etc/systemd/system")).not.toMatch(/mc-tools|log-tailer|idle-monitor/);
      expect(await box.run("ls /var/cache")).not.toMatch(/mc-tools/);
      expect(await box.run("ls /etc/mc-backup /srv/restic")).toMatch(/backup\.env[\s\S]*config/);
    }, 120_000);
  });
}

for (const release of RELEASES) systemTest(release);
