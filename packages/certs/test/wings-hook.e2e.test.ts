import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer, type Server } from "node:https";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type DiscordStandIn, runTool, startDiscordStandIn, type TempDir, tempDir, toolEnv } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeCert } from "./openssl.ts";

/**
 * The deploy hook as certbot runs it: the built `certs wings-hook` installs it; it is run with RENEWED_LINEAGE set,
 * a `systemctl` stand-in on the PATH (it records the call, and restarting Wings brings the Wings stand-in up), the
 * built webhook and certs tools as the installed ones, and the Discord stand-in as the channel.
 */
const CERTS = fileURLToPath(new URL("../dist/certs.mjs", import.meta.url));
const WEBHOOK = fileURLToPath(new URL("../../webhook/dist/webhook.mjs", import.meta.url));
let dir: TempDir;
let discord: DiscordStandIn;
let wings: Server | undefined;
let env: NodeJS.ProcessEnv;
let prefix: string;
let hook: string;
let lineage: string;

/** An executable script. */
function script(file: string, text: string): void {
  writeFileSync(file, text);
  chmodSync(file, 0o755);
}

beforeEach(async () => {
  dir = tempDir("mcops-wings-hook-");
  discord = await startDiscordStandIn();
  env = toolEnv(dir.path);
  mkdirSync(env.MCOPS_CONFIG_DIR as string, { recursive: true });
  writeFileSync(join(env.MCOPS_CONFIG_DIR as string, "webhook.env"), `WEBHOOK_URL=${discord.webhookUrl()}\n`);
  chmodSync(join(env.MCOPS_CONFIG_DIR as string, "webhook.env"), 0o600);
  // The installed tools, as install.sh lays them out: a launcher per tool.
  prefix = join(dir.path, "opt", "mc-tools");
  mkdirSync(prefix, { recursive: true });
  script(join(prefix, "webhook"), `#!/bin/sh\nexec "${process.execPath}" "${WEBHOOK}" "$@"\n`);
  script(join(prefix, "certs"), `#!/bin/sh\nexec "${process.execPath}" "${CERTS}" "$@"\n`);
  lineage = join(dir.path, "letsencrypt", "live", "play.example.com");
  mkdirSync(lineage, { recursive: true });
  hook = join(dir.path, "letsencrypt", "renewal-hooks", "deploy", "restart-wings.sh");
});

afterEach(async () => {
  wings?.close();
  wings = undefined;
  await discord.close();
  dir.cleanup();
});

/** Installs the hook for a Wings answering at `url` (undefined: where its config.yml says); what the tool said. */
async function install(url: string | undefined) {
  const run = await runTool(
    CERTS,
    [
      "wings-hook",
      "--hooks-dir",
      join(dir.path, "letsencrypt", "renewal-hooks", "deploy"),
      "--prefix",
      prefix,
      ...(url === undefined ? [] : ["--wings-url", url]),
    ],
    { env },
  );
  expect(run.code, run.stderr).toBe(0);
  return run;
}

/** Runs the hook as certbot does, with `systemctl` answered by `systemctl` (a script body). */
async function runHook(systemctl: string, extra: Record<string, string> = {}) {
  const bin = join(dir.path, "bin");
  mkdirSync(bin, { recursive: true });
  script(join(bin, "systemctl"), systemctl);
  // Not spawnSync: the Discord stand-in answers the hook's posts from this very process.
  return runTool("bash", [hook], {
    env: { ...env, PATH: `${bin}:${process.env.PATH}`, RENEWED_LINEAGE: lineage, ...extra },
  });
}

describe("certs wings-hook", () => {
  it("installs a script bash accepts, mode 755, once", async () => {
    await install("https://127.0.0.1:8080");
    expect(statSync(hook).mode & 0o777).toBe(0o755);
    expect(spawnSync("bash", ["-n", hook]).status).toBe(0);
    expect(readFileSync(hook, "utf8")).toContain(`MCOPS=\${MCOPS_PREFIX:-'${prefix}'}`);
    const again = await install("https://127.0.0.1:8080");
    expect(again.stdout).toMatch(/is installed already\n$/);
  });

  it("restarts Wings, waits until it answers, and posts the renewal with the new expiry", async () => {
    const served = makeCert(dir.path, "wings", { days: 90, names: ["play.example.com"] });
    writeFileSync(join(lineage, "fullchain.pem"), served.cert);
    wings = createServer({ cert: served.cert, key: served.key }, (_req, res) => {
      res.writeHead(401);
      res.end('{"errors":[{"code":"Unauthorized"}]}');
    });
    // The Wings stand-in listens; the hook asks it once the systemctl stand-in has "restarted" it.
    const ready = join(dir.path, "restarted");
    await new Promise<void>((resolve) => wings?.listen(0, "127.0.0.1", () => resolve()));
    const port = (wings.address() as { port: number }).port;
    await install(`https://127.0.0.1:${port}`);
    const result = await runHook(`#!/bin/sh\necho "$@" > '${ready}'\n`, { WINGS_WAIT: "20" });
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(ready, "utf8")).toBe("restart wings\n");
    await discord.waitForMessages(1, 10_000);
    const day = new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10);
    expect(discord.messages[0]?.body.embeds[0]).toMatchObject({
      title: `Wings certificate renewed (valid until ${day})`,
      color: 5763719,
    });
  });

  it("asks Wings where its config.yml says: another api.port, plain HTTP behind a proxy (issue 31)", async () => {
    writeFileSync(
      join(lineage, "fullchain.pem"),
      makeCert(dir.path, "wings", { days: 90, names: ["play.example.com"] }).cert,
    );
    // Wings on plain HTTP (api.ssl.enabled: false, a proxy in front of it terminates TLS), on a port of its own.
    const plain = createHttpServer((_req, res) => {
      res.writeHead(401);
      res.end('{"errors":[{"code":"Unauthorized"}]}');
    });
    await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", () => resolve()));
    const port = (plain.address() as { port: number }).port;
    try {
      const config = join(dir.path, "config.yml");
      writeFileSync(config, `debug: false\napi:\n  host: 0.0.0.0\n  port: ${port}\n  ssl:\n    enabled: false\n`);
      const installed = await install(undefined);
      expect(installed.stdout).toContain("the address Wings' config.yml gives");
      const result = await runHook("#!/bin/sh\nexit 0\n", { WINGS_CONFIG: config, WINGS_WAIT: "10" });
      expect(result.code, result.stderr).toBe(0);
      await discord.waitForMessages(1, 10_000);
      expect(discord.messages[0]?.body.embeds[0].description).toBe(
        `Wings restarted and answers at http://127.0.0.1:${port}.`,
      );
      // Wings' config unreadable: the panel's default address, as before.
      const missing = await runHook("#!/bin/sh\nexit 0\n", {
        WINGS_CONFIG: join(dir.path, "none.yml"),
        WINGS_WAIT: "2",
      });
      expect(missing.code).toBe(1);
      await discord.waitForMessages(2, 10_000);
      expect(discord.messages[1]?.body.embeds[0].description).toContain("nothing answered at https://127.0.0.1:8080");
    } finally {
      plain.close();
    }
  });

  it("`certs wings-url` reads api.host, api.port and api.ssl.enabled, with Wings' defaults", async () => {
    const config = join(dir.path, "config.yml");
    const url = async (text: string) => {
      writeFileSync(config, text);
      const run = await runTool(CERTS, ["wings-url", "--wings-config", config], { env });
      return run.code === 0 ? run.stdout : `exit ${run.code}`;
    };
    // The node: api.port 8443, TLS on.
    expect(await url("api:\n  port: 8443\n  ssl:\n    enabled: true\n    cert: /x.pem\n")).toBe(
      "https://127.0.0.1:8443\n",
    );
    // Wings' defaults (config/config.go): 0.0.0.0, 8080, TLS off.
    expect(await url("api: {}\n")).toBe("http://127.0.0.1:8080\n");
    expect(await url("# nothing\n")).toBe("http://127.0.0.1:8080\n");
    expect(await url('api:\n  host: "10.0.0.5"\n  port: "8081"\n  ssl: {enabled: yes}\n')).toBe(
      "https://10.0.0.5:8081\n",
    );
    expect(await url("api:\n  host: '[::]'\n  port: 8080\n")).toBe("http://[::1]:8080\n");
    // Wings' YAML (gopkg.in/yaml.v2 resolve.go) takes y and Y for true as well, and On; n and N for false.
    expect(await url("api:\n  port: 8443\n  ssl:\n    enabled: y\n")).toBe("https://127.0.0.1:8443\n");
    expect(await url("api:\n  port: 8443\n  ssl:\n    enabled: Y\n")).toBe("https://127.0.0.1:8443\n");
    expect(await url("api:\n  port: 8443\n  ssl:\n    enabled: On\n")).toBe("https://127.0.0.1:8443\n");
    expect(await url("api:\n  port: 8443\n  ssl:\n    enabled: N\n")).toBe("http://127.0.0.1:8443\n");
    expect(await url("api:\n  port: 99999\n")).toBe("exit 2");
    expect(await url("api:\n  host: 'a b'\n")).toBe("exit 2");
  });

  it("does nothing for a certificate that is not Wings' (certbot runs every hook for every renewal)", async () => {
    const config = join(dir.path, "config.yml");
    writeFileSync(config, `api:\n  ssl:\n    enabled: true\n    cert: ${lineage}/fullchain.pem\n`);
    await install("https://127.0.0.1:9");
    const calls = join(dir.path, "systemctl-calls");
    const panel = join(dir.path, "letsencrypt", "live", "panel.example.com");
    mkdirSync(panel, { recursive: true });
    const result = await runHook(`#!/bin/sh\necho "$@" >> '${calls}'\n`, {
      WINGS_CONFIG: config,
      RENEWED_LINEAGE: panel,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(calls)).toBe(false);
    expect(discord.messages).toEqual([]);
  });

  it("posts in red when Wings does not restart, or does not answer", async () => {
    writeFileSync(
      join(lineage, "fullchain.pem"),
      makeCert(dir.path, "wings", { days: 90, names: ["play.example.com"] }).cert,
    );
    await install("https://127.0.0.1:9");
    const failed = await runHook('#!/bin/sh\necho "Job for wings.service failed" >&2\nexit 1\n');
    expect(failed.code).toBe(1);
    await discord.waitForMessages(1, 10_000);
    expect(discord.messages[0]?.body.embeds[0]).toMatchObject({
      title: "Wings certificate renewed, but Wings did not restart",
      color: 15548997,
    });
    expect(discord.messages[0]?.body.embeds[0].description).toContain("Job for wings.service failed");
    // A WINGS_WAIT that is not a number of seconds is 120; here 2.
    const silent = await runHook("#!/bin/sh\nexit 0\n", { WINGS_WAIT: "2" });
    expect(readFileSync(hook, "utf8")).toContain('[[ "$WAIT" =~ ^[0-9]{1,4}$ ]] || WAIT=120');
    expect(silent.code).toBe(1);
    await discord.waitForMessages(2, 10_000);
    expect(discord.messages[1]?.body.embeds[0].title).toBe("Wings certificate renewed, but Wings does not answer");
  });
});
