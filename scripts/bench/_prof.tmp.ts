import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildWorld, startPanelStandIn, toolEnv } from "@mcops/testkit";
import { writeBackupEnv } from "./lib.ts";

const root = mkdtempSync("/tmp/prof/w-");
const worldDir = join(root, "volume");
mkdirSync(worldDir, { recursive: true });
writeFileSync(join(worldDir, "server.properties"), "level-name=world\n");
buildWorld(worldDir, { chunksPerRegion: 1024, sections: 24, variety: 16, compressions: [2], players: 8, regions: 4 });
const password = join(root, "password");
writeFileSync(password, "bench password\n", { mode: 0o600 });
chmodSync(password, 0o600);
const panel = await startPanelStandIn({ servers: [{ state: "offline" }] });
const env = toolEnv(root, { RCLONE_CONFIG_MCOPSTEST_TYPE: "local" });
writeBackupEnv(env.MCOPS_CONFIG_DIR as string, {
  panel,
  worldDir,
  repository: `rclone:mcopstest:${root}/repo`,
  password,
});
const BIN = "/work/main/packages/backup/dist/backup.mjs";
spawnSync(BIN, ["init"], { env });
spawnSync(BIN, [], { env });
writeFileSync("/tmp/prof/env.json", JSON.stringify(env));
console.log(root);
await panel.close();
