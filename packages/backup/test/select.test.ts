import { describe, expect, it } from "vitest";
import {
  dimensionFolder,
  dimensionKey,
  dimensionsIn,
  isFolderDimension,
  parseDimension,
  snapshotWorlds,
} from "../src/dimensions.ts";
import { closeMatches, parseUsercache } from "../src/restore/players.ts";
import { describeSelection, parseArea, parseSelection } from "../src/restore/select.ts";

describe("parseArea", () => {
  it("takes two corners in any order, in block coordinates", () => {
    expect(parseArea("600,250,-100,-100")).toEqual({ x1: -100, z1: -100, x2: 600, z2: 250 });
    expect(parseArea(" -1 , 0 ,-1,0")).toEqual({ x1: -1, z1: 0, x2: -1, z2: 0 });
  });

  it("counts the regions the area touches: 512 blocks a region, -1 is region -1", () => {
    const words = (text: string) =>
      describeSelection({ kind: "area", area: parseArea(text), dimension: "overworld", wholeRegions: true });
    expect(words("0,0,511,511")).toMatch(/\(1 region whole\)$/);
    expect(words("-10,-10,10,10")).toMatch(/\(4 regions whole\)$/);
    expect(words("-512,0,512,0")).toMatch(/\(3 regions whole\)$/);
  });

  it("gives the chunks the area touches: 16 blocks a chunk, -1 is chunk -1, both corners included", () => {
    const words = (text: string) =>
      describeSelection({ kind: "area", area: parseArea(text), dimension: "overworld", wholeRegions: false });
    expect(words("0,0,15,15")).toBe("the area 0,0 to 15,15 of the overworld (chunks 0,0 to 0,0 (1 chunk) in 1 region)");
    expect(words("-1,-1,16,0")).toMatch(/\(chunks -1,-1 to 1,0 \(6 chunks\) in 4 regions\)$/);
    // Issue 36's report: a 41x101-block area is 4x7 chunks, not 545.
    expect(words("100,200,140,300")).toMatch(/\(chunks 6,12 to 8,18 \(21 chunks\) in 1 region\)$/);
  });

  it("refuses what is not an area, beyond the world, or larger than 1024 regions (exit 2)", () => {
    for (const text of ["1,2,3", "1,2,3,4,5", "a,b,c,d", "1.5,0,2,2", "0,0,30000001,0", "", "0x10,0,1,1"]) {
      expect(() => parseArea(text), text).toThrow(expect.objectContaining({ exitCode: 2 }));
    }
    expect(() => parseArea("0,0,16383,16383")).not.toThrow();
    expect(() => parseArea("0,0,16384,16383")).toThrow("the area covers 1056 region files, more than 1024");
  });
});

describe("parseSelection", () => {
  it("is the world, a player, an area (overworld unless told) or a dimension", () => {
    expect(parseSelection({})).toEqual({ kind: "world" });
    expect(parseSelection({ player: " Alex " })).toEqual({ kind: "player", who: "Alex" });
    expect(parseSelection({ area: "0,0,1,1" })).toMatchObject({ kind: "area", dimension: "overworld" });
    expect(parseSelection({ area: "0,0,1,1", dimension: "minecraft:the_nether" })).toMatchObject({
      dimension: "nether",
    });
    expect(parseSelection({ dimension: "END" })).toEqual({ kind: "dimension", dimension: "end" });
    expect(parseSelection({ area: "0,0,1,1" })).toMatchObject({ wholeRegions: false });
    expect(parseSelection({ area: "0,0,1,1", wholeRegions: true })).toMatchObject({ wholeRegions: true });
  });

  it("refuses --whole-regions without an area (exit 2)", () => {
    for (const options of [{ wholeRegions: true }, { wholeRegions: true, dimension: "nether" }]) {
      expect(() => parseSelection(options)).toThrow(expect.objectContaining({ exitCode: 2 }));
    }
  });

  it("refuses a player with an area, and an unknown dimension", () => {
    expect(() => parseSelection({ player: "Alex", area: "0,0,1,1" })).toThrow(/does not go with --area/);
    expect(() => parseSelection({ dimension: "aether/x" })).toThrow('unknown dimension "aether/x"');
  });
});

const BUKKIT = ["world", "world_nether", "world_the_end"];

describe("dimensionFolder", () => {
  it("knows Bukkit's folders beside the level and vanilla's inside it", () => {
    expect(dimensionFolder("overworld", BUKKIT)).toBe("world");
    expect(dimensionFolder("nether", BUKKIT)).toBe("world_nether/DIM-1");
    expect(dimensionFolder("end", BUKKIT)).toBe("world_the_end/DIM1");
    expect(dimensionFolder("nether", ["survival"])).toBe("survival/DIM-1");
    expect(dimensionFolder("end", ["survival"])).toBe("survival/DIM1");
  });

  it("gives a mod's named folder in the level, and a Bukkit world the snapshot holds its own folder", () => {
    expect(dimensionFolder("AETHER", ["world"])).toBe("world/AETHER");
    expect(dimensionFolder("world_skyblock", [...BUKKIT, "world_skyblock"])).toBe("world_skyblock");
    expect(dimensionFolder("world_skyblock", BUKKIT)).toBe("world/world_skyblock");
  });
});

describe("snapshotWorlds", () => {
  it("takes the level and the Bukkit worlds beside it the snapshot holds, nothing else", () => {
    const paths = [
      "world",
      "world_nether",
      "plugins",
      "world_the_end",
      "world_skyblock",
      "world_",
      "world_x/region",
      "w",
    ];
    expect(snapshotWorlds([...paths.map((p) => `/srv/vol/${p}`), "/etc/world_x"], "/srv/vol/", "world")).toEqual([
      "world",
      "world_nether",
      "world_skyblock",
      "world_the_end",
    ]);
  });
});

describe("dimensions by name", () => {
  it("names DIM<n> folders for any Java int n, and nothing else", () => {
    expect(dimensionKey(["DIM-1"])).toBe("nether");
    expect(dimensionKey(["DIM1"])).toBe("end");
    expect(dimensionKey(["DIM-6"])).toBe("DIM-6");
    expect(dimensionKey(["DIM2147483647"])).toBe("DIM2147483647");
    expect(dimensionKey(["DIM-2147483648"])).toBe("DIM-2147483648");
    for (const name of ["DIM2147483648", "DIM01", "DIM-0", "DIM", "DIMx", "dim7", "DIM7 "]) {
      expect(dimensionKey([name]), name).toBeUndefined();
    }
  });

  it("takes every name the drill lists, and refuses one that would leave the level", () => {
    expect(parseDimension("DIM-6")).toBe("DIM-6");
    expect(parseDimension("dim7")).toBe("DIM7");
    expect(parseDimension("DIM-1")).toBe("nether");
    expect(parseDimension("aether:the_aether")).toBe("aether:the_aether");
    expect(parseDimension("mod:deep/dark")).toBe("mod:deep/dark");
    expect(parseDimension("AETHER")).toBe("AETHER");
    expect(parseDimension(" Twilight Forest ")).toBe("Twilight Forest");
    expect(parseDimension("world_skyblock")).toBe("world_skyblock");
    expect(dimensionFolder("DIM-6", BUKKIT)).toBe("world/DIM-6");
    expect(dimensionFolder("mod:deep/dark", ["world"])).toBe("world/dimensions/mod/deep/dark");
    for (const text of ["ns:../x", "../x:y", "ns:a//b", "ns:", ":x", "NS:x", "a:b:c", "ns:a/./b", "DIM01"]) {
      expect(() => parseDimension(text), text).toThrow(expect.objectContaining({ exitCode: 2 }));
    }
  });

  it("refuses a folder name that is a path, hidden, too long, an option, or one of the level's own folders", () => {
    const names = [
      "..",
      "...",
      "..x",
      ".hidden",
      "a/b",
      "a\\b",
      "x\ny",
      "-rf",
      "x".repeat(81),
      "data",
      "region",
      "dimensions",
    ];
    for (const text of [...names, "playerdata", "dim05", "AETHER\u202e"]) {
      expect(isFolderDimension(text), JSON.stringify(text)).toBe(false);
      expect(() => parseDimension(text), JSON.stringify(text)).toThrow(expect.objectContaining({ exitCode: 2 }));
    }
    // A folder spelt as another dimension's name is never a mod's: the operator means that one.
    for (const text of ["Nether", "THE_END", "Dim-6", "overworld"]) expect(isFolderDimension(text), text).toBe(false);
    expect(isFolderDimension("x".repeat(80))).toBe(true);
  });

  it("lists a snapshot's dimensions from its folders, as deep as the drill checks them", () => {
    const deep = `world/dimensions/ns/${Array.from({ length: 9 }, (_, i) => `p${i}`).join("/")}/region`;
    const folders = [
      "world/region",
      "world/DIM-6/region",
      "world_nether/DIM-1/poi",
      "world/dimensions/aether/the_aether/entities",
      "world/dimensions/ns/a/b/c/d/e/f/g/h/region",
      deep,
      "world_nether/region",
      "other/region",
    ];
    expect(dimensionsIn(folders, ["world", "world_nether"]).map((d) => d.name)).toEqual([
      "overworld",
      "nether",
      "DIM-6",
      "aether:the_aether",
      "ns:a/b/c/d/e/f/g/h",
    ]);
  });

  it("lists a mod's named folder that holds region, entities or poi, and none of the level's other folders", () => {
    const folders = [
      "world/region",
      "world/AETHER/region",
      "world/Twilight Forest/poi",
      "world/serverconfig",
      "world/computercraft/computer/0",
      "world/data/region",
      "world/playerdata/region",
      "world/..x/region",
      `world/${"x".repeat(81)}/region`,
      "world/nether/region",
      "world/dim5/region",
    ];
    expect(dimensionsIn(folders, ["world"])).toEqual([
      { name: "overworld", folder: "world" },
      { name: "AETHER", folder: "world/AETHER" },
      { name: "Twilight Forest", folder: "world/Twilight Forest" },
    ]);
  });

  it("lists a DIM-1 that holds data/ alone as the nether, as restore --dimension takes it", () => {
    expect(dimensionsIn(["world/region", "world/DIM-1/data"], ["world"])).toEqual([
      { name: "overworld", folder: "world" },
      { name: "nether", folder: "world/DIM-1" },
    ]);
  });

  it("names a Bukkit world beside the level after its folder, and the nether only where Bukkit reads it", () => {
    const worlds = [...BUKKIT, "world_aether_the_aether", "world_skyblock"];
    const folders = [
      "world/region",
      "world/DIM-1/region",
      "world_nether/DIM-1/region",
      "world_the_end/data",
      "world_skyblock/region",
      "world_aether_the_aether/dimensions/aether/the_aether/region",
      "world/world_skyblock/region",
    ];
    expect(dimensionsIn(folders, worlds)).toEqual([
      { name: "overworld", folder: "world" },
      { name: "nether", folder: "world_nether/DIM-1" },
      { name: "world_aether_the_aether", folder: "world_aether_the_aether" },
      { name: "world_skyblock", folder: "world_skyblock" },
    ]);
  });
});

describe("parseUsercache", () => {
  it("keeps the entries that are a name and a UUID, the UUID in its files' spelling, an expiry only as the game writes it", () => {
    const text = JSON.stringify([
      { name: "Alex", uuid: "853C80EF-3C37-49FD-AA49-938B674ADAE6", expiresOn: "2026-12-01 10:00:00 +0000" },
      { name: "Steve", uuid: "8667ba71b85a4004af54457a9734eed7" },
      { name: "Herobrine", uuid: "00000000-0000-4000-8000-000000000003", expiresOn: "soon\u202e\n" },
      { name: "../../etc/passwd", uuid: "853c80ef-3c37-49fd-aa49-938b674adae6" },
      { name: "Eve", uuid: "../../../root/.ssh/authorized_keys" },
      { name: 42, uuid: "853c80ef-3c37-49fd-aa49-938b674adae6" },
      null,
      "Alex",
    ]);
    expect(parseUsercache(text)).toEqual([
      { name: "Alex", uuid: "853c80ef-3c37-49fd-aa49-938b674adae6", expiresOn: "2026-12-01 10:00:00 +0000" },
      { name: "Steve", uuid: "8667ba71-b85a-4004-af54-457a9734eed7" },
      { name: "Herobrine", uuid: "00000000-0000-4000-8000-000000000003" },
    ]);
  });

  it("is empty for what is not a list", () => {
    for (const text of ["", "{", '{"name":"Alex"}', "null", "[1,2"]) expect(parseUsercache(text)).toEqual([]);
  });
});

describe("closeMatches", () => {
  const names = ["Alex", "alex_builds", "Alexa", "Steve", "Stev3", "Notch", "jeb_"];

  it("offers prefixes and names at most two letters off, the closest first, ignoring case", () => {
    expect(closeMatches("alex", names)).toEqual(["Alex", "alex_builds", "Alexa"]);
    expect(closeMatches("ALX", names)).toEqual(["Alex", "Alexa"]);
    expect(closeMatches("Steeve", names)).toEqual(["Steve", "Stev3"]);
    expect(closeMatches("Herobrine", names)).toEqual([]);
    expect(closeMatches("a", names, 2)).toHaveLength(2);
  });
});
