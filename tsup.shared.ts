import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { builtinModules } from "node:module";
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
    // Builtins come through builtinsOnUse, which needs them before tsup's own rewriting of "node:" names.
    removeNodeProtocol: false,
    esbuildPlugins: [builtinsOnUse, yargsShimFromBundle],
    // process.getBuiltinModule came with Node 22.3; on 22.0 to 22.2 (docs/contract.md: Node 22 or newer) require is it.
    banner: {
      js: 'import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url); process.getBuiltinModule ??= require;',
    },
  };
}

const BUILTINS = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

/**
 * Node's own modules, taken with `process.getBuiltinModule` and read only where a name is used. An ES import of a
 * builtin makes Node copy every export of it into the module namespace, and many are lazy: `import { x } from
 * "node:fs"` loads fs/promises, streams and readline's interface, an import of node:util loads its TextDecoder (and
 * with it worker_threads), node:http's loads undici. esbuild's interop for a CommonJS module reads each export's
 * descriptor, which loads them just the same, so the module handed to it is an object of accessors over the builtin:
 * a name is read from the builtin when the code uses it, and assigning to it assigns to the builtin. Issue 35: the
 * idle daemons' memory and every tool's start.
 */
const builtinsOnUse: NonNullable<Options["esbuildPlugins"]>[number] = {
  name: "builtins-on-use",
  setup(build) {
    build.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) =>
      BUILTINS.has(args.path) ? { path: args.path.replace(/^node:/, ""), namespace: "builtin" } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "builtin" }, (args) => ({
      // A module that is a function (events, assert, module, stream) or process itself is handed as it is: its
      // methods need it as `this`, and a copy of its names would not be callable.
      contents: `const builtin = process.getBuiltinModule(${JSON.stringify(`node:${args.path}`)});
if (typeof builtin === "function" || builtin === process) module.exports = builtin;
else {
const names = {};
for (const name of Object.getOwnPropertyNames(builtin)) {
  Object.defineProperty(names, name, {
    get: () => builtin[name],
    set: (value) => { builtin[name] = value; },
    enumerable: true,
  });
}
module.exports = names;
}`,
      loader: "js",
    }));
  },
};

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
