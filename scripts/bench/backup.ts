import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readRecords } from "@mcops/core/events";
import { startPanelStandIn, toolEnv } from "@mcops/testkit";
import { fmt, median, ratio, writeBackupEnv } from "./lib.ts";

/**
 * Issue 3: the built `backup` against a plain `restic backup` of the same generated ~300 MB world (with the restic flags
 * the backup passes), a first run and a second with nothing changed; targets at most 1.05x restic alone (issue 35: 1.1x
 * for an unchanged world). Also how long autosave was off. Runs are asynchronous
 * because the panel stand-in lives in this process.
 */
const BIN = fileURLToPath(new URL("../../packages/backup/dist/backup.mjs", import.meta.url));

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`${command} ${args.join(" ")} exited ${code}: ${stderr}`));
      else resolve(Number(process.hrtime.bigint() - started) / 1e6);
    });
  });
}

function makeWorld(worldDir: string, mib: number): void {
  const perFile = 4 * 1024 * 1024;
  const files = Math.round((mib * 1024 * 1024) / perFile);
  for (let i = 0; i < files; i++) {
    const [dim, sub] =
      i % 5 === 0
        ? ["world_nether", "DIM-1/region"]
        : i % 7 === 0
          ? ["world_the_end", "DIM1/region"]
          : ["world", "region"];
    const dir = join(worldDir, dim as string, sub as string);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `r.${i}.0.mca`), randomBytes(perFile));
  }
  for (const dim of ["world", "world_nether", "world_the_end"])
    writeFileSync(join(worldDir, dim, "level.dat"), randomBytes(4096));
  writeFileSync(join(worldDir, "server.properties"), "level-name=world\n");
}

export async function benchBackup(mib = 300, rounds = 3, unchanged = 3): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "mcops-bench-backup-"));
  const uuid = randomUUID();
  const worldDir = join(root, "volumes", uuid);
  makeWorld(worldDir, mib);
  const password = join(root, "password");
  writeFileSync(password, "bench password\n");
  chmodSync(password, 0o600);
  const panel = await startPanelStandIn({
    servers: [{ uuid, state: "running" }],
    logFile: join(worldDir, "logs", "latest.log"),
  });
  const paths = ["world", "world_nether", "world_the_end"].map((d) => join(worldDir, d));
  const base = {
    PATH: process.env.PATH,
    HOME: root,
    RCLONE_CONFIG_MCOPSTEST_TYPE: "local",
    RESTIC_PASSWORD_FILE: password,
  };

  const times: Record<string, number[]> = {};
  const note = (key: string, ms: number) => {
    times[key] ??= [];
    times[key].push(ms);
  };
  const autosaveOff: number[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      // restic alone, with the flags the backup gives it (--json, its tags, its excludes); not its mount namespace
      // (BACKUP_ISOLATE), which is the backup's own cost.
      const plain = { ...base, RESTIC_REPOSITORY: `rclone:mcopstest:${root}/plain-${round}` };
      const resticBackup = ["backup", "--json", "--exclude-larger-than", "4G", "--tag", "mcops", "--tag"];
      resticBackup.push(`server-${panel.server.identifier}`, "--exclude", "session.lock", "--", ...paths);
      await run("restic", ["init"], plain);
      note("restic first", await run("restic", resticBackup, plain));

      // mcops backup, without and with the default retention
      const envs = new Map<string, NodeJS.ProcessEnv>();
      for (const [label, prune] of [
        ["backup", "no"],
        ["backup + retention", "yes"],
      ] as const) {
        const dir = join(root, `mcops-${label.replace(/\W+/g, "-")}-${round}`);
        writeBackupEnv(join(dir, "etc"), { panel, worldDir, repository: `rclone:mcopstest:${dir}/repo`, password }, [
          `BACKUP_PRUNE=${prune}`,
        ]);
        // As installed: the launcher gives Node a compile cache (deploy/install.sh), warm after the first run.
        const env = toolEnv(dir, {
          RCLONE_CONFIG_MCOPSTEST_TYPE: "local",
          NODE_COMPILE_CACHE: join(root, "compile-cache"),
        });
        envs.set(label, env);
        await run(BIN, ["init"], env);
        note(`${label} first`, await run(BIN, [], env));
      }
      // Nothing changed since: each of the three again, interleaved (the machine's load drifts), `unchanged` times.
      for (let i = 0; i < unchanged; i++) {
        note("restic second", await run("restic", resticBackup, plain));
        for (const [label, env] of envs) note(`${label} second`, await run(BIN, [], env));
      }
      // The backups' own figures, from their records (never their log lines read back).
      for (const env of envs.values()) {
        const dirs = { stateDir: env.MCOPS_STATE_DIR as string, logDir: env.MCOPS_LOG_DIR as string };
        for (const record of readRecords(dirs, "backup")) {
          if (record.type === "backup.done" && record.autosaveOffMs !== undefined)
            autosaveOff.push(record.autosaveOffMs);
        }
      }
    }
  } finally {
    await panel.close();
    rmSync(root, { recursive: true, force: true });
  }

  const m = (key: string) => median(times[key] ?? []);
  console.log(
    `backup of a generated ${mib} MiB world, ${rounds} rounds (second run: ${unchanged} per round, interleaved), medians (restic ${await resticVersion()}, local rclone remote)`,
  );
  for (const run of ["first", "second"]) {
    const plain = m(`restic ${run}`);
    console.log(`  ${run} run: restic backup alone           ${fmt(plain)}`);
    console.log(
      `  ${run} run: backup (BACKUP_PRUNE=no)      ${fmt(m(`backup ${run}`))}   ratio ${ratio(m(`backup ${run}`), plain)} (target <= ${run === "first" ? "1.05" : "1.1"}x)`,
    );
    console.log(
      `  ${run} run: backup (default retention)    ${fmt(m(`backup + retention ${run}`))}   ratio ${ratio(m(`backup + retention ${run}`), plain)} (includes forget --prune)`,
    );
  }
  console.log(
    `  autosave off (save-off .. save-on), median over ${autosaveOff.length} runs: ${fmt(median(autosaveOff))}, longest ${fmt(Math.max(...autosaveOff))}`,
  );
}

async function resticVersion(): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn("restic", ["version"]);
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.on("close", () => resolve(/restic (\S+)/.exec(out)?.[1] ?? "?"));
  });
}
