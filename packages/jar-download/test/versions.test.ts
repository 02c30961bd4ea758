import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildDataVersions, GENERATED_PATH, renderDataVersions } from "../scripts/gen-data-versions.ts";
import { DATA_VERSIONS } from "../src/data-versions.generated.ts";
import { dataVersionOf, refuseDowngrade } from "../src/versions.ts";

describe("DATA_VERSIONS", () => {
  it("is what scripts/gen-data-versions.ts generates from the installed minecraft-data", () => {
    expect(readFileSync(GENERATED_PATH, "utf8")).toBe(renderDataVersions(buildDataVersions()));
  });

  it("knows the releases' data versions the wiki lists", () => {
    expect(dataVersionOf("1.20.1")).toBe(3465);
    expect(dataVersionOf("1.21")).toBe(3953);
    expect(dataVersionOf("1.21.3")).toBe(4082);
    expect(dataVersionOf("1.21.4")).toBe(4189);
    expect(dataVersionOf("1.99.9")).toBeUndefined();
    expect(DATA_VERSIONS.size).toBeGreaterThan(500);
  });
});

describe("refuseDowngrade", () => {
  const saved = { dataVersion: 4189, name: "1.21.4" };

  it("refuses a version older than the world's, in one line with the way back", () => {
    expect(() => refuseDowngrade(saved, dataVersionOf("1.20.1"), "Paper 1.20.1")).toThrow(
      "the world was last saved by 1.21.4 (data version 4189); Paper 1.20.1 (3465) cannot open it safely",
    );
    try {
      refuseDowngrade(saved, dataVersionOf("1.21.3"), "1.21.3");
    } catch (error) {
      expect(error).toMatchObject({ exitCode: 2, hint: "restore a snapshot from before the upgrade instead" });
    }
    expect.assertions(2);
  });

  it("names the saver from the data version when level.dat has no name", () => {
    expect(() => refuseDowngrade({ dataVersion: 3953, name: undefined }, 3465, "1.20.1")).toThrow(
      /^the world was last saved by 1\.21 \(data version 3953\)/,
    );
  });

  it("allows the same version, a newer one, a version it does not know, and a volume with no world", () => {
    expect(() => refuseDowngrade(saved, 4189, "1.21.4")).not.toThrow();
    expect(() => refuseDowngrade({ dataVersion: 3953, name: "1.21" }, 4189, "1.21.4")).not.toThrow();
    expect(() => refuseDowngrade(saved, undefined, "1.99.9")).not.toThrow();
    expect(() => refuseDowngrade(undefined, dataVersionOf("1.8.9"), "1.8.9")).not.toThrow();
  });
});
