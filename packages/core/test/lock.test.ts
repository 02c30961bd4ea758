import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { BusyError } from "../src/errors.ts";
import { acquireLock, processStartTime, readLockHolder } from "../src/lock.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcops-lock-"));
});

/** A pid that certainly belonged to a process that has ended. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return Number(child.stdout.toString());
}

describe("acquireLock", () => {
  it("gives the lock to one holder and says who holds it to the next (exit 75)", async () => {
    const path = join(dir, "backup.lock");
    const lock = await acquireLock(path, { tool: "backup" });
    expect(readLockHolder(path)).toMatchObject({ pid: process.pid, tool: "backup", host: hostname() });
    const error = await acquireLock(path, { tool: "backup", what: "a backup" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BusyError);
    expect((error as BusyError).exitCode).toBe(75);
    expect((error as BusyError).message).toMatch(
      new RegExp(`^a backup is already running \\(backup, pid ${process.pid}, since `),
    );
    expect((error as BusyError).hint).toBe("it is still running; try again later");
    const named = await acquireLock(path, { tool: "backup", waitOption: "--wait" }).catch((e: unknown) => e);
    expect((named as BusyError).hint).toBe("wait for it to finish, or pass --wait");
    lock.release();
    expect(existsSync(path)).toBe(false);
  });

  it("waits for a held lock when asked to, and gets it once released", async () => {
    const path = join(dir, "wait.lock");
    const first = await acquireLock(path, { tool: "a" });
    setTimeout(() => first.release(), 150);
    const started = Date.now();
    const second = await acquireLock(path, { tool: "b", waitMs: 30_000, pollMs: 20 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(readLockHolder(path)?.tool).toBe("b");
    second.release();
  });

  it("gives up waiting after waitMs", async () => {
    const path = join(dir, "timeout.lock");
    const lock = await acquireLock(path, { tool: "a" });
    await expect(acquireLock(path, { tool: "b", waitMs: 100, pollMs: 20 })).rejects.toBeInstanceOf(BusyError);
    lock.release();
  });

  it("takes over at once a lock whose holder has died", async () => {
    const path = join(dir, "stale.lock");
    writeFileSync(path, JSON.stringify({ pid: deadPid(), start: "1", tool: "backup", host: hostname(), since: "x" }));
    const lock = await acquireLock(path, { tool: "backup" });
    expect(readLockHolder(path)?.pid).toBe(process.pid);
    lock.release();
  });

  it("does not mistake a reused pid for the holder: a different start time is stale", async () => {
    const path = join(dir, "reused.lock");
    writeFileSync(
      path,
      JSON.stringify({
        pid: process.pid,
        start: `${processStartTime(process.pid)}9`,
        tool: "x",
        host: hostname(),
        since: "x",
      }),
    );
    const lock = await acquireLock(path, { tool: "backup" });
    expect(readLockHolder(path)?.start).toBe(processStartTime(process.pid));
    lock.release();
  });

  it("treats a garbage lock file as stale", async () => {
    const path = join(dir, "garbage.lock");
    writeFileSync(path, "{not json");
    (await acquireLock(path, { tool: "x" })).release();
  });

  it("a holder killed with SIGKILL leaves a lock the next run takes at once", async () => {
    const path = join(dir, "killed.lock");
    const script = `
      import { acquireLock } from ${JSON.stringify(new URL("../src/lock.ts", import.meta.url).href)};
      await acquireLock(${JSON.stringify(path)}, { tool: "child" });
      process.stdout.write("locked\\n");
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    await expect(acquireLock(path, { tool: "parent" })).rejects.toBeInstanceOf(BusyError);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    expect(JSON.parse(readFileSync(path, "utf8")).tool).toBe("child");
    const lock = await acquireLock(path, { tool: "parent" });
    expect(readLockHolder(path)?.tool).toBe("parent");
    lock.release();
  });

  it("never gives the lock to two of many processes racing for it", async () => {
    const path = join(dir, "race.lock");
    const log = join(dir, "race.log");
    const script = `
      import { appendFileSync } from "node:fs";
      import { acquireLock } from ${JSON.stringify(new URL("../src/lock.ts", import.meta.url).href)};
      for (let i = 0; i < 15; i++) {
        const lock = await acquireLock(${JSON.stringify(path)}, { tool: "racer", waitMs: 20000, pollMs: 1 });
        appendFileSync(${JSON.stringify(log)}, "in " + process.pid + "\\n");
        await new Promise((r) => setTimeout(r, 2));
        appendFileSync(${JSON.stringify(log)}, "out " + process.pid + "\\n");
        lock.release();
      }`;
    const children = Array.from({ length: 4 }, () =>
      spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "inherit" }),
    );
    await Promise.all(children.map((c) => new Promise((resolve) => c.once("exit", resolve))));
    const lines = readFileSync(log, "utf8").trim().split("\n");
    expect(lines).toHaveLength(4 * 15 * 2);
    for (let i = 0; i < lines.length; i += 2) {
      const pid = (lines[i] as string).split(" ")[1];
      expect([lines[i], lines[i + 1]]).toEqual([`in ${pid}`, `out ${pid}`]);
    }
  });
});
