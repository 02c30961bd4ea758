import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { COLOURS } from "@mcops/core/http";
import { gaugeValue } from "@mcops/core/textfile";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Server, startServer } from "./harness.ts";

let server: Server;

beforeEach(async () => {
  // The game takes 1.5 s from save-all flush to "Saved the game".
  server = await startServer({ saveDelayMs: 1500 });
  server.backupEnv({ BACKUP_FLUSH_WARN: "1s", BACKUP_TEXTFILE_DIR: join(server.root, "textfiles") });
  expect((await server.run(["init"])).code).toBe(0);
});

afterEach(async () => {
  await server.close();
});

const slowWarnings = () =>
  server.discord.messages.map((m) => m.body.embeds[0]).filter((e) => e.title === "Saving the world is slow");

describe("the save stall, measured", () => {
  it("is in the done line, the message and the gauges; past BACKUP_FLUSH_WARN one yellow warning a day", async () => {
    const first = await server.run();
    expect(first.code, first.stderr).toBe(0);
    const done = server
      .backupLog()
      .split("\n")
      .find((l) => l.includes("=== Backup done ==="));
    const [, save, off] = /; save took ([\d.]+) s, autosave off for ([\d.]+) s$/.exec(done ?? "") ?? [];
    expect(Number(save)).toBeGreaterThanOrEqual(1.5);
    expect(Number(off)).toBeGreaterThanOrEqual(Number(save));
    const completed = server.discord.messages.find((m) => m.body.embeds[0].title === "Backup completed");
    expect(completed?.body.embeds[0].description).toMatch(/\nsave took [\d.]+ s · autosave off for [\d.]+ s/);
    const prom = readFileSync(join(server.root, "textfiles", "mcops_backup.prom"), "utf8");
    expect(gaugeValue(prom, "mcops_backup_save_seconds")).toBeGreaterThanOrEqual(1.5);
    const [warning] = slowWarnings();
    expect(slowWarnings()).toHaveLength(1);
    expect(warning.color).toBe(COLOURS.warning);
    expect(warning.description).toMatch(/^save-all flush took [\d.]+ s before the game said "Saved the game"/);

    // The same day: logged, not posted again.
    expect((await server.run()).code).toBe(0);
    expect(slowWarnings()).toHaveLength(1);
    expect(server.backupLog()).toMatch(
      /WARN saving the world took [\d.]+ s \(BACKUP_FLUSH_WARN is 1.0 s\)[\s\S]*WARN saving the world took/,
    );

    // The next day (the remembered day is yesterday's): posted again.
    const state = join(server.root, "state", "backup-slow-save.json");
    expect(JSON.parse(readFileSync(state, "utf8"))).toEqual({ day: new Date().toISOString().slice(0, 10) });
    writeFileSync(state, JSON.stringify({ day: "2020-01-01" }));
    expect((await server.run()).code).toBe(0);
    expect(slowWarnings()).toHaveLength(2);
  }, 120_000);

  it("posts no warning for a quick save", async () => {
    server.backupEnv({ BACKUP_FLUSH_WARN: "20s" });
    expect((await server.run()).code).toBe(0);
    expect(server.backupLog()).toMatch(/; save took [\d.]+ s, autosave off for/);
    expect(slowWarnings()).toHaveLength(0);
  }, 120_000);
});
