import { systemClock } from "@mcops/core";
import { type DigitalOceanStandIn, startDigitalOceanStandIn } from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { createCloudflare } from "../src/cloudflare.ts";
import { createDigitalOcean } from "../src/digitalocean.ts";
import { newReviveRun, type ReviveDeps, reviveStep, type StepResult } from "../src/revive-steps.ts";

/**
 * The revive steps one at a time against the DigitalOcean stand-in, with the run's clock in the test's hands: the
 * bounded look for a create whose answer was lost ends when the test says, not after a wall-clock wait.
 */

let account: DigitalOceanStandIn | undefined;
afterEach(async () => {
  await account?.close();
  account = undefined;
});

const SNAPSHOT = "mcops-play.example.co.uk-2026-01-01-0000";
const RUN_A = "aaaaaaaaaaaaaaaa";
const RUN_B = "bbbbbbbbbbbbbbbb";

async function lagging(): Promise<{ stand: DigitalOceanStandIn; deps: ReviveDeps; clock: { t: number } }> {
  const stand = await startDigitalOceanStandIn({
    droplets: [],
    snapshots: [{ name: SNAPSHOT, region: "fra1" }],
    // Actions that take tens of milliseconds, as in revive's tests.
    timings: { createMs: 80, shutdownMs: 60, powerOffMs: 30, powerOnMs: 30, snapshotMs: 80 },
  });
  account = stand;
  // Every droplet created from here on is missing from the list until the test says it caught up.
  stand.lagList({ requests: Number.POSITIVE_INFINITY });
  const clock = { t: 1_000_000 };
  const deps: ReviveDeps = {
    digitalocean: createDigitalOcean({ base: stand.url, token: stand.token, clock: systemClock }),
    // Not reached: these tests end before the DNS step.
    cloudflare: createCloudflare({ base: "http://127.0.0.1:9", token: "unused", clock: systemClock }),
    serverAddr: "play.example.co.uk:25565",
    panelUrl: "https://panel.example.co.uk",
    find: {},
    server: { key: "play.example.co.uk" },
    // Tags hibernation remembered, with the tag of the run that created the droplet before.
    spec: async () => ({
      name: "mc",
      size: "s-2vcpu-4gb",
      region: "fra1",
      tags: ["mcops", "mcops-run:0123456789abcdef"],
      sshKeys: [],
    }),
    gameAddress: (ip) => `${ip}:25565`,
    answers: async () => false,
    now: () => clock.t,
    timeouts: { lostCreateMs: 60_000 },
    pollMs: 10,
  };
  return { stand, deps, clock };
}

const creates = (stand: DigitalOceanStandIn) => stand.requests.filter((r) => r.route === "POST /v2/droplets").length;

/** Steps while the run stays in `phase` (each wait taken as 10 ms), at most `max` times. */
async function stepWhile(result: StepResult, deps: ReviveDeps, phase: string, max = 500): Promise<StepResult> {
  let r = result;
  for (let i = 0; r.run.phase === phase && i < max; i++) {
    r = await reviveStep(r.run, deps);
    if (r.run.phase === phase) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return r;
}

describe("a create whose answer was lost", () => {
  it("is looked for by the run's tag until lostCreateMs; then one more is made, and the first, once listed, destroyed", async () => {
    const { stand, deps, clock } = await lagging();
    stand.inject({ kind: "status-after-effect", status: 500, route: "POST /v2/droplets" });

    let r = await reviveStep(newReviveRun(clock.t, RUN_A), deps);
    expect(r.said).toMatch(/^DigitalOcean's answer to the create was lost \(DigitalOcean answered 500 server_error/);
    expect(r.run).toMatchObject({ phase: "droplet", lostCreate: { since: clock.t, tries: 1 } });
    const [first] = stand.droplets();
    expect(first?.tags.sort()).toEqual(["mcops", "mcops-run:aaaaaaaaaaaaaaaa", "mcops-server:play_example_co_uk"]);

    // Within the bound: looked for, not created again.
    clock.t += 59_999;
    r = await reviveStep(r.run, deps);
    expect(r.run.phase).toBe("droplet");
    expect(creates(stand)).toBe(1);

    // The bound is over and nothing with the run's tag is listed: the run may create once more.
    clock.t += 1;
    r = await reviveStep(r.run, deps);
    expect(r.run.phase).toBe("active");
    expect(r.run.lostCreate).toBeUndefined();
    expect(creates(stand)).toBe(2);
    const second = r.run.dropletId;
    expect(stand.droplets().map((d) => d.id)).toEqual([first?.id, second]);

    // The list catches up: the first droplet is this run's and not the one it uses, so it goes.
    stand.catchUpList();
    r = await stepWhile(r, deps, "active");
    expect(r.run.phase).toBe("dns");
    expect(stand.droplets().map((d) => d.id)).toEqual([second]);
    expect(r.run.done.map((d) => d.text)).toContain(
      `Destroyed droplet mc (${first?.id}): a second one this run made while DigitalOcean's list lagged`,
    );
  });

  it("is found by the run's tag once listed, and not created again", async () => {
    const { stand, deps, clock } = await lagging();
    stand.inject({ kind: "status-after-effect", status: 500, route: "POST /v2/droplets" });
    let r = await reviveStep(newReviveRun(clock.t, RUN_A), deps);
    r = await reviveStep(r.run, deps);
    expect(r.run.phase).toBe("droplet");
    stand.catchUpList();
    r = await reviveStep(r.run, deps);
    expect(r.run.phase).toBe("active");
    expect(r.run.dropletId).toBe(stand.droplets()[0]?.id);
    expect(r.said).toMatch(/^Created droplet mc \(s-2vcpu-4gb, fra1\) from mcops-\S+ \(found by its tag mcops-run:a+/);
    expect(creates(stand)).toBe(1);
  });

  it("is not looked for when DigitalOcean refused it (a 422 makes nothing): the step fails as before", async () => {
    const { stand, deps, clock } = await lagging();
    stand.inject({ kind: "status", status: 422, route: "POST /v2/droplets" });
    await expect(reviveStep(newReviveRun(clock.t, RUN_A), deps)).rejects.toThrow(/^DigitalOcean answered 422/);
  });
});

describe("a second droplet of this server", () => {
  it("that another run made stops the run, and nothing is destroyed", async () => {
    const { stand, deps, clock } = await lagging();
    // Two runs (a revive and a /start, say) while the list lags: each creates one.
    const a = await reviveStep(newReviveRun(clock.t, RUN_A), deps);
    const b = await reviveStep(newReviveRun(clock.t, RUN_B), deps);
    expect(a.run.phase).toBe("active");
    expect(b.run.phase).toBe("active");
    expect(stand.droplets()).toHaveLength(2);
    stand.catchUpList();
    const [made] = stand.droplets();
    await expect(stepWhile(b, deps, "active")).rejects.toMatchObject({
      message: expect.stringMatching(
        new RegExp(
          `^2 droplets are this server's game VM: .*; mc \\(${made?.id}\\) was not made by this run \\(tag mcops-run:b+\\), so none is destroyed$`,
        ),
      ),
      hint: expect.stringContaining("destroy the one that is not the game VM"),
    });
    expect(stand.droplets()).toHaveLength(2);
  });
});
