import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir, toolEnv } from "@mcops/testkit";
import { afterAll, describe, expect, expectTypeOf, it } from "vitest";
import { command } from "../src/tool.ts";

const dir = tempDir("mcops-tool-");
afterAll(() => dir.cleanup());

/**
 * A real executable built with runTool: one command whose settings (COUNT and WAIT, each with its flag) are read from
 * tool.env, the environment and its flags by its loader, and whose run writes what it was handed to ran.json.
 */
async function runCommand(name: string, argv: string[], file: string, extraEnv: Record<string, string> = {}) {
  const root = join(dir.path, name);
  mkdirSync(root, { recursive: true });
  const envFile = join(root, "tool.env");
  writeFileSync(envFile, file, { mode: 0o600 });
  const ran = join(root, "ran.json");
  const src = (path: string) => JSON.stringify(new URL(`../src/${path}`, import.meta.url).href);
  const script = `
    import { writeFileSync } from "node:fs";
    import { countSchema, durationSchema, flagOptions, loadSettings, setting } from ${src("config/index.ts")};
    import { command, runTool } from ${src("tool.ts")};
    const fields = {
      COUNT: setting(countSchema, { default: "3", flag: { name: "count", describe: "how many" } }),
      WAIT: setting(durationSchema, { flag: { name: "wait", describe: "how long" } }),
    };
    await runTool({ name: "demo-tool", usage: "$0", argv: ${JSON.stringify(argv)}, commands: [command({
      command: "$0", describe: false,
      options: (y) => y.options({ dry: { type: "boolean", default: false }, ...flagOptions(fields) }),
      settings: (ctx, args) => args.dry ? undefined : loadSettings(fields, { file: ${JSON.stringify(envFile)}, env: ctx.env, args, missingHint: "add {name}=..." }),
      run: async (ctx, args, settings) => {
        writeFileSync(${JSON.stringify(ran)}, JSON.stringify({ settings, dry: args.dry }));
        return 0;
      } })] });`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    env: toolEnv(root, extraEnv),
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const code = await new Promise((resolve) => child.once("close", resolve));
  const handed = existsSync(ran) ? JSON.parse(readFileSync(ran, "utf8")) : undefined;
  return { code, stderr, handed };
}

describe("runTool with a command's settings", () => {
  it("hands the command its settings parsed and typed: flag over environment over file over default", async () => {
    const fromFile = await runCommand("file", [], "WAIT=90s\n");
    expect(fromFile).toMatchObject({ code: 0, stderr: "" });
    expect(fromFile.handed.settings).toMatchObject({ COUNT: 3, WAIT: 90_000 });
    const overridden = await runCommand("flag", ["--count", "7"], "WAIT=90s\nCOUNT=5\n", { WAIT: "2m" });
    expect(overridden.handed.settings).toMatchObject({ COUNT: 7, WAIT: 120_000 });
  });

  it("ends a run with a bad value in one line, before the command does anything", async () => {
    const bad = await runCommand("bad", [], "WAIT=soon\n");
    expect(bad.code).toBe(78);
    expect(bad.stderr).toMatch(/^demo-tool: WAIT is not a duration above 0 \(.*tool\.env line 1\) — .*\n$/);
    expect(bad.handed).toBeUndefined();
    const badFlag = await runCommand("bad-flag", ["--count", "many"], "WAIT=1m\n");
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/^demo-tool: COUNT .* \(--count\)/);
    expect(badFlag.handed).toBeUndefined();
  });

  it("reads no settings when the loader says the command needs none", async () => {
    const dry = await runCommand("dry", ["--dry"], "WAIT=soon\n");
    expect(dry).toMatchObject({ code: 0, stderr: "", handed: { dry: true } });
    expect(dry.handed.settings).toBeUndefined();
  });

  it("types run's settings from the loader", () => {
    const spec = command({
      command: "$0",
      describe: false,
      settings: () => ({ COUNT: 3, WAIT: 90_000 }),
      run: async (_ctx, _args, settings) => settings.COUNT,
    });
    expectTypeOf(spec.run).parameter(2).toEqualTypeOf<{ COUNT: number; WAIT: number }>();
    const none = command({ command: "$0", describe: false, run: async () => 0 });
    expectTypeOf(none.run).parameter(2).toEqualTypeOf<undefined>();
  });
});
