import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * What a built executable loaded of Node itself: run it with `env` (its NODE_OPTIONS imports a probe first), and once
 * it has exited, `loaded()` lists Node's modules as it had them then (process.moduleLoadList, e.g. "NativeModule
 * internal/deps/undici/undici"). A daemon that must not carry a part of Node (fetch's undici: 16 MiB) is held to it.
 */
export function moduleProbe(dir: string, env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; loaded(): string[] } {
  const probe = join(dir, "module-probe.mjs");
  const out = join(dir, "modules-loaded.txt");
  writeFileSync(
    probe,
    `import { writeFileSync } from "node:fs";\nprocess.on("exit", () => writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join("\\n")));\n`,
  );
  return {
    env: { ...env, NODE_OPTIONS: `${env.NODE_OPTIONS ?? ""} --import=${probe}`.trim() },
    loaded() {
      if (!existsSync(out)) throw new Error(`the probe wrote nothing to ${out}: did the executable run and exit?`);
      return readFileSync(out, "utf8").split("\n");
    },
  };
}
