import { runTool } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, type Server, startServer } from "./harness.ts";

/**
 * The repository on a read-only file system, as a sandboxed unit (ProtectSystem=strict) sees a folder it was not
 * allowed to write: the built backup runs in a mount namespace of its own where the repository is bind-mounted
 * read-only. restic alone would retry each write for about 90 s and then say "unable to create lock in backend", which
 * the tool took for a stale lock (unlock, and 90 s more, with autosave off).
 */
let server: Server;

beforeEach(async () => {
  server = await startServer({ state: "running" });
});
afterEach(() => server.close());

function withReadOnlyRepository() {
  const script = ['mount --bind "$R" "$R"', 'mount -o remount,ro,bind "$R"', 'exec "$BACKUP"'].join(" && ");
  return runTool("unshare", ["--mount", "--propagation", "private", "sh", "-c", script], {
    env: { ...server.env, R: server.repoDir, BACKUP: BIN },
  });
}

describe("a repository the backup cannot write", () => {
  it("fails at restic's first refused write with restic's reason, not as a lock, and turns autosave back on", async () => {
    expect((await server.run(["init"])).code).toBe(0);
    const result = await withReadOnlyRepository();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^backup: restic cannot write the repository: open \S+\/locks\/\S+: read-only file system \(rclone:mcopstest:\S+\) — a repository on this machine's disk must be writable where the backup runs: under idle-monitor\.service, run install\.sh again/m,
    );
    expect(result.stderr).not.toMatch(/locked by another restic/);
    expect(server.backupLog()).not.toMatch(/restic unlock/);
    const commands = server.panel.calls.filter((c) => c.kind === "command").map((c) => c.command);
    expect(commands.at(-1)).toBe("save-on");
    const failed = server.discord.messages.map((m) => m.body.embeds[0]);
    expect(failed.map((m) => m.title)).toEqual(["Backup started", "Backup failed"]);
    expect(JSON.stringify(failed[1])).toMatch(/read-only file system/);
  });
});
