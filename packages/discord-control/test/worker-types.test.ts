import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type TempDir, tempDir } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/**
 * The Worker's `Env` is what `wrangler types` makes of wrangler.toml and worker-secret-names.env, checked in as
 * src/worker/env.generated.d.ts: these fail when the file and what it is generated from disagree. wrangler runs
 * offline (no login, no metrics, no update check) with its settings in a temporary directory.
 */
const PACKAGE = fileURLToPath(new URL("..", import.meta.url));
const WRANGLER = join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin", "wrangler.js");
const GENERATED = "src/worker/env.generated.d.ts";
/** `npm run worker-types`'s arguments: the one place the file's path and wrangler's options are written. */
const SCRIPT: string = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8")).scripts["worker-types"];
const ARGS = SCRIPT.split(" ").slice(1);
const REGENERATE = "regenerate it with `npm run worker-types -w @mcops/discord-control`";

let dir: TempDir;
beforeEach(() => {
  dir = tempDir("mcops-worker-types-");
});
afterEach(() => dir.cleanup());

function wrangler(cwd: string, args: string[]): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [WRANGLER, ...args], {
    cwd,
    // Only what wrangler needs: no CLOUDFLARE_ENV or other setting of the caller's changes what it generates.
    env: {
      PATH: process.env.PATH,
      HOME: dir.path,
      XDG_CONFIG_HOME: join(dir.path, "config"),
      CI: "1",
      NO_COLOR: "1",
      WRANGLER_SEND_METRICS: "false",
      WRANGLER_HIDE_BANNER: "true",
      CLOUDFLARE_INCLUDE_PROCESS_ENV: "false",
      CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV: "true",
    },
    encoding: "utf8",
    timeout: 110_000,
  });
}

/** The package's wrangler.toml, secret names and Worker source in a temporary directory, without the generated file. */
function copyOfPackage(): string {
  const copy = join(dir.path, "package");
  for (const file of ["wrangler.toml", "worker-secret-names.env"]) cpSync(join(PACKAGE, file), join(copy, file));
  cpSync(join(PACKAGE, "src"), join(copy, "src"), { recursive: true, filter: (from) => !from.endsWith(GENERATED) });
  return copy;
}

describe(`the Worker's Env (${GENERATED})`, () => {
  it("is up to date with wrangler.toml and worker-secret-names.env (wrangler types --check)", () => {
    const run = wrangler(PACKAGE, [...ARGS, "--check"]);
    expect(run.status, `${run.stdout}${run.stderr}\n${REGENERATE}`).toBe(0);
    expect(run.stdout).toContain(`Types at ${GENERATED} are up to date.`);
  });

  it("is wrangler's output as it wrote it, not edited by hand", () => {
    const copy = copyOfPackage();
    const run = wrangler(copy, ARGS);
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
    const written = readFileSync(join(copy, GENERATED), "utf8");
    expect(readFileSync(join(PACKAGE, GENERATED), "utf8"), REGENERATE).toBe(written);
  });

  it.each([
    [
      "a setting in wrangler.toml",
      "wrangler.toml",
      (text: string) => text.replace("[vars]\n", '[vars]\nNEW_SETTING = "x"\n'),
    ],
    ["a secret in worker-secret-names.env", "worker-secret-names.env", (text: string) => `${text}NEW_SECRET=\n`],
  ])("is out of date, for wrangler types --check, once %s is added", (_what, file, change) => {
    const copy = copyOfPackage();
    cpSync(join(PACKAGE, GENERATED), join(copy, GENERATED));
    const before = wrangler(copy, [...ARGS, "--check"]);
    expect(before.status, `${before.stdout}${before.stderr}`).toBe(0);
    writeFileSync(join(copy, file), change(readFileSync(join(copy, file), "utf8")));
    const after = wrangler(copy, [...ARGS, "--check"]);
    expect(after.status).not.toBe(0);
    expect(`${after.stdout}${after.stderr}`).toContain(`Types at ${GENERATED} are out of date.`);
  });
});
