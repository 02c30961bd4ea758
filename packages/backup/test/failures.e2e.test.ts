import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitUntil } from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { PASSWORD, type Server, startServer } from "./harness.ts";

let server: Server;

afterEach(async () => {
  await server?.close();
});

async function ready(options: Parameters<typeof startServer>[0] = {}): Promise<Server> {
  server = await startServer(options);
  expect((await server.run(["init"])).code).toBe(0);
  return server;
}

const titles = () => server.discord.messages.map((m) => m.body.embeds[0].title as string);
const lastMessage = () => server.discord.messages.at(-1)?.body.embeds[0];

/** The pid of a running restic started by the backup, read from the pid file it keeps in the run dir. */
async function resticPid(timeoutMs = 60_000): Promise<number> {
  const file = join(server.runDir, "backup.restic.pid");
  let pid = 0;
  await waitUntil(
    () => {
      if (!existsSync(file)) return false;
      pid = (JSON.parse(readFileSync(file, "utf8")) as { pid: number }).pid;
      return readCmdline(pid).startsWith("restic\0backup");
    },
    "restic backup to start",
    timeoutMs,
  );
  return pid;
}

/** Resolves once the panel took `save-all flush`: the backup is waiting for the game's confirmation. */
function flushSent(timeoutMs = 60_000): Promise<void> {
  return waitUntil(() => server.panel.commands().includes("save-all flush"), "save-all flush", timeoutMs);
}

function readCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
}

/** Every process whose command line mentions restic or rclone serve. */
function resticProcesses(): Array<{ pid: number; cmdline: string }> {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map((d) => ({ pid: Number(d), cmdline: readCmdline(Number(d)) }))
    .filter((p) => /^(restic|rclone)\0/.test(p.cmdline) || p.cmdline.includes("rclone\0serve\0restic"));
}

/**
 * A backup held in the wait for "Saved the game", its save-all flush sent: the game never writes it and the save
 * timeout is an hour, so a run that ends before this test's timeout did not wait it out.
 */
async function waitingForFlush(): Promise<ReturnType<Server["start"]>> {
  await ready({ writesLog: false });
  server.backupEnv({ BACKUP_SAVE_TIMEOUT: "3600" });
  const run = server.start();
  await flushSent();
  return run;
}

describe("backup failures", () => {
  it("sends save-on even when restic fails, posts Backup failed and exits 1", async () => {
    await ready();
    server.backupEnv({ RESTIC_REPOSITORY: `rclone:mcopstest:${server.root}/no-such-repo` });
    const result = await server.run();
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `backup: there is no restic repository at RESTIC_REPOSITORY (rclone:mcopstest:${server.root}/no-such-repo) — create it once with: backup init\n`,
    );
    expect(server.panel.commands()).toEqual(["save-off", "save-all flush", "save-on"]);
    expect(titles()).toEqual(["Backup started", "Backup failed"]);
    expect(lastMessage()).toMatchObject({ color: 15548997, description: expect.stringContaining("mc-backup.log") });
    expect(server.backupLog()).toMatch(/ERROR === Backup failed === there is no restic repository/);
  });

  it("says the password is wrong in one line", async () => {
    await ready();
    writeFileSync(server.passwordFile, "not the password\n");
    const result = await server.run();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^backup: restic says the repository password is wrong \(rclone:mcopstest:.*\) — check the file RESTIC_PASSWORD_FILE points to.*\n$/,
    );
    expect(titles()).toEqual(["Backup started", "Backup failed"]);
  });

  it("says the rclone remote is broken in one line", async () => {
    await ready();
    server.backupEnv({ RESTIC_REPOSITORY: "rclone:nosuchremote:mc" });
    const result = await server.run();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^backup: restic cannot reach the repository through rclone: the rclone remote is not configured \(rclone:nosuchremote:mc\) — check the remote with: rclone lsd/,
    );
    expect(result.stderr.split("\n")).toHaveLength(2);
    expect(lastMessage()?.title).toBe("Backup failed");
  });

  it("turns autosave back on when stopped with SIGTERM mid-snapshot, and leaves no restic behind", async () => {
    await ready({ worldMiB: 400 });
    const { child, done } = server.start();
    const pid = await resticPid();
    child.kill("SIGTERM");
    const result = await done;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^backup: interrupted by SIGTERM|^backup: restic was stopped by SIGTERM/);
    expect(server.panel.commands()).toEqual(["save-off", "save-all flush", "save-on"]);
    expect(lastMessage()?.title).toBe("Backup failed");
    expect(alive(pid)).toBe(false);
    expect(existsSync(join(server.runDir, "backup.lock"))).toBe(false);
    // The next run goes through.
    expect((await server.run()).code).toBe(0);
  }, 120_000);

  it("stops waiting for Saved the game on SIGINT: save-on at once, Backup failed posted, exit 1", async () => {
    const { child, done } = await waitingForFlush();
    child.kill("SIGINT");
    // Ending at all proves the wait stopped on the signal: the game never confirms and the save timeout is an hour.
    const result = await done;
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("backup: interrupted by SIGINT\n");
    expect(server.panel.commands()).toEqual(["save-off", "save-all flush", "save-on"]);
    expect(titles()).toEqual(["Backup started", "Backup failed"]);
    expect(server.backupLog()).toMatch(/ERROR === Backup failed === interrupted by SIGINT\n/);
  }, 120_000);

  it("still turns autosave back on when a second signal follows the first", async () => {
    const { child, done } = await waitingForFlush();
    // Two different signals: the kernel would merge a second SIGINT into one still pending. Ending at all proves the
    // run did not wait out the hour's save timeout.
    child.kill("SIGINT");
    child.kill("SIGTERM");
    const result = await done;
    expect(server.panel.commands()).toEqual(["save-off", "save-all flush", "save-on"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^backup: interrupted by SIG(INT|TERM)\n$/);
  }, 120_000);

  it("ends within seconds of a second signal even when the panel does not answer save-on", async () => {
    const { child, done } = await waitingForFlush();
    server.panel.inject({ kind: "delay", ms: 600_000, route: "command" }); // save-on is held for 10 minutes
    child.kill("SIGINT");
    // The first signal's save-on has reached the panel (and is held there): the second signal comes on top of it.
    await waitUntil(
      () => server.panel.calls.some((c) => c.command === "save-on"),
      "save-on to reach the panel",
      60_000,
    );
    const second = Date.now();
    child.kill("SIGTERM");
    const result = await done;
    const ms = Date.now() - second;
    // README: a second signal ends the run once save-on went through or 5 s passed. Not before the 5 s (a lower bound,
    // which load cannot break), and not waiting for save-on: it is held 10 minutes, so ending at all proves that. The
    // upper bound is 5 s plus what a starved machine may add to deliver the signal and exit, far below the hold.
    expect(ms).toBeGreaterThanOrEqual(4_000);
    expect(ms).toBeLessThan(35_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("backup: interrupted by SIGINT\n");
    expect(server.panel.commands()).toEqual(["save-off", "save-all flush"]);
  }, 120_000);

  it("never runs two backups at once: the second says who runs and exits 75; --wait waits its turn", async () => {
    await ready({ worldMiB: 100 });
    const first = server.start();
    // The first one's restic is held still until the others have tried, however fast the machine.
    const pid = await resticPid();
    process.kill(pid, "SIGSTOP");
    const second = await server.run();
    expect(second.code).toBe(75);
    expect(second.stderr).toMatch(
      /^backup: a backup or restore is already running \(backup, pid \d+, since .+\) \(.*backup\.lock\) — wait for it to finish, or pass --wait\n$/,
    );
    // Each try at the lock writes a file named backup.lock.<pid>.<random> next to it and links it into place: two
    // such files from the waiting run mean it found the lock held and is trying again, i.e. it waits its turn.
    const waiting = server.start(["--wait"]);
    const tries = new Set<string>();
    const watcher = watch(server.runDir, (_event, name) => {
      if (name?.startsWith(`backup.lock.${waiting.child.pid}.`)) tries.add(name);
    });
    await waitUntil(() => tries.size >= 2, "the waiting run to try the lock twice", 60_000);
    watcher.close();
    process.kill(pid, "SIGCONT");
    expect((await first.done).code).toBe(0);
    expect((await waiting.done).code).toBe(0);
    const log = server.backupLog();
    const marks = [...log.matchAll(/=== Backup (started|done) ===/g)].map((m) => m[1]);
    expect(marks).toEqual(["started", "done", "started", "done"]);
  }, 120_000);

  it("after kill -9 mid-run, the next run stops the orphaned restic and succeeds", async () => {
    await ready({ worldMiB: 400 });
    const { child, done } = server.start();
    const pid = await resticPid();
    // Stopped, restic cannot notice its parent is gone (it would die of SIGPIPE on its next progress line): the
    // orphan stays, holding its repository lock, as one blocked on a slow cloud drive would.
    process.kill(pid, "SIGSTOP");
    child.kill("SIGKILL");
    await done;
    expect(alive(pid)).toBe(true);
    const result = await server.run();
    expect(result.stderr).toMatch(/WARN stopping restic \(pid \d+\) left running by a backup that was killed\n/);
    expect(result.code).toBe(0);
    expect(alive(pid)).toBe(false);
    expect(server.backupLog()).toMatch(/=== Backup done ===/);
  }, 120_000);

  it("clears a stale restic lock but never a live one", async () => {
    await ready();
    const { spawn } = await import("node:child_process");
    const env = {
      ...server.env,
      RESTIC_REPOSITORY: `rclone:mcopstest:${server.repoDir}`,
      RESTIC_PASSWORD_FILE: server.passwordFile,
    };
    // A live exclusive lock, held as long as the test wants: restic key passwd takes it, then reads the new password
    // from a FIFO nobody writes to until the test kills it (a stopped restic check could finish first on a busy machine).
    const newPassword = join(server.root, "new-password");
    execFileSync("mkfifo", [newPassword]);
    const holder = spawn("restic", ["key", "passwd", "--new-password-file", newPassword], { env, stdio: "ignore" });
    const locks = join(server.repoDir, "locks");
    await waitUntil(() => existsSync(locks) && readdirSync(locks).length > 0, "restic's exclusive lock", 60_000);
    const held = readdirSync(locks);
    expect(held).toHaveLength(1);
    const result = await server.run();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^backup: the repository is locked by another restic process/m);
    expect(readdirSync(locks)).toEqual(held);
    process.kill(holder.pid as number, "SIGKILL");
    await new Promise((r) => holder.once("exit", r));
    // Its lock is stale now: the next backup clears it and goes through.
    const next = await server.run();
    expect(next.code).toBe(0);
    expect(readdirSync(locks)).not.toContain(held[0]);
  });

  it("warns about an unreadable file and still makes the snapshot", async () => {
    await ready();
    // Its name is the game's: Markdown and a mention that must reach the channel as plain text.
    const secret = join(server.worldDir, "world", "playerdata", "locked **now** @everyone.dat");
    writeFileSync(secret, "x");
    chmodSync(secret, 0o000);
    // Root reads any file; without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH it is refused like anyone else.
    const caps = "--inh-caps=-dac_override,-dac_read_search --bounding-set=-dac_override,-dac_read_search";
    const { spawn } = await import("node:child_process");
    const child = spawn("setpriv", [...caps.split(" "), process.execPath, (await import("./harness.ts")).BIN], {
      cwd: server.root,
      env: server.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    expect(server.backupLog()).toMatch(
      /WARN snapshot [0-9a-f]{8} is missing unreadable files: .*locked \*\*now\*\* @everyone\.dat/,
    );
    expect(lastMessage()).toMatchObject({ title: "Backup completed", color: 16776960 });
    expect(lastMessage()?.description).toContain("1 file(s) could not be read and are missing: ");
    expect(lastMessage()?.description).toContain("locked \\*\\*now\\*\\* @\u200beveryone.dat");
  });

  it("refuses a group-readable backup.env with exit 78, leaves the panel alone and says why in the log and the channel", async () => {
    server = await startServer();
    chmodSync(join(server.configDir, "backup.env"), 0o640);
    const result = await server.run();
    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(
      /^backup: holds secrets but is readable by its group \(mode 640\) \(.*backup\.env\) — run: chmod 600 .*backup\.env\n$/,
    );
    expect(server.panel.calls).toHaveLength(0);
    // Under cron nobody reads stderr: the log and the channel say why the backup did not run.
    expect(server.backupLog()).toMatch(/Z ERROR === Backup failed === holds secrets but is readable by its group/);
    expect(titles()).toEqual(["Backup failed"]);
  });

  it("refuses a group-readable webhook.env with exit 78 before anything is done, and says why in the log", async () => {
    server = await startServer();
    chmodSync(join(server.configDir, "webhook.env"), 0o640);
    const result = await server.run();
    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(
      /^backup: holds secrets but is readable by its group \(mode 640\) \(.*webhook\.env\)/,
    );
    expect(server.panel.calls).toHaveLength(0);
    expect(server.backupLog()).toMatch(/Z ERROR === Backup failed === holds secrets .*webhook\.env/);
    expect(server.discord.messages).toHaveLength(0);
  });

  it("logs and posts Backup failed when the password file is missing, and exits 78 with one line", async () => {
    server = await startServer();
    rmSync(server.passwordFile);
    const result = await server.run();
    expect(result.code).toBe(78);
    expect(result.stderr).toBe(
      `backup: the repository password file does not exist (RESTIC_PASSWORD_FILE=${server.passwordFile}) — create it: install -m 600 /dev/null ${server.passwordFile} && openssl rand -base64 32 > ${server.passwordFile}\n`,
    );
    expect(server.panel.calls).toHaveLength(0);
    expect(server.backupLog()).toMatch(
      /^\S+Z ERROR === Backup failed === the repository password file does not exist \(RESTIC_PASSWORD_FILE=.*\) — create it: /m,
    );
    expect(titles()).toEqual(["Backup failed"]);
    expect(lastMessage()).toMatchObject({ color: 15548997 });
    expect(lastMessage()?.description).toMatch(
      /^the repository password file does not exist .*\nSee .*mc-backup\.log on the server\.$/,
    );
  });

  it("shows no secret in restic's command line, in its children's, in the log or in the output", async () => {
    await ready({ worldMiB: 150 });
    const { done } = server.start([], { MCOPS_DEBUG: "1" });
    await resticPid();
    const seen = resticProcesses();
    const result = await done;
    expect(result.code).toBe(0);
    expect(seen.length).toBeGreaterThan(0);
    const token = server.discord.webhooks[0]?.token as string;
    const everything = [...seen.map((p) => p.cmdline), server.backupLog(), result.stdout, result.stderr].join("\n");
    for (const secret of [PASSWORD, server.panel.apiKey, token]) expect(everything).not.toContain(secret);
  });

  it("backs up crash-consistent when the panel cannot be reached, and says so", async () => {
    await ready();
    await server.panel.close();
    const result = await server.run();
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /WARN the panel cannot be reached \(cannot reach the panel \(ECONNREFUSED\) after 3 tries\); the backup is crash-consistent/,
    );
    expect(lastMessage()?.description).toMatch(/panel unreachable: crash-consistent backup/);
  });

  it("takes the panel's refusal of save-off as the proof that an offline server's files are at rest", async () => {
    await ready({ state: "offline" });
    expect((await server.run()).code).toBe(0);
    expect(server.panel.commands()).toEqual([]);
    const tried = server.panel.calls.filter((c) => c.kind === "command").map((c) => `${c.command} ${c.status}`);
    expect(tried).toEqual(["save-off 502"]);
    expect(server.backupLog()).toMatch(
      /the game is not running \(the panel: Server must be online\): its files are at rest/,
    );
  });

  it("sends save-off and waits for the game's confirmation while the panel's cached answer still says offline", async () => {
    // The panel caches /resources (20 s on a real one): it still says offline after the game has started.
    await ready({ state: "offline", resourcesCacheMs: 600_000 });
    const resources = await fetch(
      `${server.panel.url}/api/client/servers/${server.panel.server.identifier}/resources`,
      {
        headers: { Authorization: `Bearer ${server.panel.apiKey}`, Accept: "application/json" },
      },
    );
    expect(((await resources.json()) as { attributes: { current_state: string } }).attributes.current_state).toBe(
      "offline",
    );
    server.panel.setState("running");
    const result = await server.run();
    expect(result.code).toBe(0);
    expect(server.panel.commands()).toEqual(["save-off", "save-all flush", "save-on"]);
    expect(server.backupLog()).toMatch(/the panel showed the server offline, but the game took save-off: it runs/);
    expect(server.backupLog()).toMatch(/the game confirmed: Saved the game/);
    expect(lastMessage()?.description).toMatch(/world flushed \(save-all flush confirmed\)/);
  });

  it("goes on without the confirmation when the game never says Saved the game", async () => {
    await ready({ writesLog: false });
    server.backupEnv({ BACKUP_SAVE_TIMEOUT: "1" });
    const result = await server.run();
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /WARN no "Saved the game" in .*latest\.log within 1 s; going on without the confirmation/,
    );
    expect(server.panel.commands()).toEqual(["save-off", "save-all flush", "save-on"]);
  });
});

describe("restic is a real dependency", () => {
  it("is installed by the project's setup", () => {
    expect(execFileSync("restic", ["version"]).toString()).toMatch(/^restic \d+\.\d+\.\d+/);
    expect(execFileSync("rclone", ["version"]).toString()).toMatch(/^rclone v\d+/);
  });
});

describe("a restic older than the tools run with", () => {
  it("is refused with exit 78 before the game is asked anything, naming the version found and the floor", async () => {
    await ready();
    // restic 0.9.6 (Ubuntu 20.04's), found first on PATH: it answers `version` as that release did, and would
    // leave a mark for any other command.
    const bin = join(server.root, "old-restic");
    const ran = join(server.root, "ran");
    execFileSync("mkdir", [bin]);
    writeFileSync(
      join(bin, "restic"),
      `#!/bin/sh\nif [ "$1" = version ]; then echo 'restic 0.9.6 compiled with go1.13.8 on linux/amd64'; exit 0; fi\necho "$@" >> '${ran}'\nexit 1\n`,
    );
    chmodSync(join(bin, "restic"), 0o755);
    const result = await server.run([], { PATH: `${bin}:${server.env.PATH}` });
    expect(result.code).toBe(78);
    expect(result.stderr).toBe(
      "backup: restic 0.9.6 is older than 0.11.0, the oldest the tools run with (restic) — install restic 0.11.0 or newer (Debian 11 and later ship one; or: restic self-update)\n",
    );
    expect(existsSync(ran)).toBe(false);
    expect(server.panel.commands()).toEqual([]);
    expect(server.backupLog()).toMatch(/ERROR === Backup failed === restic 0\.9\.6 is older than 0\.11\.0/);
    expect(titles()).toEqual(["Backup started", "Backup failed"]);
  });
});
