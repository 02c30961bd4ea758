import { ExitCode } from "@mcops/core/errors";
import type { RunResult } from "@mcops/core/runner";
import { describe, expect, it } from "vitest";
import { RESTORE_TARGET_BYTES, Restic, restoredPathBytes, type Snapshot } from "../src/restic.ts";
import { BackupSummarySchema, LsLineSchema, readJsonLine, SnapshotsSchema } from "../src/restic-json.ts";
import {
  checkFloor,
  featuresOf,
  parseResticVersion,
  RESTIC_FLOOR,
  ResticTooOld,
  sameSnapshot,
  shortId,
} from "../src/restic-version.ts";

/** `restic version` of the releases' own packages (Debian 11, 12, 13), as they print it. */
const SAID = {
  "0.11.0": "restic 0.11.0 compiled with go1.15.9 on linux/amd64\n",
  "0.14.0": "restic 0.14.0 compiled with go1.19.8 on linux/amd64\n",
  "0.18.0": "restic 0.18.0 compiled with go1.24.4 on linux/amd64\n",
};

interface Call {
  args: readonly string[];
}

/** A restic that answers `version` with `said` and every other command with `answer(args)`. */
function resticSaying(said: string, answer: (args: readonly string[]) => Partial<RunResult> = () => ({})) {
  const calls: Call[] = [];
  const restic = new Restic({
    runner: {
      run: async (_command, args, options) => {
        calls.push({ args });
        if (args[0] === "version") return { code: 0, signal: null, stdout: said, stderr: "" };
        const result = { code: 0, signal: null, stdout: "", stderr: "", ...answer(args) };
        for (const line of result.stdout.split("\n")) if (line) options?.onStdoutLine?.(line);
        for (const line of result.stderr.split("\n")) if (line) options?.onStderrLine?.(line);
        return result;
      },
    },
    env: { RESTIC_REPOSITORY: "/srv/restic", RESTIC_PASSWORD_FILE: "/root/.restic-password" },
    logFile: "/var/log/mc-backup.log",
  });
  return { restic, calls };
}

describe("restic's version", () => {
  it.each([
    [SAID["0.11.0"], "0.11.0"],
    [SAID["0.18.0"], "0.18.0"],
    ["restic 0.17.3-dev (compiled manually) compiled with go1.22.5 on linux/amd64", "0.17.3-dev"],
  ])("is read from %j", (said, text) => {
    expect(parseResticVersion(said)?.text).toBe(text);
  });

  it("is unknown when restic says something else", () => {
    expect(parseResticVersion("Fatal: pack 1a2b3c4d is damaged")).toBeUndefined();
  });

  it("below the floor is refused with exit 78, naming the version found and the floor", () => {
    const error = (() => {
      try {
        checkFloor(parseResticVersion("restic 0.9.6 compiled with go1.13.8 on linux/amd64"));
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ResticTooOld);
    expect(error).toMatchObject({
      exitCode: ExitCode.config,
      message: `restic 0.9.6 is older than ${RESTIC_FLOOR}, the oldest the tools run with`,
    });
    expect(() => checkFloor(parseResticVersion(SAID["0.11.0"]))).not.toThrow();
    expect(() => checkFloor(parseResticVersion("restic 1.0.0"))).not.toThrow();
    expect(() => checkFloor(undefined)).not.toThrow();
  });

  it("says what each version offers; an unknown one is taken as the floor", () => {
    expect(featuresOf(parseResticVersion(SAID["0.11.0"]))).toEqual({
      readDataPercent: false,
      restoreJson: false,
      restoreSparse: false,
      restoreSubfolder: false,
    });
    expect(featuresOf(parseResticVersion(SAID["0.14.0"]))).toEqual({
      readDataPercent: true,
      restoreJson: false,
      restoreSparse: false,
      restoreSubfolder: false,
    });
    expect(featuresOf(parseResticVersion("restic 0.15.2"))).toMatchObject({
      restoreSparse: true,
      restoreSubfolder: false,
    });
    expect(featuresOf(parseResticVersion(SAID["0.18.0"]))).toEqual({
      readDataPercent: true,
      restoreJson: true,
      restoreSparse: true,
      restoreSubfolder: true,
    });
    expect(featuresOf(parseResticVersion("restic 1.2.0"))).toMatchObject({ restoreJson: true });
    expect(featuresOf(undefined)).toEqual(featuresOf(parseResticVersion(SAID["0.11.0"])));
  });

  it("is asked once, before the first command; a restic below the floor is given nothing to do", async () => {
    const old = resticSaying("restic 0.9.6 compiled with go1.13.8 on linux/amd64");
    await expect(old.restic.snapshots()).rejects.toBeInstanceOf(ResticTooOld);
    await expect(old.restic.exists()).rejects.toBeInstanceOf(ResticTooOld);
    expect(old.calls.map((c) => c.args[0])).toEqual(["version"]);
    const current = resticSaying(SAID["0.14.0"], () => ({ stdout: "[]" }));
    await current.restic.snapshots();
    await current.restic.snapshots();
    expect(current.calls.map((c) => c.args[0])).toEqual(["version", "snapshots", "snapshots"]);
  });
});

describe("snapshot ids", () => {
  const whole = "6aa018d6a2f6106f2217828e6f2186c3cb665f4dbeac21f5b22277d9b20e3d09";

  it("are shown short and matched in either length", () => {
    expect(shortId(whole)).toBe("6aa018d6");
    expect(shortId("6aa018d6")).toBe("6aa018d6");
    expect(sameSnapshot("6aa018d6", whole)).toBe(true);
    expect(sameSnapshot(whole, "6aa018d6")).toBe(true);
    expect(sameSnapshot(whole, whole)).toBe(true);
    expect(sameSnapshot("6aa018d7", whole)).toBe(false);
    expect(sameSnapshot("", whole)).toBe(false);
  });

  it("restic 0.18's whole id in the backup summary is reported short", async () => {
    // restic 0.18.0's own summary line (Debian 13's package).
    const line = `{"message_type":"summary","files_new":2,"data_added":102472,"data_added_packed":102012,"total_duration":0.62,"snapshot_id":"${whole}"}`;
    const { restic } = resticSaying(SAID["0.18.0"], () => ({ stdout: `${line}\n` }));
    await expect(restic.backup(["/srv/world"], { tags: [], excludes: [] })).resolves.toMatchObject({
      snapshotId: "6aa018d6",
      dataAdded: 102472,
    });
  });
});

describe("restic's JSON, each through its schema", () => {
  it("reads the backup summary of 0.11 (short id) and 0.18 (whole id)", () => {
    const old = readJsonLine(
      BackupSummarySchema,
      '{"message_type":"summary","files_new":2,"data_added":102472,"total_duration":0.28,"snapshot_id":"ff26c510"}',
    );
    expect(old).toMatchObject({ snapshot_id: "ff26c510", data_added: 102472 });
    expect(readJsonLine(BackupSummarySchema, '{"message_type":"summary","snapshot_id":"../../etc"}')).toBeUndefined();
  });

  it("reads snapshots with and without tags, and 0.17's summary", () => {
    const listed = SnapshotsSchema.parse(
      JSON.parse(
        '[{"time":"2026-11-29T06:31:02Z","tree":"8c17","paths":["/srv/world"],"hostname":"vm","username":"root","id":"ff26c510f9a1602a376ebd7822346c5209b47d2f0206fac874102d7e68e0cc99","short_id":"ff26c510"},' +
          '{"time":"2026-11-29T06:31:14Z","tree":"b5e9","paths":["/srv/world"],"hostname":"vm","tags":["mc-1"],"program_version":"restic 0.18.0","summary":{"data_added":102472,"files_new":2},"id":"6aa018d6a2f6106f2217828e6f2186c3cb665f4dbeac21f5b22277d9b20e3d09","short_id":"6aa018d6"}]',
      ),
    );
    expect(listed?.[0]).toMatchObject({ short_id: "ff26c510" });
    expect(listed?.[0]?.tags).toBeUndefined();
    expect(listed?.[0]?.summary).toBeUndefined();
    expect(listed?.[1]).toMatchObject({ short_id: "6aa018d6", tags: ["mc-1"], summary: { data_added: 102472 } });
    expect(SnapshotsSchema.parse(null)).toBeNull();
  });

  it("reads ls lines of 0.11 (struct_type only) and 0.18 (message_type too)", () => {
    expect(
      readJsonLine(
        LsLineSchema,
        '{"name":"level.dat","type":"file","path":"/srv/world/level.dat","uid":0,"gid":0,"size":3,"mode":420,"struct_type":"node"}',
      ),
    ).toEqual({ struct_type: "node", path: "/srv/world/level.dat", type: "file", size: 3 });
    expect(
      readJsonLine(
        LsLineSchema,
        '{"name":"world","type":"dir","path":"/srv/world","inode":2214594,"message_type":"node","struct_type":"node"}',
      ),
    ).toEqual({ struct_type: "node", path: "/srv/world", type: "dir" });
  });

  it("a snapshots answer restic's schema does not hold is one clear failure", async () => {
    const { restic } = resticSaying(SAID["0.14.0"], () => ({ stdout: '[{"id":"x"}]' }));
    await expect(restic.snapshots()).rejects.toMatchObject({
      message: "restic snapshots --json answered what the tools cannot read",
    });
  });
});

describe("restore on each version", () => {
  it("0.17 and newer: restic's JSON error is the reason, the game's name quoted", async () => {
    // restic 0.18.0's own lines for a target it would not use.
    const stdout = [
      '{"message_type":"verbose_status","action":"restored","item":"/srv/world/level.dat","size":3}',
      '{"message_type":"error","error":{"message":"failed to remove stale item: remove /proc/1/fd/8: operation not permitted"},"during":"restore","item":"/\\nFatal: wrong password or no key found"}',
      '{"message_type":"summary","total_files":7,"files_restored":7,"total_bytes":100003,"bytes_restored":100003}',
      '{"message_type":"exit_error","code":1,"message":"Fatal: There were 1 errors\\n"}',
    ].join("\n");
    const { restic, calls } = resticSaying(SAID["0.18.0"], () => ({
      code: 1,
      stdout,
      stderr: "Fatal: There were 1 errors\n",
    }));
    await expect(restic.restore("abc", "/tmp/r")).rejects.toMatchObject({
      kind: "failed",
      message:
        'restic failed (exit 1): There were 1 errors; the first: "/\\nFatal: wrong password or no key found": "failed to remove stale item: remove /proc/1/fd/8: operation not permitted"',
    });
    expect(calls[1]?.args).toEqual(["restore", "abc", "--target", "/tmp/r", "--sparse", "--json"]);
  });

  it("0.16 and newer restore a folder's contents (<snapshot>:<folder>), includes below it; 0.15 and newer sparse", async () => {
    const includes = ["/srv/world/world", "/srv/world/world[1]"];
    const newer = resticSaying(SAID["0.18.0"]);
    await newer.restic.restore("abc", "/tmp/r", includes, "/srv/world/");
    expect(newer.calls[1]?.args).toEqual([
      ...["restore", "abc:/srv/world", "--target", "/tmp/r", "--sparse"],
      ...["--include", "/world", "--include", "/world\\[1\\]", "--json"],
    ]);
    const sparse = resticSaying("restic 0.15.2 compiled with go1.20.3 on linux/amd64");
    await sparse.restic.restore("abc", "/tmp/r", includes, "/srv/world");
    expect(sparse.calls[1]?.args).toEqual([
      ...["restore", "abc", "--target", "/tmp/r", "--sparse"],
      ...["--include", "/srv/world/world", "--include", "/srv/world/world\\[1\\]"],
    ]);
  });

  it("says how long a restored path is: the target's bytes and the path below WORLD_DIR (0.16 on), or the whole path", () => {
    const path = `/srv/world/world/${"d".repeat(100)}`;
    expect(RESTORE_TARGET_BYTES).toBe(32);
    expect(restoredPathBytes(featuresOf(parseResticVersion(SAID["0.18.0"])), "/srv/world/", path)).toBe(32 + 107);
    expect(restoredPathBytes(featuresOf(parseResticVersion(SAID["0.14.0"])), "/srv/world", path)).toBe(32 + 117);
  });

  it("before 0.17: no --json (restic prints text only), the first warning quoted", async () => {
    const { restic, calls } = resticSaying(SAID["0.14.0"], () => ({
      code: 1,
      stderr:
        "ignoring error for /srv/world/x: open /tmp/r/srv/world/x: no space left on device\nFatal: There were 1 errors\n",
    }));
    await expect(restic.restore("abc", "/tmp/r")).rejects.toMatchObject({
      message:
        'restic failed (exit 1): There were 1 errors; the first: "ignoring error for /srv/world/x: open /tmp/r/srv/world/x: no space left on device"',
    });
    expect(calls[1]?.args).toEqual(["restore", "abc", "--target", "/tmp/r"]);
  });
});

describe("check's data subset", () => {
  it.each([
    [SAID["0.14.0"], "10%", 0, "--read-data-subset=10%"],
    [SAID["0.11.0"], "10%", 0, "--read-data-subset=1/10"],
    [SAID["0.11.0"], "10%", 13, "--read-data-subset=4/10"],
    [SAID["0.11.0"], "30%", 2, "--read-data-subset=3/3"],
    [SAID["0.11.0"], "1/5", 2, "--read-data-subset=1/5"],
    // Not a part of the data: restic's to refuse, in its own words.
    [SAID["0.11.0"], "150%", 2, "--read-data-subset=150%"],
    [SAID["0.11.0"], "0%", 2, "--read-data-subset=0%"],
  ])("with %j, %s on day %i is %s", async (said, subset, day, arg) => {
    const { restic, calls } = resticSaying(said);
    await restic.check(subset, day);
    expect(calls[1]?.args).toEqual(["check", arg]);
  });
});

describe("restic 0.17's JSON errors on stderr", () => {
  /** restic 0.18.0's stderr for a restore that could not write a file named by the game. */
  const named = (name: string) =>
    `${JSON.stringify({ message_type: "error", error: { message: "open x: no space left on device" }, during: "restore", item: `/srv/world/${name}` })}\n{"message_type":"exit_error","code":1,"message":"Fatal: There were 1 errors\\n"}\n`;

  it.each([
    ["wrong password or no key found", "failed"],
    ["repository is already locked by PID 1", "failed"],
    ["Is there a repository at the following location?", "failed"],
  ])("a file named %j is not restic saying so (%s)", async (name, kind) => {
    const { restic } = resticSaying(SAID["0.18.0"], () => ({ code: 1, stderr: named(name) }));
    const error = await restic.restore("abc", "/tmp/r").catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      kind,
      message: `restic failed (exit 1): There were 1 errors; the first: ${JSON.stringify(`/srv/world/${name}`)}: "open x: no space left on device"`,
    });
  });

  it("the reason restic gives for the file names it again, raw: quoted too, never read as restic's own lines", async () => {
    // restic 0.18.0's own lines for a file whose path is too long under the restore's target, the name the game's.
    const name = "x\nStat(<config/>) returned error, retrying after 1s: forged\nFatal: wrong password or no key found";
    const stderr = [
      JSON.stringify({
        message_type: "error",
        error: { message: `open /proc/1/fd/8/restored/srv/world/${name}: file name too long` },
        during: "restore",
        item: `/srv/world/${name}`,
      }),
      '{"message_type":"exit_error","code":1,"message":"Fatal: There were 1 errors\\n"}',
    ].join("\n");
    const { restic } = resticSaying(SAID["0.18.0"], () => ({ code: 1, stderr }));
    const error = (await restic.restore("abc", "/tmp/r").catch((caught: unknown) => caught)) as Error;
    expect(error).toMatchObject({ kind: "failed" });
    expect(error.message).toBe(
      `restic failed (exit 1): There were 1 errors; the first: ${JSON.stringify(`/srv/world/${name}`)}: ${JSON.stringify(`open /proc/1/fd/8/restored/srv/world/${name}: file name too long`)}`,
    );
    expect(error.message).not.toContain("\n");
  });

  it("a fatal error said as JSON is quoted as words", async () => {
    const { restic } = resticSaying(SAID["0.18.0"], () => ({
      code: 1,
      stderr: '{"message_type":"exit_error","code":1,"message":"Fatal: all source directories/files do not exist"}\n',
    }));
    await expect(restic.snapshots()).rejects.toMatchObject({
      message: "restic failed (exit 1): all source directories/files do not exist",
    });
  });

  it("a restic stopped by a signal it caught (exit 130, 0.17 on: Ctrl-C, SIGTERM) was interrupted, not failed", async () => {
    const { restic } = resticSaying(SAID["0.18.0"], () => ({ code: 130, stderr: "context canceled\n" }));
    await expect(restic.restore("abc", "/tmp/r")).rejects.toMatchObject({ kind: "interrupted" });
  });

  it("a wrong password said as JSON (exit 12) is one", async () => {
    const { restic } = resticSaying(SAID["0.18.0"], () => ({
      code: 12,
      stderr: '{"message_type":"exit_error","code":12,"message":"Fatal: wrong password or no key found"}\n',
    }));
    await expect(restic.snapshots()).rejects.toMatchObject({ kind: "wrong-password" });
  });
});

describe("restic 0.11's restore", () => {
  it("fails when restic said what it could not restore, though it exited 0", async () => {
    const { restic } = resticSaying(SAID["0.11.0"], () => ({
      code: 0,
      stderr:
        "ignoring error for /srv/world/level.dat: ciphertext verification failed\nignoring error for /srv/world/level.dat: UtimesNano: no such file or directory\n",
    }));
    await expect(restic.restore("abc", "/tmp/r")).rejects.toMatchObject({
      kind: "failed",
      message:
        'restic could not restore 2 entries, though it exited 0; the first: "ignoring error for /srv/world/level.dat: ciphertext verification failed"',
    });
  });
});

describe("a repository restic 0.17 and newer cannot open", () => {
  it("stops at restic's first retry of the repository's config, with its reason, as older versions stopped", async () => {
    // restic 0.18.0's own line for a REST server that refuses the connection (it would retry for 15 minutes).
    const line =
      'Stat(<config/>) returned error, retrying after 17.48981552s: Head "http://u:***@127.0.0.1:9/repo/config": dial tcp 127.0.0.1:9: connect: connection refused';
    let aborted = false;
    const restic = new Restic({
      runner: {
        run: async (_command, args, options) => {
          if (args[0] === "version") return { code: 0, signal: null, stdout: SAID["0.18.0"], stderr: "" };
          options?.onStderrLine?.(line);
          aborted = options?.signal?.aborted ?? false;
          return { code: null, signal: "SIGTERM", stdout: "", stderr: `${line}\n` };
        },
      },
      env: { RESTIC_REPOSITORY: "rest:http://u:p@127.0.0.1:9/repo/", RESTIC_PASSWORD_FILE: "/root/.restic-password" },
      logFile: "/var/log/mc-backup.log",
    });
    await expect(restic.snapshots()).rejects.toMatchObject({
      kind: "remote",
      message:
        'restic cannot reach the repository: Head "http://u:***@127.0.0.1:9/repo/config": dial tcp 127.0.0.1:9: connect: connection refused',
    });
    expect(aborted).toBe(true);
  });
});

describe("what a restore writes", () => {
  const listed = (summary: string) =>
    `[{"time":"2026-11-29T06:31:14Z","tree":"b5e9","paths":["/srv/world"],"hostname":"vm","id":"6aa018d6a2f6106f2217828e6f2186c3cb665f4dbeac21f5b22277d9b20e3d09","short_id":"6aa018d6"${summary}}]`;

  it("is read from the snapshot's own summary (restic 0.17 on), asking restic nothing more", async () => {
    const { restic, calls } = resticSaying(SAID["0.18.0"], (args) => ({
      stdout: args[0] === "snapshots" ? listed(',"summary":{"data_added":5,"total_bytes_processed":100003}') : "",
    }));
    const [snapshot] = await restic.snapshots();
    expect(await restic.restoreSize(snapshot as Snapshot)).toBe(100003);
    expect(calls.map((c) => c.args[0])).toEqual(["version", "snapshots"]);
  });

  it("is asked of restic stats where the snapshot keeps no summary (before 0.17)", async () => {
    const { restic, calls } = resticSaying(SAID["0.14.0"], (args) => ({
      stdout: args[0] === "snapshots" ? listed("") : '{"total_size":100003,"total_file_count":7,"snapshots_count":1}',
    }));
    const [snapshot] = await restic.snapshots();
    expect(await restic.restoreSize(snapshot as Snapshot)).toBe(100003);
    expect(calls.map((c) => c.args.slice(0, 4).join(" "))).toEqual([
      "version",
      "snapshots --json",
      "stats --json --mode restore-size",
    ]);
  });
});
