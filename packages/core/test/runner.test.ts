import { describe, expect, it } from "vitest";
import { zxRunner } from "../src/runner.ts";

describe("zxRunner", () => {
  it("passes the environment, streams lines as they come and keeps the whole output", async () => {
    const lines: string[] = [];
    const result = await zxRunner.run("sh", ["-c", 'echo "one $X"; echo err >&2; echo two; exit 3'], {
      env: { X: "x-value" },
      onStdoutLine: (l) => lines.push(`out ${l}`),
      onStderrLine: (l) => lines.push(`err ${l}`),
    });
    expect(result).toEqual({ code: 3, signal: null, stdout: "one x-value\ntwo\n", stderr: "err\n" });
    expect(lines.filter((l) => l.startsWith("out"))).toEqual(["out one x-value", "out two"]);
  });

  it("quotes arguments: nothing in them reaches a shell", async () => {
    const result = await zxRunner.run("printf", ["%s|", "a b", "$HOME", "`id`", "'q'"]);
    expect(result.stdout).toBe("a b|$HOME|`id`|'q'|");
  });

  it("removes variables set to undefined", async () => {
    process.env.MCOPS_RUNNER_PROBE = "set";
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, meant literally for sh -c
    const result = await zxRunner.run("sh", ["-c", 'echo "[${MCOPS_RUNNER_PROBE:-unset}]"'], {
      env: { MCOPS_RUNNER_PROBE: undefined },
    });
    delete process.env.MCOPS_RUNNER_PROBE;
    expect(result.stdout).toBe("[unset]\n");
  });

  it("ends the program with SIGTERM when aborted", async () => {
    const controller = new AbortController();
    // Aborted once the program says it runs; it would run 10 minutes, so ending at all proves the abort ended it.
    const result = await zxRunner.run("sh", ["-c", "echo running; exec sleep 600"], {
      signal: controller.signal,
      onStdoutLine: (line) => {
        if (line === "running") controller.abort();
      },
    });
    expect(result).toMatchObject({ code: null, signal: "SIGTERM", stdout: "running\n" });
  });
});
