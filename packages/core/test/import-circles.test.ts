import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import madge from "madge";
import { describe, expect, it } from "vitest";

/**
 * No import circle in any package's source (issue 34): a module that needs another which needs it back is one module
 * in two files, and an import order away from a value read before it is set. Type-only imports count: a circle of
 * types is still two files that cannot be read apart. madge (the dependency-graph tool made for this) reads the
 * TypeScript sources as the compiler resolves them.
 */
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

describe("the packages' imports", () => {
  it("make no circle", async () => {
    const sources = readdirSync(join(ROOT, "packages"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(ROOT, "packages", entry.name, "src"));
    const graph = await madge(sources, {
      fileExtensions: ["ts"],
      tsConfig: join(ROOT, "tsconfig.base.json"),
      detectiveOptions: { ts: { skipTypeImports: false } },
    });
    expect(Object.keys(graph.obj()).length).toBeGreaterThan(100);
    expect(graph.circular()).toEqual([]);
  }, 180_000);
});
