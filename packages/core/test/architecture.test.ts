import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * docs/architecture.md is the map of the code: every package and every entry point of core is named there, so that the
 * map cannot drift from the tree without a test saying so (issue 34). And its rule holds: tools import libraries,
 * never other tools.
 */
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const doc = readFileSync(join(ROOT, "docs", "architecture.md"), "utf8");
const packages = readdirSync(join(ROOT, "packages"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
/** The packages other packages import: what more than one tool needs. */
const LIBRARIES = ["core", "game-log", "world", "cloud", "testkit"];
/** The packages that each build executables: none imports another (a test may run another's built executable). */
const TOOLS = [
  "backup",
  "certs",
  "dashboard",
  "discord-control",
  "idle-monitor",
  "jar-download",
  "log-tailer",
  "restart-with-warning",
  "revive",
  "webhook",
];

/** Every source file below a directory (a bounded tree: the repository's own sources); none when there is none. */
function sources(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? entry.name === "node_modules"
        ? []
        : sources(join(dir, entry.name))
      : /\.[cm]?[jt]s$/.test(entry.name)
        ? [join(dir, entry.name)]
        : [],
  );
}

/** What a module names to load: import and export from, import(), require(), import.meta.resolve(), require.resolve(). */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*|\.resolve\s*\(\s*)["'`]([^"'`]+)["'`]/g;
/** Any quoted path, whatever reads it (an import, a URL made relative to the module, a path joined by hand). */
const PATH = /["'`]((?:\.{1,2}\/)[^"'`$]*)["'`]/g;

/**
 * Where `file` (in packages/`from`) reaches into another tool: a module specifier naming the package, or any path
 * into its folder but its built executables (dist/, which a test runs as a process).
 */
function reachesInto(file: string, from: string): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const [, specifier] of text.matchAll(SPECIFIER)) {
    const name = /^@mcops\/([a-z-]+)/.exec(specifier as string)?.[1];
    if (name && name !== from && TOOLS.includes(name)) found.push(specifier as string);
  }
  for (const [, path] of text.matchAll(PATH)) {
    const target = relative(join(ROOT, "packages"), resolve(dirname(file), path as string)).split("/");
    const [name, folder] = target;
    if (name && name !== from && TOOLS.includes(name) && folder !== "dist") found.push(path as string);
  }
  return found.map((what) => `${relative(ROOT, file)}: ${what}`);
}

function manifest(name: string): {
  exports?: unknown;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
} {
  return JSON.parse(readFileSync(join(ROOT, "packages", name, "package.json"), "utf8"));
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

  it("says that tools import libraries, and names each library", () => {
    expect(doc).toContain("Tools import libraries, never other tools");
    expect(LIBRARIES.filter((name) => !doc.includes(`@mcops/${name}`))).toEqual([]);
  });
});

describe("the packages", () => {
  it("are each a library or a tool, and no tool has entry points for others to import", () => {
    expect(packages.filter((name) => !LIBRARIES.includes(name) && !TOOLS.includes(name))).toEqual([]);
    expect(TOOLS.filter((name) => !packages.includes(name))).toEqual([]);
    expect(TOOLS.filter((name) => manifest(name).exports !== undefined)).toEqual([]);
  });

  it("have each tool's settings in its src/settings.ts, which its cli.ts uses", () => {
    const without = TOOLS.filter((name) => !existsSync(join(ROOT, "packages", name, "src", "settings.ts")));
    expect(without).toEqual([]);
    const unused = TOOLS.filter(
      (name) => !readFileSync(join(ROOT, "packages", name, "src", "cli.ts"), "utf8").includes('"./settings.ts"'),
    );
    expect(unused).toEqual([]);
  });

  it("have no tool that imports another tool, in its code or its tests, nor a library that imports a tool", () => {
    const files = packages.flatMap((name) =>
      ["src", "test"].flatMap((folder) =>
        sources(join(ROOT, "packages", name, folder)).map((file) => ({ name, file })),
      ),
    );
    expect(files.length).toBeGreaterThan(200);
    expect(files.flatMap(({ name, file }) => reachesInto(file, name))).toEqual([]);
  });

  it("depend on a tool only to run its built executable in their tests", () => {
    for (const name of packages) {
      const { dependencies = {}, devDependencies = {} } = manifest(name);
      const tools = (deps: Record<string, string>) =>
        Object.keys(deps)
          .filter((dep) => dep.startsWith("@mcops/"))
          .map((dep) => dep.slice("@mcops/".length))
          .filter((dep) => dep !== name && TOOLS.includes(dep));
      expect(tools(dependencies), `${name}'s dependencies`).toEqual([]);
      const tests = sources(join(ROOT, "packages", name, "test"))
        .map((file) => readFileSync(file, "utf8"))
        .join("\n");
      const run = TOOLS.filter((tool) => tool !== name && tests.includes(`../../${tool}/dist/`));
      expect(tools(devDependencies).sort(), `${name}'s dev dependencies on tools`).toEqual(run.sort());
    }
  });
});
