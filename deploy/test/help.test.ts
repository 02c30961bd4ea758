import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runTool, tempDir } from "@mcops/testkit";
import { afterAll, describe, expect, it } from "vitest";

/**
 * Every built executable answers `--help`, `-h`, `--version` and `<command> --help` without yargs (core's help.ts,
 * issue 35), with what yargs prints: the same bytes on stdout and stderr and the same exit code, for the tool and each
 * of its commands, on a terminal 40, 80 or 110 columns wide and off one. MCOPS_HELP=yargs is yargs' answer. The fast
 * ones run with YARGS_MIN_NODE_VERSION=999, under which yargs-parser throws as it is evaluated (and yargs, whose
 * platform shim imports it and y18n, cannot be evaluated without it): they load none of the three.
 */
const PACKAGES = fileURLToPath(new URL("../../packages/", import.meta.url));
const dir = tempDir("mcops-help-");
afterAll(() => dir.cleanup());

/** Each tool's executables, from its package.json's bin. */
const BINS = readdirSync(PACKAGES).flatMap((name) => {
  const manifest = JSON.parse(readFileSync(join(PACKAGES, name, "package.json"), "utf8")) as {
    bin?: Record<string, string>;
  };
  return Object.entries(manifest.bin ?? {}).map(([bin, path]) => ({ bin, path: join(PACKAGES, name, path) }));
});

/** A terminal's width as the executable sees it (process.stdout.columns), or none: not a terminal. */
function columnsFlag(columns: number | undefined): string[] {
  if (columns === undefined) return [];
  const file = join(dir.path, `columns-${columns}.mjs`);
  writeFileSync(file, `Object.defineProperty(process.stdout, "columns", { value: ${columns} });\n`);
  return [`--import=${file}`];
}

async function run(path: string, argv: string[], columns: number | undefined, env: Record<string, string>) {
  const { code, stdout, stderr } = await runTool(process.execPath, [...columnsFlag(columns), path, ...argv], {
    env: { PATH: process.env.PATH, HOME: dir.path, ...env },
  });
  return { code, stdout, stderr };
}

/** The named commands yargs lists in the tool's help (`  backup restore [snapshot]  …`). */
async function commands(bin: string, path: string): Promise<string[]> {
  const { stdout } = await run(path, ["--help"], 110, { MCOPS_HELP: "yargs" });
  const listed = stdout.split("\n\n").find((part) => part.startsWith("Commands:")) ?? "";
  return [...listed.matchAll(new RegExp(`^  ${bin} ([a-z][\\w-]*)`, "gm"))].map((match) => match[1] as string);
}

describe("every executable's --help and --version", () => {
  it("are each a built executable", () => {
    expect(BINS.map(({ bin }) => bin).sort()).toEqual([
      "backup",
      "certs",
      "dashboard",
      "discord-control",
      "hibernate",
      "idle-monitor",
      "jar-download",
      "log-tailer",
      "restart-with-warning",
      "revive",
      "webhook",
    ]);
  });

  it.each(BINS)(
    "$bin answers as yargs does, for itself and each command, without loading yargs",
    async ({ bin, path }) => {
      const named = await commands(bin, path);
      if (["backup", "certs", "revive"].includes(bin)) expect(named.length).toBeGreaterThan(0);
      const requests: [string[], number | undefined][] = [
        ...[undefined, 40, 80, 110].map((columns): [string[], number | undefined] => [["--help"], columns]),
        [["-h"], 40],
        [["--version"], undefined],
        ...named.flatMap((name) => [
          ...[undefined, 40, 110].map((columns): [string[], number | undefined] => [[name, "--help"], columns]),
          [[name, "-h"], 80] as [string[], number | undefined],
        ]),
      ];
      for (const [argv, columns] of requests) {
        const [fast, yargs] = await Promise.all([
          run(path, argv, columns, { YARGS_MIN_NODE_VERSION: "999" }),
          run(path, argv, columns, { MCOPS_HELP: "yargs" }),
        ]);
        expect(yargs, `${bin} ${argv.join(" ")} at ${columns} columns, through yargs`).toMatchObject({
          code: 0,
          stderr: "",
        });
        expect(fast, `${bin} ${argv.join(" ")} at ${columns} columns`).toEqual(yargs);
      }
    },
  );
});
