/**
 * Makes docs/dashboard.png, the README's picture: the built executable with a realistic state (a running server, three
 * players, the tools' logs of a day), signed in with Debian's Chromium, one category turned off and saved.
 * Run: node scripts/screenshot.ts (after npm run build). Everything listens on 127.0.0.1 in a temporary directory.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isoSeconds } from "@mcops/core/clock";
import { startGameServer, toolEnv } from "@mcops/testkit";
import { chromium } from "playwright-core";

const BIN = fileURLToPath(new URL("../dist/dashboard.mjs", import.meta.url));
const OUT = fileURLToPath(new URL("../docs/dashboard.png", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "mcops-dashboard-shot-"));
const env = toolEnv(root);
const etc = env.MCOPS_CONFIG_DIR as string;
const logs = env.MCOPS_LOG_DIR as string;
mkdirSync(etc, { recursive: true });
mkdirSync(logs, { recursive: true });

// A panel answering the client API's resources call the way Pterodactyl does, for a server up 3 h 12 min.
const panel = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      object: "stats",
      attributes: {
        current_state: "running",
        is_suspended: false,
        resources: { memory_bytes: 2_254_857_830, cpu_absolute: 23.4, disk_bytes: 3_400_000_000, uptime: 11_520_000 },
      },
    }),
  );
});
await new Promise<void>((resolve) => panel.listen(0, "127.0.0.1", resolve));
const game = await startGameServer();
const players = await Promise.all(["Alex", "Steve", "Kai"].map((name) => game.join(name)));

const now = Date.now();
const at = (minutesAgo: number) => isoSeconds(now - minutesAgo * 60_000);
const log = (name: string, lines: Array<[number, string]>) =>
  writeFileSync(join(logs, name), lines.map(([ago, text]) => `${at(ago)} ${text}\n`).join(""));
// Each event's line, then the notifier's outcome line (death is off in webhook.json).
const sent = (title: string) => `INFO notification "${title}" sent`;
log("mc-backup.log", [
  [184, "INFO === Backup started ==="],
  [184, sent("Backup started")],
  [184, "INFO backing up /var/lib/pterodactyl/volumes/1a2b/world, world_nether, world_the_end to rclone:gdrive:mc"],
  [183, "INFO === Backup done === took 42 s, added 12.3 MiB, repository 1.21 GiB, snapshot 5f3c9e2a"],
  [183, sent("Backup completed")],
]);
log("mc-log-tailer.log", [
  [95, 'INFO start: Done (8.412s)! For help, type "help" (line 212)'],
  [95, sent("Server started")],
  [41, "INFO join Alex: Alex joined the game (line 260)"],
  [41, sent("Alex joined the game")],
  [33, "INFO join Steve: Steve joined the game (line 281)"],
  [33, sent("Steve joined the game")],
  [12, "INFO death Steve: Steve was slain by Zombie (line 344)"],
  [12, 'INFO notification "Steve was slain by Zombie" not sent: the death category is off'],
  [4, "INFO join Kai: Kai joined the game (line 371)"],
  [4, sent("Kai joined the game")],
]);
log("mc-restart.log", [
  [101, "INFO countdown of 5 minutes starts (0 players online)"],
  [101, sent("Scheduled restart warning")],
  [96, "INFO sending the restart signal (after a 5 minutes countdown)"],
  [96, sent("Restart triggered")],
  [95, "INFO the server is running again (5 min 42 s after the countdown began)"],
  [95, sent("Server restarted")],
]);
writeFileSync(
  join(etc, "backup.env"),
  `CONTROL_URL=http://127.0.0.1:${(panel.address() as AddressInfo).port}\nCONTROL_KEY=ptlc_${"a".repeat(43)}\nSERVER_ID=1a2b3c4d\nGAME_ADDRESS=${game.address}\n`,
  { mode: 0o600 },
);
writeFileSync(
  join(etc, "webhook.json"),
  `${JSON.stringify({ webhook_url: `https://discord.com/api/webhooks/1187654321098765432/${"Zx9".repeat(22)}`, events: { idle: false, death: false } }, null, 2)}\n`,
  { mode: 0o600 },
);

const password = "correct horse battery staple";
await new Promise<void>((resolve, reject) => {
  const child = spawn(BIN, ["passwd"], { env, stdio: ["pipe", "ignore", "inherit"] });
  child.stdin.end(`${password}\n`);
  child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`passwd exited ${code}`))));
});
const server = spawn(BIN, ["--listen", "127.0.0.1:0"], { env, stdio: ["ignore", "pipe", "inherit"] });
const url = await new Promise<string>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error("the dashboard did not start")), 10_000);
  server.stdout.on("data", (d: Buffer) => {
    const match = /listening on (\S+)/.exec(String(d));
    if (match) {
      clearTimeout(timer);
      resolve(match[1] as string);
    }
  });
});

const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  const context = await browser.newContext({
    httpCredentials: { username: "admin", password },
    viewport: { width: 1280, height: 800 },
    colorScheme: "light",
  });
  const page = await context.newPage();
  await page.goto(url);
  await page.getByRole("checkbox", { name: /Player left/ }).uncheck();
  await page.getByRole("button", { name: "Save" }).click();
  await page.locator(".flash.ok").waitFor();
  await page.screenshot({ path: OUT, fullPage: true });
  console.log(`wrote ${OUT}`);
} finally {
  await browser.close();
  server.kill("SIGTERM");
  for (const p of players) await p.leave();
  await game.close();
  panel.close();
  rmSync(root, { recursive: true, force: true });
}
