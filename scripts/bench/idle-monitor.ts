import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startGameServer, startPanelStandIn, toolEnv } from "@mcops/testkit";
import { cpuMs, ratio, rssKiB, unitNodeFlags } from "./lib.ts";

const BIN = fileURLToPath(new URL("../../packages/idle-monitor/dist/idle-monitor.mjs", import.meta.url));
const SECONDS = 60;

/**
 * The idle monitor as a service at its default poll (60 s) for 60 s, against a bare idle node started at the same
 * time: resident memory at the end, and CPU used over the window after a 5 s settling time (targets: at most 1.25x the
 * memory, under 0.5% of one core). Its polls go to a panel stand-in and a real protocol game server on 127.0.0.1.
 */
export async function benchIdleMonitor(): Promise<void> {
  console.log(`idle-monitor: the service at the default poll, ${SECONDS} s, against a bare idle node`);
  const root = mkdtempSync(join(tmpdir(), "mcops-bench-idle-"));
  const panel = await startPanelStandIn({ servers: [{ state: "running" }] });
  const game = await startGameServer();
  try {
    const env = toolEnv(root);
    mkdirSync(env.MCOPS_CONFIG_DIR as string, { recursive: true });
    const file = join(env.MCOPS_CONFIG_DIR as string, "backup.env");
    writeFileSync(
      file,
      `CONTROL_URL=${panel.url}\nCONTROL_KEY=${panel.apiKey}\nSERVER_ID=${panel.server.identifier}\nWORLD_DIR=${root}\nGAME_ADDRESS=${game.address}\n`,
    );
    chmodSync(file, 0o600);
    // As the unit runs it: the launcher puts the unit's Node flags (if any) before the bundle.
    const flags = unitNodeFlags("idle-monitor@.service");
    const monitor = spawn(process.execPath, [...flags, BIN], { env, stdio: "ignore" });
    const bare = spawn(process.execPath, ["-e", "setInterval(()=>{},1e3)"], { stdio: "ignore" });
    await new Promise((r) => setTimeout(r, 5000));
    const start = [cpuMs(monitor.pid as number), cpuMs(bare.pid as number)];
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const cpu = [cpuMs(monitor.pid as number) - (start[0] ?? 0), cpuMs(bare.pid as number) - (start[1] ?? 0)];
    const [m, b] = [rssKiB(monitor.pid as number), rssKiB(bare.pid as number)];
    monitor.kill("SIGTERM");
    bare.kill();
    const share = (ms: number) => `${((ms / (SECONDS * 1000)) * 100).toFixed(3)}%`;
    console.log(
      `  resident memory: idle-monitor ${(m / 1024).toFixed(1)} MiB, bare node ${(b / 1024).toFixed(1)} MiB, ratio ${ratio(m, b)} (target <= 1.25x)`,
    );
    console.log(
      `  CPU over ${SECONDS} s: idle-monitor ${cpu[0]?.toFixed(0)} ms = ${share(cpu[0] ?? 0)} of one core, bare node ${cpu[1]?.toFixed(0)} ms = ${share(cpu[1] ?? 0)} (target < 0.5%)`,
    );
  } finally {
    await game.close();
    await panel.close();
    rmSync(root, { recursive: true, force: true });
  }
}
