import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

export interface Exec {
  code: number | null;
  stdout: string;
  stderr: string;
}

const PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * A booted Debian: systemd as PID 1 in systemd-nspawn, on an overlay of the cached root file system (the cache is
 * never written). It shares the host's network, so the stand-ins on 127.0.0.1 are the container's 127.0.0.1 too.
 * Commands run inside through nsenter, as an operator's root shell would (not in any unit).
 */
export class Container {
  readonly root: string;
  readonly #work: string;
  readonly #name: string;
  #nspawn: ChildProcess | undefined;
  #exited: Promise<number | null> = Promise.resolve(null);
  #pid = 0;

  private constructor(work: string, name: string) {
    this.#work = work;
    this.#name = name;
    this.root = join(work, "root");
  }

  /** Mounts the overlay and boots; resolves once systemd says the boot is finished. */
  static async boot(lower: string, name: string): Promise<Container> {
    const work = mkdtempSync("/var/tmp/mcops-system-");
    for (const dir of ["upper", "work", "root"]) mkdirSync(join(work, dir));
    try {
      execFileSync("mount", [
        "-t",
        "overlay",
        "overlay",
        "-o",
        `lowerdir=${lower},upperdir=${join(work, "upper")},workdir=${join(work, "work")}`,
        join(work, "root"),
      ]);
    } catch (error) {
      rmSync(work, { recursive: true, force: true });
      throw error;
    }
    const container = new Container(work, name);
    try {
      await container.start();
    } catch (error) {
      // The test never gets this container to close: stop what did start, and unmount.
      await container.close();
      throw error;
    }
    return container;
  }

  /** What systemd-nspawn and the boot printed (for a failure's message). */
  console(): string {
    const file = join(this.#work, "console.log");
    return existsSync(file) ? readFileSync(file, "utf8").slice(-4000) : "";
  }

  async start(): Promise<void> {
    const out = openSync(join(this.#work, "console.log"), "a");
    const nspawn = spawn(
      "systemd-nspawn",
      [
        "--quiet",
        "--directory",
        this.root,
        "--machine",
        this.#name,
        "--boot",
        // No systemd on the host to register with or to make a scope: the container runs in the test's own cgroup.
        "--register=no",
        "--keep-unit",
        "--console=passive",
        "--resolv-conf=off",
        "--timezone=off",
        "--link-journal=no",
      ],
      { stdio: ["ignore", out, out] },
    );
    closeSync(out);
    this.#nspawn = nspawn;
    this.#exited = new Promise((resolve) => nspawn.once("exit", (code) => resolve(code)));
    this.#pid = await this.#init(nspawn.pid as number);
    // systemctl reaches systemd once it has made its socket, early in the boot; until then it cannot even wait.
    const deadline = Date.now() + 180_000;
    let booted = await this.exec("systemctl is-system-running --wait", { timeoutMs: 180_000 });
    // "offline": systemd has not yet said it is the system manager (/run/systemd/system), early in the boot. systemctl
    // says "Failed to connect to bus" in systemd 252, "Failed to connect to system scope bus" in 257 (Debian 13).
    while (
      (/Failed to connect to (system scope )?bus/.test(booted.stderr) || /^offline$/m.test(booted.stdout)) &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      booted = await this.exec("systemctl is-system-running --wait", { timeoutMs: 180_000 });
    }
    if (!/^(running|degraded)$/m.test(booted.stdout)) {
      const failed = await this.exec("systemctl --failed --no-legend --plain");
      throw new Error(
        `the container did not boot (${booted.stdout.trim() || booted.stderr.trim()}); failed units: ${failed.stdout.trim()}\n${this.console()}`,
      );
    }
  }

  /** The container's PID 1 (systemd), as the host numbers it: a child of systemd-nspawn. */
  async #init(nspawn: number): Promise<number> {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      for (const child of children(nspawn)) {
        if (readFileSync(`/proc/${child}/comm`, "utf8").trim() === "systemd") return child;
      }
      if (this.#nspawn?.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`systemd-nspawn started no systemd within 60 s\n${this.console()}`);
  }

  /** Runs a shell command inside as root with a clean environment, like an operator's login shell. */
  exec(command: string, options: { timeoutMs?: number } = {}): Promise<Exec> {
    const args = ["--target", String(this.#pid), "--all", "--", "/usr/bin/env", "-i"];
    args.push(`PATH=${PATH}`, "HOME=/root", "LANG=C.UTF-8", "TERM=dumb", "/bin/bash", "-c", `cd /root && ${command}`);
    return new Promise((resolve) => {
      const child = spawn("nsenter", args, { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
      child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
      const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
      child.on("close", (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
      child.on("error", (error) => {
        clearTimeout(timer);
        resolve({ code: null, stdout, stderr: `${stderr}${error.message}` });
      });
    });
  }

  /** exec() that must succeed; its output. */
  async run(command: string, options: { timeoutMs?: number } = {}): Promise<string> {
    const result = await this.exec(command, options);
    if (result.code !== 0) {
      throw new Error(`in the container: ${command}\nexit ${result.code}\n${result.stdout}\n${result.stderr}`);
    }
    return result.stdout;
  }

  /** A path inside, as the host reaches it (the overlay's merged tree). */
  path(inside: string): string {
    return join(this.root, inside);
  }

  /** `systemctl reboot`: systemd-nspawn ends (exit 133 means reboot) and is started again on the same tree. */
  async reboot(): Promise<void> {
    await this.exec("systemctl reboot");
    const code = await this.#exited;
    if (code !== 133) throw new Error(`systemd-nspawn ended with ${code} on reboot, not 133\n${this.console()}`);
    await this.start();
  }

  /** Powers off (or kills, when systemd does not end in time), unmounts and removes the overlay. */
  async close(): Promise<void> {
    if (this.#nspawn && this.#nspawn.exitCode === null && this.#nspawn.signalCode === null) {
      void this.exec("systemctl poweroff");
      const timer = setTimeout(() => this.#nspawn?.kill("SIGKILL"), 60_000);
      await this.#exited;
      clearTimeout(timer);
    }
    try {
      execFileSync("umount", [this.root]);
    } catch {
      execFileSync("umount", ["--lazy", this.root]);
    }
    rmSync(this.#work, { recursive: true, force: true });
  }
}

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
