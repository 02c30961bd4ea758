import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { tempDir } from "@mcops/testkit";
import { isolated } from "@mcops/world/isolate";
import { CronExpressionParser } from "cron-parser";
import { describe, expect, it } from "vitest";

const DEPLOY = fileURLToPath(new URL("..", import.meta.url));
/** logrotate lives in /usr/sbin, which a non-login PATH may lack. */
const LOGROTATE = existsSync("/usr/sbin/logrotate") ? "/usr/sbin/logrotate" : "logrotate";
const UNITS = readdirSync(join(DEPLOY, "systemd")).filter((f) => f.endsWith(".service"));
/** The units whose tool reads the game server's volume (log-tailer: logs/latest.log; idle-monitor: it and the backup). */
const VOLUME_READERS = UNITS.filter((unit) => /^(log-tailer|idle-monitor)@?\.service$/.test(unit));

/** The capabilities a unit's CapabilityBoundingSet= lines leave (an empty assignment resets the list). */
function boundingSet(unit: string): string[] {
  const text = readFileSync(join(DEPLOY, "systemd", unit), "utf8");
  const lines = [...text.matchAll(/^CapabilityBoundingSet=(.*)$/gm)].map((m) => (m[1] ?? "").trim());
  expect(lines.length, `${unit} sets no CapabilityBoundingSet`).toBeGreaterThan(0);
  let caps: string[] = [];
  for (const line of lines) {
    if (line.startsWith("~")) throw new Error(`${unit}: an inverted CapabilityBoundingSet is not handled by this test`);
    caps = line === "" ? [] : [...caps, ...line.split(/\s+/)];
  }
  return caps;
}

/** `cat FILE` as root with only `caps` in the bounding set (what systemd gives a User=root service). */
function catWithBoundingSet(caps: string[], file: string): { status: number | null; stdout: string; stderr: string } {
  const set = ["-all", ...caps.map((cap) => `+${cap.replace(/^CAP_/, "").toLowerCase()}`)].join(",");
  const result = spawnSync("setpriv", [`--bounding-set=${set}`, "--inh-caps=-all", "cat", file], {
    encoding: "utf8",
    timeout: 10_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const isRoot = process.getuid?.() === 0;

/** A copy of the unit whose ExecStart exists here (verify checks the binary), as an instance for templates. */
function unitCopy(dir: string, unit: string): string {
  const name = unit.replace("@.service", "@test.service");
  const text = readFileSync(join(DEPLOY, "systemd", unit), "utf8").replace(/^ExecStart=\S+/m, "ExecStart=/bin/true");
  writeFileSync(join(dir, name), text);
  return join(dir, name);
}

describe("systemd units", () => {
  it.each(UNITS)("%s passes systemd-analyze verify", (unit) => {
    const dir = tempDir("mcops-unit-");
    try {
      const result = spawnSync("systemd-analyze", ["verify", unitCopy(dir.path, unit)], { encoding: "utf8" });
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
    } finally {
      dir.cleanup();
    }
  });

  it.each(UNITS)("%s: the exposure deploy/README.md records is what systemd-analyze security says", (unit) => {
    const dir = tempDir("mcops-unit-");
    try {
      const out = execFileSync("systemd-analyze", ["security", "--offline=true", unitCopy(dir.path, unit)], {
        encoding: "utf8",
      });
      const exposure = /Overall exposure level for \S+: (\d+\.\d) (\w+)/.exec(out);
      expect(exposure).not.toBeNull();
      const readme = readFileSync(join(DEPLOY, "README.md"), "utf8");
      const row = new RegExp(
        `\\|\\s*\`${unit.replace(/[.@]/g, "\\$&")}\`\\s*\\|\\s*${exposure?.[1]} ${exposure?.[2]}\\s*\\|`,
      );
      expect(readme).toMatch(row);
      expect(Number(exposure?.[1])).toBeLessThan(4);
    } finally {
      dir.cleanup();
    }
  });

  it.skipIf(!isRoot)(
    "each unit that reads the game volume can, as root under its capability bounding set, read a log in a 0700 988:988 volume",
    () => {
      expect(VOLUME_READERS).toHaveLength(4);
      const dir = tempDir("mcops-caps-");
      try {
        // What Wings makes: the server's volume 0700 owned by 988:988; the game writes logs/latest.log inside it.
        const volume = join(dir.path, "volumes", "0a1b2c3d-0000-4000-8000-000000000000");
        mkdirSync(join(volume, "logs"), { recursive: true });
        const log = join(volume, "logs", "latest.log");
        writeFileSync(log, "[12:00:00] [Server thread/INFO]: Steve joined the game\n");
        for (const path of [log, join(volume, "logs"), volume]) chownSync(path, 988, 988);
        chmodSync(volume, 0o700);
        // The check can fail: with no capabilities root is refused.
        expect(catWithBoundingSet([], log)).toMatchObject({
          status: 1,
          stderr: expect.stringMatching(/Permission denied/),
        });
        for (const unit of VOLUME_READERS) {
          const text = readFileSync(join(DEPLOY, "systemd", unit), "utf8");
          // As root the bounding set is what the service gets; a non-root User= would need AmbientCapabilities too.
          expect(text, unit).toMatch(/^User=root$/m);
          const read = catWithBoundingSet(boundingSet(unit), log);
          expect({ unit, ...read }).toEqual({ unit, status: 0, stdout: expect.stringContaining("joined"), stderr: "" });
        }
      } finally {
        dir.cleanup();
      }
    },
  );

  it.runIf(isRoot)(
    "the idle monitor's units let the backups they start read the volume in a namespace with no link followed",
    () => {
      const dir = tempDir("mcops-isolate-");
      try {
        const volume = join(dir.path, "volume");
        mkdirSync(join(dir.path, "host"), { mode: 0o700 });
        writeFileSync(join(dir.path, "host", "secret"), "root only\n", { mode: 0o600 });
        mkdirSync(volume);
        symlinkSync(join(dir.path, "host"), join(volume, "world"));
        // backup's own isolation (a bind mount of the volume, read-only and nosymfollow, in a mount namespace of its
        // own), here around a read through a link inside the volume.
        const read = (caps: string[]) => {
          const set = ["-all", ...caps.map((cap) => `+${cap.replace(/^CAP_/, "").toLowerCase()}`)].join(",");
          return spawnSync(
            "setpriv",
            [
              `--bounding-set=${set}`,
              "--inh-caps=-all",
              "unshare",
              ...isolated(volume, "cat", [join(volume, "world", "secret")]),
            ],
            { encoding: "utf8", timeout: 10_000 },
          );
        };
        // Without CAP_SYS_ADMIN no namespace can be made (the backup then refuses to run, see SECURITY.md).
        expect(read(["CAP_DAC_READ_SEARCH"]).status).not.toBe(0);
        for (const unit of ["idle-monitor.service", "idle-monitor@.service"]) {
          const result = read(boundingSet(unit));
          expect({ unit, status: result.status, stderr: result.stderr }).toEqual({
            unit,
            status: 1,
            stderr: expect.stringContaining("Too many levels of symbolic links"),
          });
          expect(result.stdout).toBe("");
          const text = readFileSync(join(DEPLOY, "systemd", unit), "utf8");
          expect(text).toMatch(/^RestrictNamespaces=mnt$/m);
          expect(text).toMatch(/^SystemCallFilter=@system-service @mount$/m);
        }
      } finally {
        dir.cleanup();
      }
    },
  );

  it.each(UNITS)("%s caps its memory with MemoryMax= (between 128M and 4G)", (unit) => {
    const text = readFileSync(join(DEPLOY, "systemd", unit), "utf8");
    const service = text.slice(text.indexOf("[Service]"), text.indexOf("[Install]"));
    const caps = [...service.matchAll(/^MemoryMax=(\d+)([KMG])$/gm)];
    expect(caps, `${unit}: one MemoryMax=<number>K|M|G in [Service]`).toHaveLength(1);
    const [, number, unitSuffix] = caps[0] as RegExpMatchArray;
    const mib = Number(number) * { K: 1 / 1024, M: 1, G: 1024 }[unitSuffix as "K" | "M" | "G"];
    expect(mib).toBeGreaterThanOrEqual(128);
    expect(mib).toBeLessThanOrEqual(4096);
    // deploy/README.md's table says the same.
    const row = new RegExp(
      `\\|\\s*\`${unit.replace(/[.@]/g, "\\$&")}\`\\s*\\|[^|\\n]*\\|\\s*${number}${unitSuffix}\\s*\\|`,
    );
    expect(readFileSync(join(DEPLOY, "README.md"), "utf8")).toMatch(row);
  });

  it("the dashboard's unit trusts nginx's X-Real-IP, which the nginx site sets", () => {
    expect(readFileSync(join(DEPLOY, "systemd", "dashboard.service"), "utf8")).toMatch(
      /^Environment=DASHBOARD_TRUST_PROXY=1$/m,
    );
    expect(readFileSync(join(DEPLOY, "nginx", "mc-dashboard.conf"), "utf8")).toMatch(
      /^\s*proxy_set_header X-Real-IP \$remote_addr;$/m,
    );
  });

  it("every tool unit runs its tool from /opt/mc-tools and restarts on failure", () => {
    for (const unit of UNITS) {
      const text = readFileSync(join(DEPLOY, "systemd", unit), "utf8");
      expect(text).toMatch(/^ExecStart=\/opt\/mc-tools\/[a-z-]+( |$)/m);
      expect(text).toMatch(/^Restart=on-failure$/m);
      for (const setting of ["NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes"]) {
        expect(text).toContain(setting);
      }
    }
  });
});

describe("cron.d/mc-backup", () => {
  const lines = readFileSync(join(DEPLOY, "cron.d", "mc-backup"), "utf8").split("\n");

  it("parses: environment lines and jobs of five time fields, a user and a command", () => {
    const jobs = lines.map((l) => l.replace(/^#(?=\d)/, "")).filter((l) => /^\d/.test(l));
    expect(jobs).toHaveLength(3);
    for (const job of jobs) {
      const fields = job.split(/\s+/);
      expect(() => CronExpressionParser.parse(fields.slice(0, 5).join(" "))).not.toThrow();
      expect(fields[5]).toBe("root");
      // A tool of /opt/mc-tools, run as it is or in a memory-capped scope of systemd-run's.
      const command = fields[6] === "systemd-run" ? fields.slice(7).find((f) => f.startsWith("/")) : fields[6];
      expect(command).toMatch(/^\/opt\/mc-tools\//);
    }
    for (const line of lines.filter((l) => l && !l.startsWith("#") && !/^\d/.test(l))) {
      expect(line).toMatch(/^[A-Z_]+=\S+$/);
    }
    expect(readFileSync(join(DEPLOY, "cron.d", "mc-backup"), "utf8").endsWith("\n")).toBe(true);
  });

  it("has docs/system.md 8's jobs: the 06:00 backup on, the restart at :55 of 4, 10, 16, 22 off until chosen", () => {
    expect(lines).toContain("0 6 * * * root /opt/mc-tools/backup >> /var/log/mc-backup-cron.log 2>&1");
    expect(lines).toContain(
      "#55 4,10,16,22 * * * root /opt/mc-tools/restart-with-warning >> /var/log/mc-restart-cron.log 2>&1",
    );
    const next = CronExpressionParser.parse("55 4,10,16,22 * * *", { currentDate: "2026-11-21T05:00:00" }).next();
    expect(next.getHours()).toBe(10);
  });

  it("runs the restore drill weekly, Sunday at 07:00, waiting for a backup that runs late", () => {
    const drill = lines.find((l) => / drill /.test(l) && !l.startsWith("#"));
    expect(drill).toBe(
      "0 7 * * 0 root systemd-run --scope --quiet --collect -p MemoryMax=1536M /opt/mc-tools/backup drill --wait >> /var/log/mc-backup-cron.log 2>&1",
    );
    // From Saturday 2026-11-21 the next run is Sunday the 22nd at 07:00, then a week later.
    const runs = CronExpressionParser.parse("0 7 * * 0", { currentDate: "2026-11-21T12:00:00" });
    const first = runs.next();
    expect([first.getDay(), first.getDate(), first.getHours(), first.getMinutes()]).toEqual([0, 22, 7, 0]);
    expect(runs.next().getDate()).toBe(29);
  });
});

describe("logrotate.d/mc-tools", () => {
  it("is accepted by logrotate -d, rotates by renaming (no copytruncate) and keeps eight weeks", () => {
    const dir = tempDir("mcops-logrotate-");
    try {
      const config = join(DEPLOY, "logrotate.d", "mc-tools");
      const result = spawnSync(LOGROTATE, ["-d", "-s", join(dir.path, "state"), config], { encoding: "utf8" });
      expect(result.status).toBe(0);
      expect(result.stderr).toMatch(/rotating pattern: \/var\/log\/mc-\*\.log/);
      expect(result.stderr).not.toMatch(/error:/);
      const text = readFileSync(config, "utf8");
      expect(text).not.toMatch(/^\s*copytruncate/m);
      expect(text).toMatch(/^\s*rotate 8$/m);
    } finally {
      dir.cleanup();
    }
  });

  it("loses no line: a tool appending while the file is rotated ends with every line in one file or another", async () => {
    const dir = tempDir("mcops-logrotate-");
    try {
      const log = join(dir.path, "mc-test.log");
      const config = join(dir.path, "conf");
      const text = readFileSync(join(DEPLOY, "logrotate.d", "mc-tools"), "utf8")
        .replace(/^\/var\/log\/mc-\*\.log .*\{$/m, `${dir.path}/mc-*.log {`)
        .replace(/^\s*su root adm$/m, "")
        .replace(/^\s*create 0640 root adm$/m, "    create 0640")
        .replace(/^\s*(delaycompress|compress)$/gm, "");
      writeFileSync(config, text);
      // The same open-append-close per line the tools' logger does, while logrotate renames the file under it.
      const total = 20_000;
      const writer = spawn(process.execPath, [
        "-e",
        `const fs=require("fs");for(let i=0;i<${total};i++)fs.appendFileSync(${JSON.stringify(log)},"line "+i+"\\n");`,
      ]);
      const exited = new Promise((resolve) => writer.on("exit", resolve));
      let rotations = 0;
      let running = true;
      void exited.then(() => {
        running = false;
      });
      while (running && rotations < 6) {
        await sleep(40);
        if (spawnSync(LOGROTATE, ["-f", "-s", join(dir.path, "state"), config]).status === 0) rotations++;
        // When the tool creates the file between logrotate's rename and its create, logrotate keeps that file as
        // mc-test.log-<YYYYMMDDHH>.backup: one name an hour. Run daily from cron it never makes two in an hour; run
        // here many times a second, a second one would replace the first, so each is given a name of its own.
        for (const name of readdirSync(dir.path).filter((f) => f.endsWith(".backup"))) {
          renameSync(join(dir.path, name), join(dir.path, `${name}.${rotations}`));
        }
      }
      await exited;
      const files = readdirSync(dir.path).filter((f) => f.startsWith("mc-test.log"));
      const all = files.flatMap((f) => readFileSync(join(dir.path, f), "utf8").split("\n").filter(Boolean));
      expect(files.length).toBeGreaterThan(1);
      expect(all).toHaveLength(total);
      expect(new Set(all).size).toBe(total);
    } finally {
      dir.cleanup();
    }
  });
});
