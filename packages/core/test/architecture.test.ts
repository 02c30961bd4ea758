import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * docs/architecture.md is the map of the code: every package, every entry point of core and every import from one tool
 * into another is named there, so that the map cannot drift from the tree without a test saying so (issue 34).
 */
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const doc = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");
const packages = readdirSync(join(ROOT, "packages"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
const LIBRARIES = new Set(["core", "game-log", "testkit"]);

/** Every `.ts` file below a directory (a bounded tree: the repository's own sources). */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

describe("docs/architecture.md", () => {
  it("names every package", () => {
    const named = (name: string) =>
      [`packages/${name}`, `@mcops/${name}`, `\`${name}\``].some((form) => doc.includes(form));
    expect(packages.length).toBeGreaterThan(5);
    expect(packages.filter((name) => !named(name))).toEqual([]);
  });

  it("names every entry point of core", () => {
    const exports = JSON.parse(readFileSync(join(ROOT, "packages", "core", "package.json"), "utf8")).exports as Record<
      string,
      string
    >;
    const files = Object.values(exports).map((path) =>
      path.replace(/^\.\/src\//, "").replace(/\/index\.ts$|\.ts$/, ""),
    );
    const missing = files.filter((file) => !new RegExp(`\\b${file.replace(/[/.-]/g, "\\$&")}\\b`).test(doc));
    expect(missing.filter((file) => file !== "index")).toEqual([]);
  });

  it("lists every import from one tool into another", () => {
    const crossing = new Set<string>();
    for (const name of packages.filter((each) => !LIBRARIES.has(each))) {
      for (const file of sources(join(ROOT, "packages", name, "src"))) {
        for (const match of readFileSync(file, "utf8").matchAll(/from "@mcops\/([a-z-]+)(\/[^"]*)?"/g)) {
          const target = match[1] as string;
          if (target !== name && !LIBRARIES.has(target)) crossing.add(`\`${name}\` → \`@mcops/${target}`);
        }
      }
    }
    expect(crossing.size).toBeGreaterThan(0);
    expect([...crossing].filter((line) => !doc.includes(line))).toEqual([]);
  });
});
