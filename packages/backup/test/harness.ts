import { type ChildProcess, execFileSync, spawnSync } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { systemClock } from "@mcops/core/clock";
import { resolvePaths } from "@mcops/core/paths";
import { zxRunner } from "@mcops/core/runner";
import {
  type BuiltWorld,
  buildWorld,
  type DiscordStandIn,
  type PanelStandIn,
  type RawChunk,
  regionChunks,
  startDiscordStandIn,
  startPanelStandIn,
  startTool,
  type ToolRun,
  toolEnv,
} from "@mcops/testkit";
import { parseResticVersion, type ResticVersion } from "@mcops/world/restic-version";
import { expect } from "vitest";
import type { runRestore } from "../src/commands/restore.ts";

/** A game server's world, a real restic repository behind a local rclone remote, and the panel and Discord stand-ins. */
export const BIN = fileURLToPath(new URL("../dist/backup.mjs", import.meta.url));

export type Run = ToolRun;

export interface Server {
  root: string;
  uuid: string;
  worldDir: string;
  configDir: string;
  logDir: string;
  runDir: string;
  repoDir: string;
  passwordFile: string;
  panel: PanelStandIn;
  discord: DiscordStandIn;
  env: NodeJS.ProcessEnv;
  backupEnv(overrides?: Record<string, string>): void;
  run(args?: string[], extraEnv?: Record<string, string>): Promise<Run>;
  start(args?: string[], extraEnv?: Record<string, string>): { child: ChildProcess; done: Promise<Run> };
  backupLog(): string;
  close(): Promise<void>;
}

export const PASSWORD = "correct horse battery staple mcops test";

export interface ServerOptions {
  state?: "offline" | "running";
  worldMiB?: number;
  /** false: the game writes no latest.log (the console answers go nowhere). */
  writesLog?: boolean;
  /** How long "stopping" lasts (default 100 ms); a test holds it with a long one and ends it with setState. */
  stopMs?: number;
  /** How long the game takes from save-all to "Saved the game" (default 20 ms). */
  saveDelayMs?: number;
  /** How long the panel caches the resources answer (the stand-in's default: 250 ms; 20 s on a real panel). */
  resourcesCacheMs?: number;
  /** A folder put first in PATH for the tool and for `resticBackup`: another restic and rclone (testkit's resticVersions). */
  binDir?: string;
}

export async function startServer(options: ServerOptions = {}): Promise<Server> {
  const root = mkdtempSync(join(tmpdir(), "mcops-backup-"));
  const uuid = randomUUID();
  const worldDir = join(root, "volumes", uuid);
  const configDir = join(root, "etc");
  const logDir = join(root, "log");
  const runDir = join(root, "run");
  const repoDir = join(root, "repo");
  const passwordFile = join(root, "restic-password");
  for (const dir of [worldDir, configDir, logDir, runDir]) mkdirSync(dir, { recursive: true });
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  chmodSync(passwordFile, 0o600);
  makeWorld(worldDir, options.worldMiB ?? 2);

  const panel = await startPanelStandIn({
    servers: [{ uuid, state: options.state ?? "running" }],
    timings: { startMs: 100, stopMs: options.stopMs ?? 100 },
    ...(options.saveDelayMs === undefined ? {} : { saveDelayMs: options.saveDelayMs }),
    ...(options.resourcesCacheMs === undefined ? {} : { resourcesCacheMs: options.resourcesCacheMs }),
    ...(options.writesLog === false ? {} : { logFile: join(worldDir, "logs", "latest.log") }),
  });
  const discord = await startDiscordStandIn();
  const webhookEnv = join(configDir, "webhook.env");
  writeFileSync(webhookEnv, `WEBHOOK_URL=${discord.webhookUrl()}\nPLAY_HOST=play.example.test\n`);
  chmodSync(webhookEnv, 0o600);

  // A local rclone remote defined in the environment: rclone:mcopstest:<path> is a directory on this machine.
  const env = toolEnv(root, {
    RCLONE_CONFIG_MCOPSTEST_TYPE: "local",
    ...(options.binDir ? { PATH: `${options.binDir}:${process.env.PATH}` } : {}),
  });

  const server: Server = {
    root,
    uuid,
    worldDir,
    configDir,
    logDir,
    runDir,
    repoDir,
    passwordFile,
    panel,
    discord,
    env,
    backupEnv(overrides = {}) {
      const fields: Record<string, string> = {
        CONTROL_URL: panel.url,
        CONTROL_KEY: panel.apiKey,
        SERVER_ID: panel.server.identifier,
        WORLD_DIR: worldDir,
        RESTIC_REPOSITORY: `rclone:mcopstest:${repoDir}`,
        RESTIC_PASSWORD_FILE: passwordFile,
        BACKUP_SAVE_TIMEOUT: "5",
        ...overrides,
      };
      const file = join(configDir, "backup.env");
      writeFileSync(
        file,
        `${Object.entries(fields)
          .map(([k, v]) => `${k}=${v}`)
          .join("\n")}\n`,
      );
      chmodSync(file, 0o600);
    },
    start(args = [], extraEnv = {}) {
      return startTool(BIN, args, { cwd: root, env: { ...env, ...extraEnv } });
    },
    run(args = [], extraEnv = {}) {
      return server.start(args, extraEnv).done;
    },
    backupLog() {
      try {
        return readFileSync(join(logDir, "mc-backup.log"), "utf8");
      } catch {
        return "";
      }
    },
    async close() {
      await panel.close();
      await discord.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
  server.backupEnv();
  return server;
}

/** A small world as a Paper server lays it out: the overworld, _nether and _the_end, session.lock, server.properties. */
export function makeWorld(worldDir: string, mib: number): void {
  const file = (path: string, content: string | Buffer) => {
    mkdirSync(join(worldDir, path, ".."), { recursive: true });
    writeFileSync(join(worldDir, path), content);
  };
  file("server.properties", "#Minecraft server properties\nlevel-name=world\nmotd=A Minecraft Server\n");
  file("eula.txt", "eula=true\n");
  file("logs/latest.log", "");
  const chunk = Math.max(1, Math.floor((mib * 1024 * 1024) / 6));
  for (const [dir, sub] of [
    ["world", "region"],
    ["world_nether", "DIM-1/region"],
    ["world_the_end", "DIM1/region"],
  ] as const) {
    file(`${dir}/level.dat`, randomBytes(2048));
    file(`${dir}/session.lock`, "\u2603");
    file(`${dir}/${sub}/r.0.0.mca`, randomBytes(chunk));
    file(`${dir}/${sub}/r.0.-1.mca`, randomBytes(chunk));
  }
  file("world/playerdata/6f4b2c1e-0000-4000-8000-000000000001.dat", randomBytes(1024));
  file("world/datapacks/README.txt", "datapacks go here\n");
}

/** A hash over every file's path, type and content below `dir` (session.lock left out: it is never backed up). */
export function treeHash(dir: string): string {
  const hash = createHash("sha256");
  const walk = (path: string) => {
    for (const name of readdirSync(path).sort()) {
      const full = join(path, name);
      if (name === "session.lock") continue;
      const stat = lstatSync(full);
      const rel = relative(dir, full);
      if (stat.isDirectory()) {
        hash.update(`d ${rel}\n`);
        walk(full);
      } else if (stat.isSymbolicLink()) hash.update(`l ${rel} ${readlinkSync(full)}\n`);
      else hash.update(`f ${rel} ${stat.mode & 0o777}\n`).update(readFileSync(full));
    }
  };
  walk(dir);
  return hash.digest("hex");
}

/** What runRestore needs to run in this process (for a test's fault or race at a move), as the tool's own context. */
export function inProcess(server: Server): Parameters<typeof runRestore>[0] {
  const env = server.env;
  // restic, run by this process, finds the local rclone remote in the environment.
  for (const [k, v] of Object.entries(env)) if (k.startsWith("RCLONE_CONFIG_")) process.env[k] = v;
  const writer = { write: () => true };
  return {
    paths: resolvePaths(env),
    env,
    clock: systemClock,
    stdout: writer,
    stderr: writer,
    runner: zxRunner,
    signal: new AbortController().signal,
    atExit: new Set(),
  };
}

/** One backup that must succeed, then the stand-ins' records cleared: what a test checks comes after it. */
export async function backUp(server: Server): Promise<void> {
  const result = await server.run();
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  server.discord.reset();
  server.panel.reset();
}

/** The version of the restic on this process's PATH (the one the tool runs: the matrix puts a release's first). */
export function resticOnPath(): ResticVersion {
  const said = execFileSync("restic", ["version"], { encoding: "utf8" });
  const version = parseResticVersion(said);
  if (!version) throw new Error(`restic version said ${JSON.stringify(said)}`);
  return version;
}

export const STEVE = "6f4b2c1e-0000-4000-8000-000000000001";
export const ALEX = "6f4b2c1e-0000-4000-8000-000000000002";

/**
 * The harness's random world replaced by one built with real NBT and region files (testkit's buildWorld: Steve's and
 * Alex's playerdata, the nether and the end), and a usercache.json naming Steve and Alex.
 */
export function buildPlayersWorld(server: Server, options: Parameters<typeof buildWorld>[1] = {}): BuiltWorld {
  for (const name of readdirSync(server.worldDir)) {
    if (name.startsWith("world")) rmSync(join(server.worldDir, name), { recursive: true });
  }
  const built = buildWorld(server.worldDir, options);
  writeFileSync(
    join(server.worldDir, "usercache.json"),
    JSON.stringify([
      { name: "Steve", uuid: STEVE, expiresOn: "2026-12-25 10:00:00 +0000" },
      { name: "Alex", uuid: ALEX, expiresOn: "2026-12-25 10:00:00 +0000" },
    ]),
  );
  return built;
}

/** The last `=== Backup done ===` line's snapshot id and what it added, as the log says them. */
export function lastBackupDone(server: Server): { id: string; added: string } {
  const line = server
    .backupLog()
    .split("\n")
    .findLast((l) => l.includes("=== Backup done ==="));
  const done = /=== Backup done === .*added ([^,]+), repository [^,]+, snapshot (\w+)/.exec(line ?? "");
  expect(done, "a Backup done line in mc-backup.log").not.toBeNull();
  const [, added, id] = done as RegExpExecArray;
  return { id: id as string, added: added as string };
}

/**
 * A snapshot made by restic itself (not through backup) of `paths`, with `tags` and `extra` arguments such as
 * --time, into the server's repository; restic is the one the tool finds in its PATH.
 */
export function resticBackup(server: Server, paths: string[], tags: string[], extra: string[] = []): void {
  const result = spawnSync("restic", ["backup", ...extra, ...tags.flatMap((t) => ["--tag", t]), "--", ...paths], {
    env: {
      ...server.env,
      RESTIC_REPOSITORY: `rclone:mcopstest:${server.repoDir}`,
      RESTIC_PASSWORD_FILE: server.passwordFile,
    },
    encoding: "utf8",
  });
  expect(result.status, result.stderr).toBe(0);
}

/** The chunks of the region file at `path` by their index in it (none when there is no file). */
export const chunksAt = (path: string): Map<number, RawChunk> =>
  existsSync(path) ? regionChunks(readFileSync(path)) : new Map();

/** A chunk's index in its region file, from its chunk coordinates. */
export const chunkIndex = (x: number, z: number) => (x & 31) + (z & 31) * 32;

/** Every chunk of `after` is `expected`'s, byte for byte, with its timestamp; both hold the same chunks. */
export function expectSameChunks(after: Map<number, RawChunk>, expected: Map<number, RawChunk>, what: string): void {
  expect([...after.keys()].sort(), what).toEqual([...expected.keys()].sort());
  for (const [i, chunk] of after) {
    expect(chunk.raw.equals(expected.get(i)?.raw as Buffer), `${what} chunk ${i}`).toBe(true);
    expect(chunk.timestamp, `${what} chunk ${i}`).toBe(expected.get(i)?.timestamp);
  }
}

/** `live` with the chunks at `indices` taken from `snapshot` (or removed where it has none). */
export function expectedMerge(
  live: Map<number, RawChunk>,
  snapshot: Map<number, RawChunk>,
  indices: number[],
): Map<number, RawChunk> {
  const merged = new Map(live);
  for (const i of indices) {
    const theirs = snapshot.get(i);
    if (theirs) merged.set(i, theirs);
    else merged.delete(i);
  }
  return merged;
}

/** A file of the server's volume by its sha256, or "absent". */
export function volumeHash(server: Server, rel: string): string {
  const path = join(server.worldDir, rel);
  return existsSync(path) ? createHash("sha256").update(readFileSync(path)).digest("hex") : "absent";
}

/** Writes a file of the server's volume as the game would, making its folders. */
export function volumePut(server: Server, rel: string, content: string | Buffer): void {
  const path = join(server.worldDir, rel);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
}
