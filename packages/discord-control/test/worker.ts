import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { signVmRequest } from "@mcops/core/vm-signature";

/**
 * The Worker as a user runs it locally: `wrangler dev` (wrangler.toml, the real workerd runtime shipped in the npm
 * packages), on 127.0.0.1 with an ephemeral port, its Durable Object state in a temporary directory. Settings and
 * the test's secrets are given as `--var`, the stand-ins' addresses among them.
 */
export interface RunningWorker {
  url: string;
  /** What wrangler and the Worker printed (console.log of the Durable Object included). */
  output(): string;
  close(): Promise<void>;
}

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));
const WRANGLER = join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin", "wrangler.js");

export async function startWorker(
  vars: Record<string, string>,
  options: { persistTo?: string } = {},
): Promise<RunningWorker> {
  // A state directory given is kept when the Worker stops (a restart with it is the same Durable Object).
  const state = options.persistTo ?? mkdtempSync(join(tmpdir(), "mcops-worker-"));
  const args = ["dev", "--ip", "127.0.0.1", "--port", "0", "--inspector-port", "0", "--persist-to", state];
  for (const [name, value] of Object.entries(vars)) args.push("--var", `${name}:${value}`);
  const child: ChildProcess = spawn(process.execPath, [WRANGLER, ...args], {
    cwd: PACKAGE,
    env: {
      ...process.env,
      CI: "1",
      WRANGLER_SEND_METRICS: "false",
      XDG_CONFIG_HOME: join(state, "config"),
      NO_COLOR: "1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    text += chunk.toString("utf8");
  });
  const close = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
    }
    if (!options.persistTo) rmSync(state, { recursive: true, force: true });
  };
  // Bounded: 1200 looks of 50 ms (60 s or more on a loaded machine).
  let url: string | undefined;
  for (let i = 0; i < 1200 && !url && child.exitCode === null; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    url = /Ready on (http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1];
  }
  if (!url) {
    await close();
    throw new Error(`wrangler dev did not start:\n${text}`);
  }
  return { url, output: () => text, close };
}

/** The stand-ins a Worker is pointed at in the tests, the benchmark and the demo. */
export interface WorkerWorld {
  app: {
    api: string;
    publicKey: string;
    applicationId: string;
    guildId: string;
    roles: { start: string; admin: string };
  };
  digitalocean: { url: string; token: string };
  cloudflare: { url: string; token: string };
  /** The game, at the address every VM the stand-in makes answers on. */
  gameAddress: string;
  secret: string;
}

/** The Worker's settings and secrets for the stand-ins (play.example.co.uk, quick polls); `more` overrides. */
export function workerVars(world: WorkerWorld, more: Record<string, string> = {}): Record<string, string> {
  return {
    SERVER_ADDR: "play.example.co.uk",
    PANEL_URL: "https://panel.example.co.uk",
    GUILD_ID: world.app.guildId,
    START_ROLE: world.app.roles.start,
    ADMIN_ROLE: world.app.roles.admin,
    GAME_ADDRESS: world.gameAddress,
    POLL_MS: "100",
    RETRY_MS: "300",
    DISCORD_API_URL: world.app.api,
    DIGITALOCEAN_API_URL: world.digitalocean.url,
    CLOUDFLARE_API_URL: world.cloudflare.url,
    DISCORD_PUBLIC_KEY: world.app.publicKey,
    DISCORD_APPLICATION_ID: world.app.applicationId,
    VM_SECRET: world.secret,
    DIGITALOCEAN_ACCESS_TOKEN: world.digitalocean.token,
    CLOUDFLARE_API_TOKEN: world.cloudflare.token,
    ...more,
  };
}

/** A request of the VM, signed as its idle monitor signs it; the answer's status and JSON body, and what was sent. */
export async function sendFromVm(url: string, secret: string, path: string, body: unknown, at = Date.now()) {
  const text = JSON.stringify(body);
  const headers = await signVmRequest(secret, { method: "POST", path, body: text }, at);
  const response = await fetch(`${url}${path}`, { method: "POST", body: text, headers });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, headers, text };
}

/** The game VM, running: a droplet tagged mcops made through DigitalOcean's API (the stand-in's), as a user would. */
export async function runningVm(digitalocean: { url: string; token: string; droplets(): Array<{ status: string }> }) {
  const response = await fetch(`${digitalocean.url}/v2/droplets`, {
    method: "POST",
    headers: { authorization: `Bearer ${digitalocean.token}`, "content-type": "application/json" },
    body: JSON.stringify({
      name: "mc",
      region: "fra1",
      size: "s-2vcpu-4gb",
      image: "ubuntu-22-04-x64",
      tags: ["mcops"],
    }),
  });
  const { droplet } = (await response.json()) as { droplet: { id: number } };
  for (let i = 0; i < 500 && digitalocean.droplets()[0]?.status !== "active"; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (digitalocean.droplets()[0]?.status !== "active") throw new Error("the VM did not get active");
  return droplet.id;
}
