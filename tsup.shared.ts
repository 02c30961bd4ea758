import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Options } from "tsup";

/**
 * One self-contained executable per tool (docs/contract.md): packages/<tool>/dist/<tool>.mjs, every dependency inlined,
 * `#!/usr/bin/env node` from the entry source (tsup then sets the run bit), runnable from an empty directory.
 */
export function toolConfig(tool: string, more: Record<string, string> = {}): Options {
  const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
  return {
    // More executables from the same package (revive also builds hibernate): each is bundled whole on its own.
    entry: { [tool]: "src/cli.ts", ...more },
    format: ["esm"],
    outExtension: () => ({ js: ".mjs" }),
    platform: "node",
    target: "node22",
    noExternal: [/.*/],
    splitting: false,
    sourcemap: false,
    minify: true,
    clean: true,
    define: { __MCOPS_VERSION__: JSON.stringify(version) },
    // zx and other CommonJS dependencies call require(); the bundle already imports createRequire, so rename it.
    // A lazy string-width for yargs' help layout: see packages/core/src/string-width.ts.
    esbuildOptions(options) {
      options.alias = {
        "string-width": fileURLToPath(new URL("./packages/core/src/string-width.ts", import.meta.url)),
      };
    },
    esbuildPlugins: [yargsShimFromBundle],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  };
}

/**
 * The two checks yargs' shim takes from node:assert, which an ES import would load whole (with what it pulls in) at
 * the start of every tool: 1.4 MiB of the idle daemons' memory for two comparisons (issue 35).
 */
const ASSERTS = `
const strictEqual = (actual, expected, message) => {
  if (actual !== expected) throw new Error(message ?? \`Expected values to be strictly equal: \${actual} !== \${expected}\`);
};
const notStrictEqual = (actual, expected, message) => {
  if (actual === expected) throw new Error(message ?? \`Expected "actual" to be strictly unequal to: \${expected}\`);
};`;

/**
 * yargs' ESM shim takes everything before "node_modules" in its own path as the program's directory, and the process's
 * working directory when there is none, as in a bundle. To guess a version (which createCli then sets anyway) it walks
 * up from there, listing every directory until one holds a package.json: the start-up cost depended on where the tool
 * was run from (13 ms of `--help` from a /tmp of 3,000 entries). Here the walk starts at the executable itself. Its
 * import of node:assert is replaced by ASSERTS.
 */
const yargsShimFromBundle: NonNullable<Options["esbuildPlugins"]>[number] = {
  name: "yargs-shim-from-bundle",
  setup(build) {
    build.onLoad({ filter: /[\\/]yargs[\\/]lib[\\/]platform-shims[\\/]esm\.mjs$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      const from = "const mainFilename = __dirname.substring(0, __dirname.lastIndexOf('node_modules'));";
      const assert = "import { notStrictEqual, strictEqual } from 'assert'";
      if (!source.includes(from) || !source.includes(assert)) {
        throw new Error(`${args.path} changed: update yargsShimFromBundle in tsup.shared.ts`);
      }
      return { contents: source.replace(from, "const mainFilename = __dirname;").replace(assert, ASSERTS), loader: "js" };
    });
  },
};
