import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
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

  it("saves no webhook outside Discord's hosts, and believes no X-Real-IP without DASHBOARD_TRUST_PROXY (finding 11)", async () => {
    const password = "a long enough password";
    await withStdin(["passwd", "--user", "admin"], `${password}\n`);
    const server = spawn(BIN, ["--listen", "127.0.0.1:0"], { env, stdio: ["ignore", "pipe", "pipe"] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        server.on("close", () => reject(new Error("the dashboard ended before it listened")));
        server.stdout.on("data", (d) => {
          const address = /listening on (\S+)/.exec(String(d))?.[1];
          if (address) resolve(address);
        });
      });
      const basic = (secret: string) => `Basic ${Buffer.from(`admin:${secret}`).toString("base64")}`;
      const first = await fetch(url, { headers: { authorization: basic(password) } });
      const cookie = (first.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      let html = await first.text();
      const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? "";
      const webhookJson = join(env.MCOPS_CONFIG_DIR as string, "webhook.json");
      for (const address of [
        "https://169.254.169.254/api/webhooks/1/metadata",
        "https://evil.example/api/webhooks/112233445566778899/token",
        "https://discord.com.evil.example/api/webhooks/112233445566778899/token",
      ]) {
        const saved = await fetch(`${url}/settings`, {
          method: "POST",
          redirect: "manual",
          headers: {
            authorization: basic(password),
            cookie,
            origin: url,
            "content-type": "application/x-www-form-urlencoded",
          },
          body: new URLSearchParams([
            ["csrf", field("csrf")],
            ["version", field("version")],
            ["webhook_url", address],
          ]),
        });
        expect(saved.status).toBe(303);
        const after = await (await fetch(url, { headers: { authorization: basic(password), cookie } })).text();
        const flash = /class="flash error" role="alert">([^<]*)<\/p>/.exec(after)?.[1];
        expect(flash, address).toMatch(
          /^Not saved: the webhook address must be https:\/\/ on discord\.com or discordapp\.com/,
        );
        expect(existsSync(webhookJson)).toBe(false);
        html = after;
      }
      // Two wrong passwords "from" two addresses through X-Real-IP are one client here: the second waits its turn.
      const wrong = (ip: string) =>
        fetch(url, { headers: { authorization: basic("guess"), "x-real-ip": ip } }).then((r) => r.status);
      expect(await wrong("198.51.100.1")).toBe(401);
      expect(await wrong("198.51.100.2")).toBe(401);
      const log = readFileSync(join(env.MCOPS_LOG_DIR as string, "mc-dashboard.log"), "utf8");
      expect(log).toMatch(/failed sign-in as "admin" from 127\.0\.0\.1 \(2 in a row\)/);
      expect(log).not.toContain("198.51.100");
    } finally {
      server.kill("SIGTERM");
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
