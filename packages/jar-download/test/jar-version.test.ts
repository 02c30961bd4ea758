import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VolumeDir } from "@mcops/core/volume";
import { type DownloadStandIn, startDownloadStandIn, type TempDir, tempDir, zipFile } from "@mcops/testkit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { jarVersion } from "../src/jar-version.ts";

let stand: DownloadStandIn;
let dir: TempDir;
let volume: VolumeDir;

const zip = (entries: Record<string, string>) =>
  zipFile(Object.entries(entries).map(([name, data]) => ({ name: Buffer.from(name), data: Buffer.from(data) })));
const put = (name: string, data: string | Buffer) => writeFileSync(join(dir.path, "volume", name), data);

beforeAll(async () => {
  stand = await startDownloadStandIn();
});
afterAll(() => stand.close());
beforeEach(() => {
  dir = tempDir("mcops-jar-version-");
  mkdirSync(join(dir.path, "volume"));
  volume = VolumeDir.open(join(dir.path, "volume"));
});
afterEach(() => {
  volume.close();
  dir.cleanup();
});

describe("jarVersion", () => {
  it("reads version.json from vanilla's and paperclip's jars", async () => {
    put("vanilla.jar", stand.jar("vanilla-1.21.3.jar"));
    put("paper.jar", stand.jar("paper-1.21.4-231.jar"));
    expect(await jarVersion(volume, "vanilla.jar")).toEqual({ id: "1.21.3", dataVersion: 4082 });
    expect(await jarVersion(volume, "paper.jar")).toEqual({ id: "1.21.4", dataVersion: 4189 });
  });

  it("reads a deflated version.json, as the real jars have it", async () => {
    const json = Buffer.from(JSON.stringify({ id: "1.21.1", world_version: 3955, stable: true }));
    put("deflated.jar", zipFile([{ name: Buffer.from("version.json"), data: json }], { deflate: true }));
    expect(await jarVersion(volume, "deflated.jar")).toEqual({ id: "1.21.1", dataVersion: 3955 });
  });

  it("is undefined for a jar that does not say, and for what is not a jar", async () => {
    put("fabric.jar", stand.jar("fabric-server-mc.1.21.4-loader.0.16.10-launcher.1.0.1.jar"));
    put("text.jar", "PK\u0003\u0004 the jar that was there");
    put("no-world.jar", zip({ "version.json": JSON.stringify({ id: "1.21.4" }) }));
    put("bad-id.jar", zip({ "version.json": JSON.stringify({ id: "../../etc", world_version: 1 }) }));
    put("not-json.jar", zip({ "version.json": "{" }));
    put("huge.jar", zip({ "version.json": `{"id":"1.21.4","world_version":4189,"x":"${"a".repeat(70_000)}"}` }));
    put("nested.jar", zip({ "META-INF/version.json": JSON.stringify({ id: "1.21.4", world_version: 4189 }) }));
    put("fine.jar", zip({ "version.json": JSON.stringify({ id: "1.21.4", world_version: 4189 }) }));
    for (const name of ["fabric.jar", "text.jar", "no-world.jar", "bad-id.jar", "not-json.jar", "huge.jar"]) {
      expect(await jarVersion(volume, name), name).toBeUndefined();
    }
    expect(await jarVersion(volume, "nested.jar")).toBeUndefined();
    expect(await jarVersion(volume, "missing.jar")).toBeUndefined();
    expect(await jarVersion(volume, "fine.jar")).toEqual({ id: "1.21.4", dataVersion: 4189 });
  });

  it("follows no link and does not block on a FIFO", async () => {
    const outside = join(dir.path, "outside.jar");
    writeFileSync(outside, stand.jar("vanilla-1.21.4.jar"));
    symlinkSync(outside, join(dir.path, "volume", "link.jar"));
    expect(await jarVersion(volume, "link.jar")).toBeUndefined();
    rmSync(outside);
    execFileSync("mkfifo", [join(dir.path, "volume", "fifo.jar")]);
    expect(await jarVersion(volume, "fifo.jar")).toBeUndefined();
  });
});
