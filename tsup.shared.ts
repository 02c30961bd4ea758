import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Options } from "tsup";

/**
 * One self-contained executable per tool (CONTRACT.md): packages/<tool>/dist/<tool>.mjs, every dependency inlined,
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
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  };
}
