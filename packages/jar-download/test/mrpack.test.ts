import { closeSync, openSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createHttpClient, systemClock } from "@mcops/core";
import { JobError, UsageError } from "@mcops/core/errors";
import { VolumeDir } from "@mcops/core/volume";
import {
  buildMrpack,
  type ModrinthStandIn,
  type MrpackOptions,
  mrpackFile,
  mrpackIndex,
  startModrinthStandIn,
  type TempDir,
  tempDir,
} from "@mcops/testkit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ModPack, type MrpackZip, readMrpack, stagePack } from "../src/mrpack.ts";
import { modProjects } from "./config.ts";

const http = createHttpClient({ userAgent: "mcops-jar-download/test (ops@example.com)", retryDelayMs: 5 });
const OWNER = { uid: 988, gid: 988 };
let stand: ModrinthStandIn;
let dir: TempDir;
let root: VolumeDir;
let staging: VolumeDir;

beforeAll(async () => {
  stand = await startModrinthStandIn({ projects: modProjects() });
});
afterAll(() => stand.close());
beforeEach(() => {
  stand.requests.length = 0;
  dir = tempDir("mcops-mrpack-");
  root = VolumeDir.open(dir.path);
  staging = root.makePrivateDir(".mcops-pack-");
});
afterEach(() => {
  staging.close();
  root.close();
  dir.cleanup();
});

const sodium = () => stand.file("AANobbMI", "V1000001", "sodium.jar");
const fabricApi = () => stand.file("P7dR8mSH", "V2000002", "fabric-api.jar");

/** Writes the pack and reads it; the zip is closed by the caller (`use`). */
async function read(options: MrpackOptions, allowedHosts?: string[]): Promise<{ pack: ModPack; zip: MrpackZip }> {
  const path = join(dir.path, "pack.mrpack");
  writeFileSync(path, buildMrpack(options));
  const fd = openSync(path, "r");
  try {
    return await readMrpack(fd, { where: path, ...(allowedHosts ? { allowedHosts } : {}) });
  } finally {
    // yauzl reads through the descriptor only while the zip is used; the tests stage right after reading.
    fdsToClose.push(fd);
  }
}
const fdsToClose: number[] = [];
afterEach(() => {
  for (const fd of fdsToClose.splice(0)) closeSync(fd);
});

async function stage(options: MrpackOptions, allowedHosts?: string[]): Promise<string[]> {
  const { pack, zip } = await read(options, allowedHosts);
  try {
    return await stagePack(pack, zip, staging, {
      http,
      clock: systemClock,
      retryDelayMs: 1,
      owner: OWNER,
      hostMap: stand.hostMap,
    });
  } finally {
    zip.close();
  }
}

const staged = (rel: string) => readFileSync(join(staging.self, rel));

describe("readMrpack and stagePack with a good pack", () => {
  it("stages the mods, the config and server-overrides over overrides, skipping client-only files", async () => {
    const index = mrpackIndex({
      files: [
        mrpackFile(sodium(), "mods/sodium.jar", { client: "required", server: "unsupported" }),
        mrpackFile(fabricApi(), "mods/fabric-api.jar", { client: "required", server: "required" }),
        mrpackFile(stand.file("P7dR8mSH", "V2000002", "notes.txt"), "config/notes.txt"),
      ],
    });
    const { pack, zip } = await read({
      index,
      overrides: {
        "config/a.toml": "from overrides\n",
        "config/b.toml": "only overrides\n",
        "kubejs/server_scripts/x.js": "//\n",
      },
      serverOverrides: { "config/a.toml": "from server-overrides\n" },
    });
    try {
      expect(pack).toMatchObject({
        name: "Test Pack",
        versionId: "1.0.0",
        game: "1.21.4",
        loader: { type: "fabric", version: "0.16.10" },
      });
      expect(pack.files.map((f) => f.path)).toEqual(["mods/fabric-api.jar", "config/notes.txt"]);
      const tops = await stagePack(pack, zip, staging, {
        http,
        clock: systemClock,
        retryDelayMs: 1,
        owner: OWNER,
        hostMap: stand.hostMap,
      });
      expect(tops).toEqual(["config", "kubejs", "mods"]);
    } finally {
      zip.close();
    }
    expect(staged("mods/fabric-api.jar")).toEqual(fabricApi().bytes);
    expect(staged("config/notes.txt").toString()).toBe("not a jar\n");
    expect(staged("config/a.toml").toString()).toBe("from server-overrides\n");
    expect(staged("config/b.toml").toString()).toBe("only overrides\n");
    expect(staged("kubejs/server_scripts/x.js").toString()).toBe("//\n");
    expect(staging.list().sort()).toEqual(["config", "kubejs", "mods"]);
    expect(staging.tryDir("mods")?.list()).toEqual(["fabric-api.jar"]);
    for (const rel of ["mods", "mods/fabric-api.jar", "config/a.toml", "kubejs/server_scripts"]) {
      const stat = statSync(join(staging.self, rel));
      expect([stat.uid, stat.gid], rel).toEqual([988, 988]);
    }
    expect(stand.requests.map((r) => r.path)).not.toContain("/cdn/data/AANobbMI/versions/V1000001/sodium.jar");
  });

  it("reads an env with one side alone (labrinth takes a map): a side left out does not leave the file out", async () => {
    const notes = stand.file("P7dR8mSH", "V2000002", "notes.txt");
    const { pack, zip } = await read({
      index: mrpackIndex({
        files: [
          mrpackFile(fabricApi(), "mods/fabric-api.jar", { server: "required" }),
          mrpackFile(notes, "config/notes.txt", { client: "optional" }),
          mrpackFile(sodium(), "mods/sodium.jar", { server: "unsupported" }),
          { ...mrpackFile(notes, "config/empty-env.txt"), env: {} },
        ],
      }),
    });
    zip.close();
    expect(pack.files.map((f) => [f.path, f.env])).toEqual([
      ["mods/fabric-api.jar", { server: "required" }],
      ["config/notes.txt", { client: "optional" }],
      ["config/empty-env.txt", {}],
    ]);
    expect(pack.skipped).toBe(1);
  });

  it("still refuses a side type the format has no word for", async () => {
    const error = await read({
      index: mrpackIndex({ files: [mrpackFile(fabricApi(), "mods/fabric-api.jar", { server: "sometimes" })] }),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/modrinth\.index\.json\.files\[0\]\.env\.server: /);
  });

  it("tries each download address in turn", async () => {
    const file = mrpackFile(fabricApi(), "mods/fabric-api.jar");
    file.downloads = ["https://cdn.modrinth.com/data/P7dR8mSH/versions/V2000002/gone.jar", fabricApi().url];
    await stage({ index: mrpackIndex({ files: [file] }) });
    expect(staged("mods/fabric-api.jar")).toEqual(fabricApi().bytes);
    expect(stand.requests.map((r) => r.status)).toEqual([404, 200]);
  });

  it("names neoforge, forge and quilt packs' loaders, and a vanilla pack's none", async () => {
    for (const [key, type] of [
      ["neoforge", "neoforge"],
      ["forge", "forge"],
      ["quilt-loader", "quilt"],
    ] as const) {
      const { pack, zip } = await read({
        index: mrpackIndex({ dependencies: { minecraft: "1.21.1", [key]: "21.1.77" } }),
      });
      zip.close();
      expect(pack.loader).toEqual({ type, version: "21.1.77" });
    }
    const { pack, zip } = await read({ index: mrpackIndex({ dependencies: { minecraft: "1.21.1" } }) });
    zip.close();
    expect(pack.loader).toEqual({ type: undefined, version: undefined });
  });
});

describe("a download that is not the file the pack names", () => {
  const cases: Array<[string, (file: Record<string, unknown>) => void]> = [
    ["a wrong sha512", (file) => ((file.hashes as Record<string, string>).sha512 = "0".repeat(128))],
    ["a wrong sha1", (file) => ((file.hashes as Record<string, string>).sha1 = "0".repeat(40))],
    ["a size larger than the file's", (file) => (file.fileSize = (file.fileSize as number) + 1)],
    ["a size smaller than the file's", (file) => (file.fileSize = (file.fileSize as number) - 1)],
  ];
  for (const [name, spoil] of cases) {
    it(`${name}: JobError, nothing left staged`, async () => {
      const bad = mrpackFile(fabricApi(), "mods/fabric-api.jar");
      spoil(bad);
      const index = mrpackIndex({
        files: [mrpackFile(stand.file("P7dR8mSH", "V2000002", "notes.txt"), "config/notes.txt"), bad],
      });
      const error = await stage({ index, overrides: { "config/a.toml": "x" } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JobError);
      expect(error).not.toBeInstanceOf(UsageError);
      expect((error as Error).message).toContain("mods/fabric-api.jar");
      expect(staging.list()).toEqual([]);
    });
  }
});

describe("a hostile or malformed pack is refused before anything is downloaded or written", () => {
  async function refused(options: MrpackOptions, naming: string, allowedHosts?: string[]): Promise<void> {
    // Read and staged as a good pack would be: a pack let through would be downloaded and written.
    const error = await stage(options, allowedHosts).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain(naming);
    expect((error as Error).message).not.toContain("\n");
    expect(stand.requests).toEqual([]);
    expect(staging.list()).toEqual([]);
  }
  const withPath = (path: string) => {
    const file = mrpackFile(fabricApi(), path);
    return { index: mrpackIndex({ files: [file] }) };
  };

  for (const [path, why] of [
    ["/etc/cron.d/x", "is absolute"],
    ["mods/../../server.jar", "has a .. component"],
    ["mods/./a.jar", "has a . component"],
    ["C:\\mods\\a.jar", "backslash"],
    ["C:/mods/a.jar", "drive letter"],
    ["mods\\a.jar", "backslash"],
    ["mods//a.jar", "empty component"],
    ["mods/a\u0000.jar", "control character"],
    ["server.jar", "the server's own"],
    ["SERVER.JAR", "the server's own"],
    ["banned-players.json", "the server's own"],
    ["libraries/net/x.jar", "the server's own"],
    [".hidden/x", "hidden"],
    ["mods/.hidden.jar", "hidden"],
    ["world/level.dat", "the server's own"],
    ["datapacks/x.zip", "not a folder a server pack writes"],
    ["start.sh", "could run"],
  ] as const) {
    it(`files[].path ${JSON.stringify(path)}: ${why}`, () => refused(withPath(path), why));
  }

  for (const [name, why] of [
    ["overrides/../x", "has a .. component"],
    ["overrides//etc/passwd", "is absolute"],
    ["overrides/config//a.toml", "empty component"],
    ["overrides/config\\a.toml", "backslash"],
    ["overrides/C:/a.toml", "drive letter"],
    ["server-overrides/eula.txt", "the server's own"],
    ["server-overrides/Server.Properties", "the server's own"],
    ["overrides/world_nether/DIM-1/x", "the server's own"],
    ["overrides/.git/config", "hidden"],
  ] as const) {
    it(`the entry ${JSON.stringify(name)}: ${why}`, () =>
      refused({ entries: [{ name: Buffer.from(name), data: Buffer.from("x") }] }, why));
  }

  it("a symbolic link entry", () =>
    refused(
      { entries: [{ name: Buffer.from("overrides/config/link"), data: Buffer.from("/etc/shadow"), mode: 0o120777 }] },
      "is a symbolic link",
    ));
  it("a FIFO entry", () =>
    refused(
      { entries: [{ name: Buffer.from("overrides/config/fifo"), data: Buffer.alloc(0), mode: 0o010644 }] },
      "not a regular file",
    ));
  it("two files at one path", () => {
    const a = mrpackFile(fabricApi(), "mods/a.jar");
    const b = mrpackFile(sodium(), "mods/A.jar");
    return refused({ index: mrpackIndex({ files: [a, b] }) }, "is the same path as");
  });
  it("a file and an override at one path", () =>
    refused(
      { index: mrpackIndex({ files: [mrpackFile(fabricApi(), "mods/a.jar")] }), overrides: { "mods/a.jar": "x" } },
      "same path",
    ));
  it("two entries in overrides/ that differ only in case", () =>
    refused({ overrides: { "config/a.toml": "1", "config/A.toml": "2" } }, "given twice"));
  it("a file where another path needs a folder", () =>
    refused({ overrides: { "config/a": "1", "config/a/b.toml": "2" } }, "needs a folder"));
  it("a download host not allowed", () => {
    const file = mrpackFile(fabricApi(), "mods/a.jar");
    file.downloads = ["https://evil.example.com/a.jar"];
    return refused({ index: mrpackIndex({ files: [file] }) }, "evil.example.com is not a host");
  });
  for (const url of [
    "http://cdn.modrinth.com/a.jar",
    "https://user@cdn.modrinth.com/a.jar",
    "https://cdn.modrinth.com:8443/a.jar",
    "https://cdn.modrinth.com.evil.example/a.jar",
  ]) {
    it(`the download address ${url}`, () => {
      const file = mrpackFile(fabricApi(), "mods/a.jar");
      file.downloads = [url];
      return refused({ index: mrpackIndex({ files: [file] }) }, "downloads from");
    });
  }
  it("the allowed hosts are a parameter", () =>
    refused(withPath("mods/a.jar"), "cdn.modrinth.com is not a host", ["github.com"]));
  it("two loaders", () =>
    refused(
      { index: mrpackIndex({ dependencies: { minecraft: "1.21.4", forge: "1", "fabric-loader": "2" } }) },
      "one loader",
    ));
  it("another game", () => refused({ index: mrpackIndex({ game: "terraria" }) }, "modrinth.index.json.game"));
  it("a sha512 that is not 128 hex digits", () => {
    const file = mrpackFile(fabricApi(), "mods/a.jar");
    (file.hashes as Record<string, string>).sha512 = "abc";
    return refused({ index: mrpackIndex({ files: [file] }) }, "files[0].hashes.sha512");
  });
  it("no index", () => refused({ index: null }, "has no modrinth.index.json"));
  it("an index that is not JSON", () => refused({ index: Buffer.from("{") }, "not JSON"));
  it("an index that declares a small size and inflates past 4 MiB", () =>
    refused(
      {
        index: null,
        entries: [
          {
            name: Buffer.from("modrinth.index.json"),
            data: Buffer.from(JSON.stringify(mrpackIndex({ padding: "x".repeat(5 * 1024 * 1024) }))),
            declaredSize: 1000,
          },
        ],
      },
      "modrinth.index.json cannot be read",
    ));
  it("an index over 4 MiB", () =>
    refused({ index: mrpackIndex({ summary: "x", padding: "x".repeat(4 * 1024 * 1024) }) }, "more than 4"));
});

describe("a zip bomb", () => {
  it("an override that inflates past the size it declares is refused and nothing is left", async () => {
    const error = await stage({
      overrides: { "config/ok.toml": "fine\n" },
      entries: [
        { name: Buffer.from("overrides/config/bomb.txt"), data: Buffer.alloc(4 * 1024 * 1024), declaredSize: 10 },
      ],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain("overrides/config/bomb.txt");
    expect(staging.list()).toEqual([]);
  });
});
