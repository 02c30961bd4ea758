import { execFileSync } from "node:child_process";
import {
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { createHttpClient, systemClock } from "@mcops/core";
import { VolumeDir } from "@mcops/core/volume";
import { type DownloadStandIn, startDownloadStandIn, type TempDir, tempDir } from "@mcops/testkit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { downloadVerified, installedDigest } from "../src/download.ts";
import { INSTALL_DIR, installJar, JAR, removeStaleTemps, WORK_PREFIX } from "../src/install.ts";
import { type Artifact, createSource } from "../src/sources.ts";

const OLD = Buffer.from("PK\u0003\u0004 the old jar");
let stand: DownloadStandIn;
let dir: TempDir;
let volume: VolumeDir;
let work: VolumeDir;
const http = createHttpClient({ userAgent: "mcops-jar-download/test (ops@example.com)", retryDelayMs: 5 });

beforeAll(async () => {
  stand = await startDownloadStandIn();
});
afterAll(() => stand.close());
beforeEach(() => {
  stand.reset();
  dir = tempDir("mcops-jar-");
  writeFileSync(join(dir.path, "server.jar"), OLD);
  volume = VolumeDir.open(dir.path);
  work = volume.makePrivateDir(WORK_PREFIX);
});
afterEach(() => {
  work.close();
  volume.close();
  dir.cleanup();
});

async function paper(): Promise<Artifact> {
  return createSource(http, stand.bases).resolve({ type: "paper", version: "1.21.4" });
}

function download(artifact: Artifact) {
  return downloadVerified(artifact, work.at(JAR), { http, clock: systemClock, retryDelayMs: 5 });
}

/** server.jar is still the old one and no temporary file is left. */
function untouched(): void {
  expect(readFileSync(join(dir.path, "server.jar"))).toEqual(OLD);
  expect(readdirSync(dir.path).filter((name) => !name.startsWith(WORK_PREFIX))).toEqual(["server.jar"]);
  expect(work.list()).toEqual([]);
}

describe("downloadVerified", () => {
  it("writes the exact bytes and reports the verified digest", async () => {
    const artifact = await paper();
    const done = await download(artifact);
    expect(readFileSync(done.path)).toEqual(stand.jar(artifact.fileName));
    expect(done).toMatchObject({ size: artifact.size, digest: artifact.checksum?.hex, algorithm: "sha256" });
  });

  it("never keeps a body whose checksum does not match", async () => {
    const artifact = await paper();
    stand.inject({ kind: "corrupt", route: "jar", times: 10 });
    await expect(download(artifact)).rejects.toThrow(/^paper-1\.21\.4-231\.jar does not match its sha256 \(expected/);
    untouched();
    expect(stand.requests.filter((r) => r.route === "jar")).toHaveLength(1);
  });

  it("fetches a cut body again, and gives up after four tries", async () => {
    const artifact = await paper();
    stand.inject({ kind: "truncate", bytes: 1000, route: "jar" });
    const done = await download(artifact);
    expect(readFileSync(done.path)).toEqual(stand.jar(artifact.fileName));
    work.unlink(JAR);

    stand.reset();
    stand.inject({ kind: "truncate", bytes: 1000, route: "jar", times: 4 });
    await expect(download(artifact)).rejects.toThrow(/failed 4 times: the connection broke after 1000 B/);
    untouched();
  });

  it("gives up on a body that stops arriving and fetches it again", async () => {
    const artifact = await paper();
    // The stand-in holds the connection open for 10 minutes after 2000 bytes: only giving up on the stall lets the
    // download end, so ending at all proves it did not wait for the connection to break. The stall limit, 5 s, is far
    // above any pause a busy machine puts in a loopback answer, so no other fetch is taken for a stall.
    stand.inject({ kind: "truncate", bytes: 2000, stallMs: 600_000, route: "jar" });
    const retries: string[] = [];
    const done = await downloadVerified(artifact, work.at(JAR), {
      http,
      clock: systemClock,
      retryDelayMs: 5,
      stallMs: 5000,
      onRetry: (reason) => retries.push(reason),
    });
    expect(retries).toEqual(["no data for 5.0 s after 1.95 KiB"]);
    expect(readFileSync(done.path)).toEqual(stand.jar(artifact.fileName));
  });

  it("retries a 5xx on the jar itself", async () => {
    const artifact = await paper();
    stand.inject({ kind: "status", status: 500, route: "jar", times: 2 });
    await download(artifact);
    expect(stand.requests.filter((r) => r.route === "jar").map((r) => r.status)).toEqual([500, 500, 200]);
  });

  it("checks the size where there is no checksum (Fabric), and refuses what is not a jar", async () => {
    const fabric = await createSource(http, stand.bases).resolve({ type: "fabric", version: "1.21.4" });
    const done = await download(fabric);
    expect(done.size).toBe(stand.jar(fabric.fileName).length);
    work.unlink(JAR);

    const page: Artifact = { ...fabric, url: `${stand.url}/nowhere`, fileName: "x.jar" };
    await expect(download(page)).rejects.toThrow(/answered 404/);
    untouched();
  });
});

describe("installJar", () => {
  it("keeps the old jar as server.jar.previous, gives the new one to 988:988 and 0644", async () => {
    const artifact = await paper();
    await download(artifact);
    expect(installJar(work, volume, { uid: 988, gid: 988 })).toEqual({ previous: true });
    const jar = join(dir.path, "server.jar");
    expect(readFileSync(jar)).toEqual(stand.jar(artifact.fileName));
    expect(readFileSync(join(dir.path, "server.jar.previous"))).toEqual(OLD);
    expect(statSync(jar)).toMatchObject({ uid: 988, gid: 988 });
    expect(statSync(jar).mode & 0o777).toBe(0o644);
    expect(readdirSync(dir.path).sort()).toEqual(
      ["server.jar", "server.jar.previous", work.path.slice(dir.path.length + 1)].sort(),
    );
    expect(work.list()).toEqual([]);
  });

  it("installs into an empty volume without a previous jar", async () => {
    rmSync(join(dir.path, "server.jar"));
    await download(await paper());
    expect(installJar(work, volume, { uid: 988, gid: 988 })).toEqual({ previous: false });
    expect(existsSync(join(dir.path, "server.jar.previous"))).toBe(false);
  });

  it("chowns nothing outside the volume when the game's user swaps the download directory for a link", async () => {
    const outside = tempDir("mcops-outside-");
    const canary = join(outside.path, "shadow");
    writeFileSync(canary, "root only", { mode: 0o600 });
    writeFileSync(join(outside.path, JAR), "root only", { mode: 0o600 });
    const artifact = await paper();
    await download(artifact);
    // What a process of the game's user can do in its own volume: rename the directory it cannot enter, and plant a
    // link to a root-only directory under its old name.
    renameSync(work.path, join(dir.path, "renamed"));
    symlinkSync(outside.path, work.path);
    installJar(work, volume, { uid: 988, gid: 988 });
    expect(lstatSync(join(dir.path, JAR)).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(dir.path, JAR))).toEqual(stand.jar(artifact.fileName));
    for (const file of [canary, join(outside.path, JAR)]) {
      expect(statSync(file)).toMatchObject({ uid: 0, gid: 0 });
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }
    outside.cleanup();
  });

  it("links a server.jar that is a link as the link: server.jar.previous never copies what it points to", async () => {
    const outside = tempDir("mcops-outside-");
    writeFileSync(join(outside.path, "secret"), "root only", { mode: 0o600 });
    rmSync(join(dir.path, JAR));
    symlinkSync(join(outside.path, "secret"), join(dir.path, JAR));
    await download(await paper());
    installJar(work, volume, { uid: 988, gid: 988 });
    expect(lstatSync(join(dir.path, "server.jar.previous")).isSymbolicLink()).toBe(true);
    expect(statSync(join(outside.path, "secret"))).toMatchObject({ uid: 0, gid: 0 });
    outside.cleanup();
  });

  it("does not read a server.jar that is a FIFO or a link to a device to see whether it is installed", async () => {
    rmSync(join(dir.path, JAR));
    execFileSync("mkfifo", [join(dir.path, JAR)]);
    expect(await installedDigest(volume, JAR, "sha256", undefined)).toBeUndefined();
    rmSync(join(dir.path, JAR));
    symlinkSync("/dev/zero", join(dir.path, JAR));
    expect(await installedDigest(volume, JAR, "sha256", undefined)).toBeUndefined();
    // A sparse server.jar of terabytes, with no size to compare (Purpur publishes none): not read at all.
    rmSync(join(dir.path, JAR));
    execFileSync("truncate", ["-s", "4T", join(dir.path, JAR)]);
    expect(await installedDigest(volume, JAR, "md5", undefined)).toBeUndefined();
  });

  it("clears what an interrupted run left, and nothing the game's user made to look like it", () => {
    const outside = tempDir("mcops-outside-");
    writeFileSync(join(outside.path, "keep"), "root only");
    writeFileSync(join(dir.path, ".server.jar.download-123"), "half");
    symlinkSync(join(outside.path, "keep"), join(dir.path, ".server.jar.download-456"));
    mkdirSync(join(dir.path, `${WORK_PREFIX}evil`));
    symlinkSync(outside.path, join(dir.path, `${WORK_PREFIX}evil`, "link"));
    chownSync(join(dir.path, `${WORK_PREFIX}evil`), 988, 988);
    const stale = volume.makePrivateDir(WORK_PREFIX);
    writeFileSync(`${stale.path}/${JAR}`, "half");
    stale.close();
    // A loader's installer stopped midway: its directory, the game's user's, with what it had written.
    const loader = volume.makePrivateDir(WORK_PREFIX);
    mkdirSync(join(loader.path, INSTALL_DIR, "libraries"), { recursive: true });
    writeFileSync(join(loader.path, INSTALL_DIR, "libraries", "half.jar"), "half");
    chownSync(join(loader.path, INSTALL_DIR), 988, 988);
    loader.close();
    // One of root's directories renamed by the game's user to look like a download directory: restore's aside one.
    const aside = volume.makePrivateDir(".mcops-pre-restore-");
    mkdirSync(join(aside.path, "world"));
    writeFileSync(join(aside.path, "world", "level.dat"), "the previous world");
    renameSync(aside.path, join(dir.path, `${WORK_PREFIX}renamed`));
    aside.close();
    removeStaleTemps(volume);
    expect(readdirSync(dir.path).sort()).toEqual([`${WORK_PREFIX}evil`, `${WORK_PREFIX}renamed`, JAR].sort());
    expect(readFileSync(join(dir.path, `${WORK_PREFIX}renamed`, "world", "level.dat"), "utf8")).toBe(
      "the previous world",
    );
    expect(readFileSync(join(outside.path, "keep"), "utf8")).toBe("root only");
    outside.cleanup();
  });

  it("clears temporary files an interrupted run left", () => {
    writeFileSync(join(dir.path, ".server.jar.download-123"), "half");
    removeStaleTemps(volume);
    expect(readFileSync(join(dir.path, "server.jar"))).toEqual(OLD);
    expect(readdirSync(dir.path)).toEqual(["server.jar"]);
  });
});
