import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runTool, type TempDir, tempDir, toolEnv } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../dist/dashboard.mjs", import.meta.url));
let root: TempDir;
let env: NodeJS.ProcessEnv;
const passwd = () => join(env.MCOPS_CONFIG_DIR as string, "dashboard.passwd");

function withStdin(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(BIN, args, { env, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  child.stdin.end(input);
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

beforeEach(() => {
  root = tempDir("mcops-dashboard-cli-");
  env = toolEnv(root.path);
});
afterEach(() => root.cleanup());

describe("dashboard (built executable)", () => {
  it("does not serve at all while no password is set", async () => {
    const run = await runTool(BIN, ["--listen", "127.0.0.1:0"], { env });
    expect(run.code).toBe(78);
    expect(run.stderr).toMatch(
      /^dashboard: no sign-in password is set \(.*dashboard\.passwd\) — set one with: dashboard passwd .*\n$/,
    );
  });

  it("passwd reads the password from standard input and keeps it hashed at mode 600", async () => {
    const run = await withStdin(["passwd", "--user", "ops"], "a long enough password\n");
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(statSync(passwd()).mode & 0o777).toBe(0o600);
    const text = readFileSync(passwd(), "utf8");
    expect(text).toMatch(/^ops:\$scrypt\$ln=15,r=8,p=1\$\S+\n$/);
    expect(text).not.toContain("a long enough password");
    const again = await withStdin(["passwd", "--user", "ops"], "another long password\n");
    expect(again.stdout).toMatch(/^dashboard: password changed for ops/);
  });

  it("passwd refuses an empty or short password and an odd user name, as usage errors", async () => {
    expect(await withStdin(["passwd"], "")).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^dashboard: no password on standard input — /),
    });
    expect((await withStdin(["passwd"], "short\n")).stderr).toMatch(/^dashboard: the password is too short/);
    expect((await withStdin(["passwd", "--user", "a b"], "a long enough password\n")).code).toBe(2);
    expect(() => statSync(passwd())).toThrow();
  });

  it("refuses a password file that others may read", async () => {
    await withStdin(["passwd"], "a long enough password\n");
    chmodSync(passwd(), 0o644);
    const run = await runTool(BIN, ["--listen", "127.0.0.1:0"], { env });
    expect(run.code).toBe(78);
    expect(run.stderr).toMatch(/readable by group and others \(mode 644\) .* — run: chmod 600 /);
  });

  it("says in one line that the address is taken, and what to do", async () => {
    await withStdin(["passwd"], "a long enough password\n");
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const run = await runTool(BIN, ["--listen", `127.0.0.1:${port}`], { env });
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `dashboard: cannot listen on 127.0.0.1:${port} (EADDRINUSE) — another program listens there: stop it or choose another address with --listen\n`,
      );
    } finally {
      busy.close();
    }
  });

  it("treats unknown flags and a bad --listen as usage errors", async () => {
    mkdirSync(env.MCOPS_CONFIG_DIR as string, { recursive: true });
    expect((await runTool(BIN, ["--port", "80"], { env })).code).toBe(2);
    const bad = await runTool(BIN, ["--listen", "everywhere"], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^dashboard: "everywhere" is not an address to listen on \(--listen\) — /);
  });
});
