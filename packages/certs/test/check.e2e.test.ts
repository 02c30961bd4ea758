import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runTool, type TempDir, tempDir, toolEnv } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeCert } from "./openssl.ts";

/** The built `certs check` on certificates the test makes with Debian's openssl, and on a TLS server it serves one with. */
const BIN = fileURLToPath(new URL("../dist/certs.mjs", import.meta.url));
let dir: TempDir;
let ssl: string;
let env: NodeJS.ProcessEnv;

function backupEnv(lines: string[]): void {
  const etc = env.MCOPS_CONFIG_DIR as string;
  mkdirSync(etc, { recursive: true });
  writeFileSync(join(etc, "backup.env"), `${lines.join("\n")}\n`);
  chmodSync(join(etc, "backup.env"), 0o600);
}

beforeEach(() => {
  dir = tempDir("mcops-certs-check-");
  ssl = join(dir.path, "ssl");
  mkdirSync(ssl);
  env = toolEnv(dir.path);
});
afterEach(() => dir.cleanup());

const check = (args: string[] = []) =>
  runTool(BIN, ["check", "--ssl-dir", ssl, "--wings-config", join(dir.path, "config.yml"), ...args], { env });

describe("certs check", () => {
  it("says when each certificate expires, writes the gauges, and exits 1 inside CERT_WARN", async () => {
    writeFileSync(
      join(ssl, "example.com.crt"),
      makeCert(dir.path, "example.com", { days: 5475, names: ["example.com"] }).cert,
    );
    const wings = makeCert(dir.path, "play.example.com", { days: 3, names: ["play.example.com"] });
    writeFileSync(
      join(dir.path, "config.yml"),
      `debug: false\napi:\n  host: 0.0.0.0\n  port: 8080\n  ssl:\n    enabled: true\n    cert: ${wings.certFile}\n    key: /etc/letsencrypt/live/play.example.com/privkey.pem\n  upload_limit: 100\nsystem:\n  data: /var/lib/pterodactyl/volumes\n`,
    );
    const textfiles = join(dir.path, "textfiles");
    backupEnv([`BACKUP_TEXTFILE_DIR=${textfiles}`, "SERVER_ID=1a2b3c4d"]);
    const run = await check();
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^origin example\.com: valid until \d{4}-\d\d-\d\d \(54\d\d days\)\n/);
    expect(run.stdout).toMatch(
      new RegExp(
        `\\nwings ${wings.certFile.replaceAll("/", "\\/")}: valid until \\d{4}-\\d\\d-\\d\\d \\(2 days\\) — within CERT_WARN \\(.+\\): renew it\\n$`,
      ),
    );
    const prom = readFileSync(join(textfiles, "mcops_certs.prom"), "utf8");
    expect(prom.match(/^# HELP mcops_cert_expiry_seconds /gm)).toHaveLength(1);
    expect(prom).toMatch(/^mcops_cert_expiry_seconds\{server="1a2b3c4d",cert="origin",name="example\.com"\} 4\d{8}$/m);
    expect(prom).toMatch(/^mcops_cert_expiry_seconds\{server="1a2b3c4d",cert="wings",name=".*"\} 2\d{5}$/m);
    backupEnv(["CERT_WARN=1d"]);
    expect((await check()).code).toBe(0);
  });

  it("reads Wings' config as YAML (any indentation, comments, quotes, yes), and says when it names no certificate", async () => {
    const wings = makeCert(dir.path, "play.example.com", { days: 60, names: ["play.example.com"] });
    const config = join(dir.path, "config.yml");
    for (const text of [
      `api: # the daemon's API\n    host: 0.0.0.0\n    ssl:\n        enabled: yes\n        cert: '${wings.certFile}'\n`,
      `api:\n\tssl: {enabled: True, cert: "${wings.certFile}"}\n`.replace("\t", "  "),
    ]) {
      writeFileSync(config, text);
      const run = await check();
      expect(run.stdout).toMatch(/^wings .*play\.example\.com\.pem: valid until \d{4}-\d\d-\d\d \(59 days\)\n$/);
    }
    writeFileSync(config, "api:\n  host: 0.0.0.0\n");
    const none = await check();
    expect(none.code).toBe(1);
    expect(none.stdout).toMatch(/^wings .*config\.yml: cannot read it \(no api\.ssl\.cert in it\)\n$/);
    writeFileSync(config, "api:\n  ssl:\n    enabled: false\n");
    expect(await check()).toMatchObject({ code: 1, stdout: `no certificate found (${ssl}, ${config})\n` });
  });

  it("asks Wings for its certificate over TLS when its config names none", async () => {
    const served = makeCert(dir.path, "play.example.com", { days: 30, names: ["play.example.com"] });
    const server: Server = createServer({ cert: served.cert, key: served.key }, (_req, res) => res.end("{}"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    try {
      const port = (server.address() as { port: number }).port;
      const run = await check(["--wings", `127.0.0.1:${port}`]);
      expect(run.stdout).toMatch(
        new RegExp(`^wings 127\\.0\\.0\\.1:${port}: valid until \\d{4}-\\d\\d-\\d\\d \\(29 days\\)\\n$`),
      );
      expect(run.code).toBe(0);
    } finally {
      server.close();
    }
  });

  it("says what it cannot read (exit 1), never waiting on a FIFO, and that CERT_WARN is not a duration (exit 78)", async () => {
    writeFileSync(join(ssl, "example.com.crt"), "not a certificate\n");
    execFileSync("mkfifo", [join(ssl, "pipe.example.com.crt")]);
    const run = await check();
    expect(run).toMatchObject({ code: 1 });
    expect(run.stdout).toMatch(/^origin example\.com: cannot read it \(.*example\.com\.crt: .*\)\n/m);
    expect(run.stdout).toMatch(/^origin pipe\.example\.com: cannot read it \(.*pipe\.example\.com\.crt: ENOTREG\)$/m);
    backupEnv(["CERT_WARN=soon"]);
    const bad = await check();
    expect(bad.code).toBe(78);
    expect(bad.stderr).toMatch(/^certs: CERT_WARN is not a duration above 0 .*\n$/);
  });
});
