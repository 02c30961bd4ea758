import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type TempDir, tempDir } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { IdleState } from "../src/decide.ts";
import { onBoot, readBootId, readState, writeState } from "../src/state.ts";

const BOOT = "3b0c1f9e-2a4d-4c55-8e0b-7d9f6a1e2b01";
const NEXT = "9d2e4a70-5c1b-4f3e-a6d8-0e1f2a3b4c5d";

let dir: TempDir;
beforeEach(() => {
  dir = tempDir("mcops-idle-state-");
});
afterEach(() => dir.cleanup());

/** A state saved on BOOT, idle for two hours, a hibernation asked: as a snapshot keeps it. */
const asleep: IdleState = {
  bootId: BOOT,
  lastActivity: 1_000,
  idleSince: 2_000,
  activeSince: undefined,
  lastBackupOk: 3_000,
  hibernateAsked: 4_000,
  heartbeatAt: 5_000,
  staleAlarm: 6_000,
};

describe("the boot the state was saved on", () => {
  it("starts the idle clock again on a new boot: idle period, session, hibernation asked and heartbeat forgotten", () => {
    const { state, newBoot } = onBoot(asleep, NEXT);
    expect(newBoot).toBe(true);
    expect(state).toEqual({
      ...asleep,
      bootId: NEXT,
      idleSince: undefined,
      activeSince: undefined,
      hibernateAsked: undefined,
      heartbeatAt: undefined,
    });
  });

  it("keeps everything on the same boot, on an unknown one, and takes the boot of a state that has none", () => {
    expect(onBoot(asleep, BOOT)).toEqual({ state: asleep, newBoot: false });
    expect(onBoot(asleep, undefined)).toEqual({ state: asleep, newBoot: false });
    const { bootId: _, ...older } = asleep;
    expect(onBoot(older, BOOT)).toEqual({ state: asleep, newBoot: false });
  });

  it("reads the kernel's boot id, and nothing that is not one", () => {
    const file = join(dir.path, "boot_id");
    writeFileSync(file, `${BOOT}\n`);
    expect(readBootId(file)).toBe(BOOT);
    writeFileSync(file, "not a boot id\n");
    expect(readBootId(file)).toBeUndefined();
    expect(readBootId(join(dir.path, "missing"))).toBeUndefined();
  });

  it("keeps the boot id in the state file", () => {
    const file = join(dir.path, "idle-monitor.json");
    writeState(file, asleep);
    expect(readState(file).bootId).toBe(BOOT);
    writeFileSync(file, JSON.stringify({ bootId: "../../etc" }));
    expect(readState(file).bootId).toBeUndefined();
  });
});
