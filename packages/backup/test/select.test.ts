import { describe, expect, it } from "vitest";
import { dimensionFolder, dimensionKey, dimensionsIn, parseDimension } from "../src/dimensions.ts";
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
    expect(() => parseSelection({ dimension: "aether" })).toThrow('unknown dimension "aether"');
  });
});

describe("dimensionFolder", () => {
  it("knows Bukkit's folders beside the level and vanilla's inside it", () => {
    expect(dimensionFolder("world", "overworld", true)).toBe("world");
    expect(dimensionFolder("world", "nether", true)).toBe("world_nether/DIM-1");
    expect(dimensionFolder("world", "end", true)).toBe("world_the_end/DIM1");
    expect(dimensionFolder("survival", "nether", false)).toBe("survival/DIM-1");
    expect(dimensionFolder("survival", "end", false)).toBe("survival/DIM1");
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
    expect(dimensionFolder("world", "DIM-6", true)).toBe("world/DIM-6");
    expect(dimensionFolder("world", "mod:deep/dark", false)).toBe("world/dimensions/mod/deep/dark");
    for (const text of ["ns:../x", "../x:y", "ns:a//b", "ns:", ":x", "NS:x", "a:b:c", "ns:a/./b", "DIM01"]) {
      expect(() => parseDimension(text), text).toThrow(expect.objectContaining({ exitCode: 2 }));
    }
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
    expect(dimensionsIn(folders, ["world", "world_nether"])).toEqual([
      "overworld",
      "nether",
      "DIM-6",
      "aether:the_aether",
      "ns:a/b/c/d/e/f/g/h",
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
