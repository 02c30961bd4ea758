import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type DiscordStandIn,
  type GameServer,
  type PanelStandIn,
  startDiscordStandIn,
  startGameServer,
  startPanelStandIn,
  startTool,
  type TempDir,
  type ToolRun,
  tempDir,
  toolEnv,
} from "@mcops/testkit";
import { type Browser, chromium, type Locator } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

/**
 * The built executable, driven by Debian's Chromium (packages chromium and chromium-driver, which scripts/setup.sh
 * installs) through playwright-core, the way an operator uses the page: sign in, change the categories, save, send
 * a test message. The log tailer, built too, shows that the tools honour what was saved.
 */
const BIN = fileURLToPath(new URL("../dist/dashboard.mjs", import.meta.url));
const LOG_TAILER = fileURLToPath(new URL("../../log-tailer/dist/log-tailer.mjs", import.meta.url));
const CHROMIUM = process.env.MCOPS_CHROMIUM ?? "/usr/bin/chromium";
const PASSWORD = "correct horse battery staple";

/** What the page shows of an element, laid out as a reader sees it: the facts' names apart from their values, cells apart. */
// biome-ignore lint/performance/useDomNodeTextContent: this is Playwright's Locator.innerText() (the rendered text), not the DOM property; textContent() would run the facts and table cells together
const shown = (locator: Locator) => locator.innerText();

let browser: Browser;
let root: TempDir;
let env: NodeJS.ProcessEnv;
let discord: DiscordStandIn;
let panel: PanelStandIn;
let dashboard: { url: string; stop(): Promise<ToolRun> };

/** `dashboard passwd` with the password on standard input, as an operator would pipe it. */
function setPassword(password: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(BIN, ["passwd"], { env, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  child.stdin.end(`${password}\n`);
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

/** Starts the executable on a free port; resolves with its address once it says where it listens. */
async function startDashboard(): Promise<typeof dashboard> {
  const { child, done } = startTool(BIN, ["--listen", "127.0.0.1:0"], { env });
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`dashboard did not start within 10 s: ${out}`)), 10_000);
    child.stdout?.on("data", (d) => {
      out += d;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    done.then((run) => reject(new Error(`dashboard exited ${run.code}: ${run.stderr}`)));
  });
  return {
    url,
    stop: () => {
      child.kill("SIGTERM");
      return done;
    },
  };
}

const webhookJson = () => join(env.MCOPS_CONFIG_DIR as string, "webhook.json");

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing — run: apt-get install chromium chromium-driver (scripts/setup.sh does)`);
  }
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // As root, no sandbox; and no background traffic (updates, sync, QUIC): this machine's network is closed and
    // Chromium would keep retrying it.
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    headless: true,
    timeout: 20_000,
  });
});
afterAll(async () => {
  await browser?.close();
});

beforeEach(async () => {
  root = tempDir("mcops-dashboard-e2e-");
  env = toolEnv(root.path);
  mkdirSync(env.MCOPS_CONFIG_DIR as string, { recursive: true });
  discord = await startDiscordStandIn();
  panel = await startPanelStandIn({ servers: [{ state: "running" }] });
  const set = await setPassword(PASSWORD);
  expect(set).toMatchObject({ code: 0, stderr: "" });
  expect(set.stdout).toMatch(/^dashboard: password set for admin \(.*dashboard\.passwd\)\n$/);
});
afterEach(async () => {
  const run = await dashboard?.stop();
  expect(run?.code).toBe(0);
  await discord.close();
  await panel.close();
  root.cleanup();
});

describe("the dashboard in Chromium", () => {
  it("signs in, turns a category off and saves; webhook.json changes, the tools honour it, a test message arrives", async () => {
    const game: GameServer = await startGameServer();
    const alex = await game.join("Alex");
    try {
      writeFileSync(
        join(env.MCOPS_CONFIG_DIR as string, "backup.env"),
        `CONTROL_URL=${panel.url}\nCONTROL_KEY=${panel.apiKey}\nSERVER_ID=${panel.server.identifier}\nGAME_ADDRESS=${game.address}\n`,
        { mode: 0o600 },
      );
      writeFileSync(webhookJson(), `${JSON.stringify({ note: "kept by hand", events: {} })}\n`, { mode: 0o600 });
      // The Discord stand-in listens on 127.0.0.1: only this variable lets the dashboard take its address.
      env.DASHBOARD_ALLOW_ANY_WEBHOOK = "1";
      dashboard = await startDashboard();
      const context = await browser.newContext({ httpCredentials: { username: "admin", password: PASSWORD } });
      const page = await context.newPage();

      const first = await page.goto(dashboard.url);
      expect(first?.status()).toBe(200);
      await expect(page.getByRole("heading", { name: "Notifications", exact: true }).isVisible()).resolves.toBe(true);
      const status = await shown(page.locator(".facts"));
      expect(status).toMatch(/State\s+running/);
      expect(status).toMatch(/Players\s+1 of 20 online/);

      await page.getByLabel("Discord webhook address").fill(discord.webhookUrl());
      await page.getByRole("checkbox", { name: /Player joined/ }).uncheck();
      await page.getByRole("button", { name: "Save" }).click();
      await expect(shown(page.locator(".flash.ok"))).resolves.toMatch(/^Saved\./);

      const saved = JSON.parse(readFileSync(webhookJson(), "utf8"));
      expect(saved).toMatchObject({ note: "kept by hand", webhook_url: discord.webhookUrl() });
      expect(saved.events).toMatchObject({ join: false, leave: true, death: true, backup: true });
      expect(statSync(webhookJson()).mode & 0o777).toBe(0o600);
      const token = discord.webhooks[0]?.token as string;
      expect(await page.content()).not.toContain(token);
      await expect(page.getByLabel("Discord webhook address").inputValue()).resolves.toBe("");
      await expect(page.getByRole("checkbox", { name: /Player joined/ }).isChecked()).resolves.toBe(false);

      // The log tailer posts the leave and not the join: the join category is off.
      const latest = join(root.path, "latest.log");
      writeFileSync(
        latest,
        "[07:00:01] [Server thread/INFO]: Steve joined the game\n[07:05:09] [Server thread/INFO]: Steve left the game\n",
      );
      const tailer = startTool(LOG_TAILER, ["--file", latest, "--from-start"], { env });
      await discord.waitForMessages(1, 10_000);
      tailer.child.kill("SIGTERM");
      expect((await tailer.done).code).toBe(0);
      expect(discord.messages.map((m) => m.body.embeds[0].title)).toEqual(["Steve left the game"]);

      await page.reload();
      const recent = await shown(page.locator("table"));
      expect(recent).toMatch(/Steve left the game\s+game log\s+sent/);
      expect(recent).toMatch(/Steve joined the game\s+game log\s+off\s+the join category is off/);

      await page.getByRole("button", { name: "Send test message" }).click();
      await expect(shown(page.locator(".flash.ok"))).resolves.toMatch(
        /^Test message sent to http:\/\/127\.0\.0\.1:\d+\/api\/webhooks\/\d+\/\*\*\*\.$/,
      );
      const messages = await discord.waitForMessages(2, 10_000);
      expect(messages[1]?.body.embeds[0]).toMatchObject({ title: "Test message", color: 3447003 });
      expect(messages[1]?.body.embeds[0].description).toContain("by admin");
      await expect(shown(page.locator("table tbody tr").first())).resolves.toMatch(/Test message\s+dashboard\s+sent/);
      await context.close();
    } finally {
      await alex.leave();
      await game.close();
    }
  });

  it("answers 401 to a wrong password and shows nothing", async () => {
    dashboard = await startDashboard();
    const wrong = await browser.newContext({ httpCredentials: { username: "admin", password: "not the password" } });
    const page = await wrong.newPage();
    const answer = await page.goto(dashboard.url);
    expect(answer?.status()).toBe(401);
    expect(await answer?.text()).not.toContain("webhook");
    await expect(shown(page.locator("h1"))).resolves.toBe("Sign-in required");
    await wrong.close();
    const log = readFileSync(join(env.MCOPS_LOG_DIR as string, "mc-dashboard.log"), "utf8");
    expect(log).toMatch(/WARN failed sign-in as "admin" from 127\.0\.0\.1 \(1 in a row\); next try in 500 ms/);
  });

  it("refuses a form that another site makes the signed-in browser post, and changes nothing", async () => {
    writeFileSync(webhookJson(), `${JSON.stringify({ events: { join: true } })}\n`, { mode: 0o600 });
    const before = readFileSync(webhookJson(), "utf8");
    dashboard = await startDashboard();
    const evil: Server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<!doctype html><form id="f" method="post" action="${dashboard.url}/settings">
<input name="webhook_url" value="https://discord.com/api/webhooks/1/attackerattackerattacker">
<input name="csrf" value="guessed"><input name="version" value="none"></form>
<script>document.getElementById("f").submit()</script>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
    try {
      const context = await browser.newContext({ httpCredentials: { username: "admin", password: PASSWORD } });
      const page = await context.newPage();
      expect((await page.goto(dashboard.url))?.status()).toBe(200); // signed in, with a session cookie
      const posted = page.waitForResponse((r) => r.url().endsWith("/settings"), { timeout: 10_000 });
      await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      const answer = await posted;
      expect(answer.status()).toBe(403);
      expect(await answer.text()).toContain("Form refused");
      expect(readFileSync(webhookJson(), "utf8")).toBe(before);
      await context.close();
    } finally {
      await new Promise((resolve) => evil.close(resolve));
    }
    expect(readFileSync(join(env.MCOPS_LOG_DIR as string, "mc-dashboard.log"), "utf8")).toMatch(
      /WARN refused a form post to \/settings from 127\.0\.0\.1: sent from 127\.0\.0\.1:\d+, not 127\.0\.0\.1:\d+/,
    );
  });
});
