import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTool, tempDir } from "@mcops/testkit";
import { afterAll, describe, expect, it } from "vitest";

/**
 * help.ts answers `--help`, `-h`, `--version` and `<command> --help` without yargs, with the text yargs prints. These
 * run a tool built with runTool from source (its table uses every form help.ts models: positionals required, optional
 * and variadic, global options, choices, defaults of each type, required options, one-letter and hidden options,
 * examples, a hidden command) and compare both answers at several widths. deploy's help test does the same for every
 * built executable and its every command.
 *
 * Proof that the fast path loads no yargs: with YARGS_MIN_NODE_VERSION=999, yargs-parser throws as it is evaluated, and
 * yargs (whose platform shim imports yargs-parser and y18n) cannot be evaluated without it. The fast answers succeed
 * under it; the same request through yargs fails, which shows the probe works.
 */
const dir = tempDir("mcops-help-");
afterAll(() => dir.cleanup());

const src = (path: string) => JSON.stringify(new URL(`../src/${path}`, import.meta.url).href);
const TOOL = join(dir.path, "demo-tool.ts");
writeFileSync(
  TOOL,
  `import { command, configOption, dryRunOption, runTool } from ${src("cli.ts")};
const { argv } = JSON.parse(process.env.DEMO_ARGV ?? '{"argv":[]}');
const done = async () => 0;
await runTool({
  name: "demo-tool",
  usage: "$0 [command]\\n\\nA tool made up for the help test: every form of option and positional the tools use, with texts long enough to wrap at forty columns.",
  argv,
  global: (y) => y.options({ config: configOption }),
  commands: [
    command({
      command: "$0 [target]",
      describe: "do the thing now, with a description long enough to wrap in the commands list",
      options: (y) =>
        y
          .positional("target", { type: "string", describe: "what to do it to", demandOption: true })
          .options({
            colour: { type: "string", choices: ["red", "green", "blue"], describe: "the colour of it" },
            wait: { type: "boolean", default: false, describe: "wait for a running one instead of exiting 75" },
            extra: { type: "string", array: true, describe: "also this path" },
            count: { type: "number", default: 3, describe: "how many" },
            budget: { type: "string", default: "10m", describe: "how long" },
            secret: { type: "string", hidden: true, describe: "not shown" },
            n: { type: "boolean", default: true, describe: "a one-letter option" },
            "dry-run": dryRunOption("print the plan, change nothing"),
            quiet: { type: "boolean" },
          })
          .check(() => true),
      run: done,
    }),
    command({
      command: "restore <snapshot> [paths..]",
      describe: "put a snapshot back",
      options: (y) =>
        y
          .positional("snapshot", { type: "string", describe: "snapshot id" })
          .positional("paths", { type: "string", array: true, describe: "only these paths" })
          .option("owner", { type: "string", default: "988:988", describe: "uid:gid of the files" })
          .option("area", { type: "string", requiresArg: true, demandOption: true, describe: "X1,Z1,X2,Z2" }),
      run: done,
    }),
    command({ command: "scan <files..>", describe: "read whole files", options: (y) => y.positional("files", { type: "string", demandOption: true }), run: done }),
    command({ command: "prune", describe: "forced clean: forget --keep-last 1 --keep-daily 30 --keep-weekly 12 --prune", run: done }),
    command({ command: "secret", describe: false, options: (y) => y.option("x", { type: "string", describe: "x" }), run: done }),
    command({ command: "aliased", describe: "an option with an alias, which help.ts leaves to yargs", options: (y) => y.option("force", { alias: "f", type: "boolean" }), run: done }),
  ],
  examples: [["$0 restore latest --area 0,0,10,10", "one area"], ["$0 prune", ""]],
});
`,
);

/** Columns a run's stdout claims (as a terminal of that width would), or none: not a terminal. */
function columnsPreload(columns: number): string {
  const file = join(dir.path, `columns-${columns}.mjs`);
  writeFileSync(file, `Object.defineProperty(process.stdout, "columns", { value: ${columns} });\n`);
  return `--import=${file}`;
}

async function run(argv: string[], columns: number | undefined, env: Record<string, string>, readerGone = false) {
  const flags = columns === undefined ? [] : [columnsPreload(columns)];
  const { child, done } = startTool(process.execPath, [...flags, TOOL], {
    env: { PATH: process.env.PATH, DEMO_ARGV: JSON.stringify({ argv }), ...env },
  });
  // A reader that went away before the help was written (`demo-tool --help | true`).
  if (readerGone) child.stdout?.destroy();
  const { code, stdout, stderr } = await done;
  return { code, stdout, stderr };
}

const REQUESTS = [
  ["--help"],
  ["-h"],
  ["--version"],
  ["restore", "--help"],
  ["scan", "-h"],
  ["prune", "--help"],
  ["secret", "--help"],
];

describe("--help and --version without yargs", () => {
  it.each(REQUESTS.flatMap((argv) => [undefined, 40, 80, 110, 200].map((columns) => ({ argv, columns }))))(
    "answer $argv at $columns columns as yargs does, without evaluating yargs",
    async ({ argv, columns }) => {
      const fast = await run(argv, columns, { YARGS_MIN_NODE_VERSION: "999" });
      const yargs = await run(argv, columns, { MCOPS_HELP: "yargs" });
      expect(yargs).toMatchObject({ code: 0, stderr: "" });
      expect(fast).toEqual(yargs);
    },
  );

  it("leave to yargs what they do not model or what is not plainly a request for help", async () => {
    for (const argv of [
      ["aliased", "--help"],
      ["--help", "restore"],
      ["nope", "--help"],
      ["restore", "x", "--help"],
    ]) {
      const fast = await run(argv, 80, {});
      expect(fast).toEqual(await run(argv, 80, { MCOPS_HELP: "yargs" }));
      // Through yargs, which the probe stops: these were not answered by help.ts.
      expect((await run(argv, 80, { YARGS_MIN_NODE_VERSION: "999" })).stderr).toMatch(
        /minimum Node\.js version of 999/,
      );
    }
  });

  it("end as yargs does when the reader of stdout is gone: exit 0, nothing on stderr", async () => {
    for (const argv of [["--help"], ["--version"], ["restore", "-h"]]) {
      const fast = await run(argv, undefined, { YARGS_MIN_NODE_VERSION: "999" }, true);
      expect(fast).toEqual(await run(argv, undefined, { MCOPS_HELP: "yargs" }, true));
      expect(fast).toMatchObject({ code: 0, stderr: "" });
    }
  });

  it("are told apart from yargs by the probe: yargs' own answer fails under it", async () => {
    const probed = await run(["--help"], undefined, { YARGS_MIN_NODE_VERSION: "999", MCOPS_HELP: "yargs" });
    expect(probed.code).toBe(1);
    expect(probed.stderr).toMatch(
      /^demo-tool: unexpected error: yargs parser supports a minimum Node\.js version of 999/,
    );
  });
});
