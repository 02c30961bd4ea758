import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { DigitalOceanStandIn } from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { hibernate, revive, startDigitalOcean, startWorld, type World } from "./harness.ts";

/** Issue 30: one server, one identity (the play host) on an account that may hold others. */

const worlds: World[] = [];
let account: DigitalOceanStandIn | undefined;
afterEach(async () => {
  await Promise.all(worlds.splice(0).map((w) => w.close()));
  await account?.close();
  account = undefined;
});

const A = { SERVER_ADDR: "play.example.co.uk:25565" };
const B = { SERVER_ADDR: "play-b.example.co.uk:25565", PANEL_URL: "https://panel-b.example.co.uk" };
const A_TAG = "mcops-server:play_example_co_uk";
const B_TAG = "mcops-server:play-b_example_co_uk";

function names(): string[] {
  return (account?.snapshots() ?? []).map((s) => s.name).sort();
}

describe("two servers on one DigitalOcean account", () => {
  it("each hibernates and revives its own world; neither prunes nor restores the other's", async () => {
    account = await startDigitalOcean({
      droplets: [
        { name: "mc-a", tags: ["mcops", A_TAG], sizeGigabytes: 30 },
        { name: "mc-b", tags: ["mcops", B_TAG], sizeGigabytes: 20 },
      ],
      // A test droplet's world of the earlier naming: neither server's.
      snapshots: [{ name: "mcops-2026-01-01-0000", createdAt: "2026-01-01T00:00:00Z" }],
    });
    const a = await startWorld({ ...A, KEEP_SNAPSHOTS: "1" }, {}, {}, {}, { digitalocean: account });
    worlds.push(a);
    const b = await startWorld({ ...B, KEEP_SNAPSHOTS: "1" }, {}, {}, {}, { digitalocean: account });
    worlds.push(b);
    const [dropletA, dropletB] = account.droplets();

    expect(await hibernate(a.ctx(), { yes: true, skipBackup: true })).toBe(0);
    expect(account.droplets().map((d) => d.name)).toEqual(["mc-b"]);
    expect(await hibernate(b.ctx(), { yes: true, skipBackup: true })).toBe(0);
    expect(account.droplets()).toEqual([]);
    // Keeping one each: both worlds are still there, and the test droplet's.
    const legacy = "mcops-2026-01-01-0000";
    const snapA = names().find((n) => n.startsWith("mcops-play.example.co.uk-"));
    const snapB = names().find((n) => n.startsWith("mcops-play-b.example.co.uk-"));
    expect(names()).toEqual([legacy, snapB, snapA]);
    const idOf = (name: string | undefined) => account?.snapshots().find((s) => s.name === name)?.id;
    expect(account.snapshots().find((s) => s.name === snapA)?.resource_id).toBe(String(dropletA?.id));
    expect(account.snapshots().find((s) => s.name === snapB)?.resource_id).toBe(String(dropletB?.id));

    const firstA = idOf(snapA);
    // B's world is the newest snapshot on the account; A still gets its own back.
    expect(await revive(a.ctx())).toBe(0);
    const revivedA = account.droplets().find((d) => d.tags.includes(A_TAG));
    expect(revivedA?.image.id).toBe(Number(idOf(snapA)));
    expect(await revive(b.ctx())).toBe(0);
    const revivedB = account.droplets().find((d) => d.tags.includes(B_TAG));
    expect(revivedB?.image.id).toBe(Number(idOf(snapB)));
    expect(account.droplets()).toHaveLength(2);

    // A hibernates again, keeping one: its own older snapshot goes, B's and the test droplet's stay.
    expect(await hibernate(a.ctx(), { yes: true, skipBackup: true })).toBe(0);
    // (By id: a second hibernation in the same minute takes the same name.)
    const after = account.snapshots().map((s) => s.id);
    expect(after).toHaveLength(3);
    expect(after).toContain(idOf(legacy));
    expect(after).toContain(idOf(snapB));
    expect(after).not.toContain(firstA);
    expect(account.droplets().map((d) => d.id)).toEqual([revivedB?.id]);
  });
});

describe("snapshots of the earlier naming (mcops-<date>)", () => {
  function remember(world: World, id: number | undefined): void {
    const droplet = { id, name: "mc", size: "s-2vcpu-4gb", region: "fra1", tags: ["mcops", "minecraft"] };
    writeFileSync(join(world.dir.path, ".mcops-state.json"), JSON.stringify(id === undefined ? {} : { droplet }));
  }

  it("revives from the one taken of the droplet hibernation remembered, not from a newer one of another droplet", async () => {
    const world = await startWorld(
      {},
      {
        droplets: [],
        snapshots: [
          { name: "mcops-2026-01-01-0000", createdAt: "2026-01-01T00:00:00Z", resourceId: 4242 },
          { name: "mcops-2026-02-01-0000", createdAt: "2026-02-01T00:00:00Z", resourceId: 5151 },
        ],
      },
    );
    worlds.push(world);
    remember(world, 4242);
    expect(await revive(world.ctx())).toBe(0);
    const [droplet] = world.digitalocean.droplets();
    const source = world.digitalocean.snapshots().find((s) => s.id === String(droplet?.image.id));
    expect(source?.name).toBe("mcops-2026-01-01-0000");
    expect(world.out.join("")).toMatch(/Created droplet mc \(s-2vcpu-4gb, fra1\) from mcops-2026-01-01-0000/);
  });

  it("does not guess whose one is when nothing says: it stops, names them, and says to rename this server's", async () => {
    const world = await startWorld(
      {},
      { droplets: [], snapshots: [{ name: "mcops-2026-02-01-0000", resourceId: 5151 }] },
    );
    worlds.push(world);
    remember(world, undefined);
    await expect(revive(world.ctx(), { size: "s-2vcpu-4gb", region: "fra1" })).rejects.toMatchObject({
      message:
        "there is no snapshot of play.example.co.uk to revive from; 1 of the earlier naming (mcops-2026-02-01-0000) was not taken of a droplet this server knows",
      hint: expect.stringContaining("rename this server's snapshot to mcops-play.example.co.uk-<its date>"),
    });
    expect(world.digitalocean.droplets()).toEqual([]);
  });
});

describe("creates that cannot double", () => {
  it("makes one droplet when the create is answered 500 after making it and the list lags behind", async () => {
    const world = await startWorld();
    worlds.push(world);
    expect(await hibernate(world.ctx(), { yes: true, skipBackup: true })).toBe(0);
    // The new droplet is missing from the next 5 list answers, and the create's answer is a 500.
    world.digitalocean.lagList({ requests: 5 });
    world.digitalocean.inject({ kind: "status-after-effect", status: 500, route: "POST /v2/droplets" });
    world.out.length = 0;
    expect(await revive(world.ctx())).toBe(0);
    expect(world.digitalocean.droplets()).toHaveLength(1);
    expect(world.digitalocean.requests.filter((r) => r.route === "POST /v2/droplets")).toHaveLength(1);
    const printed = world.out.join("");
    expect(printed).toMatch(/DigitalOcean's answer to the create was lost \(DigitalOcean answered 500 server_error/);
    expect(printed).toMatch(/Created droplet mc \(s-2vcpu-4gb, fra1\) from mcops-\S+ \(found by its tag mcops-run:/);
    // The lag was real: the run looked by its tag and did not find it at first.
    const lookups = world.digitalocean.requests.filter((r) => /tag_name=mcops-run%3A/.test(r.path));
    expect(lookups.length).toBeGreaterThan(1);
  });

  it("carries on, when run again, a revive killed after a lost create: its droplet is found as its own, not made twice", async () => {
    const world = await startWorld();
    worlds.push(world);
    expect(await hibernate(world.ctx(), { yes: true, skipBackup: true })).toBe(0);
    world.digitalocean.lagList({ requests: 4 });
    world.digitalocean.inject({ kind: "status-after-effect", status: 500, route: "POST /v2/droplets" });
    // The operator's revive dies at its first wait after the lost create (Ctrl-C, a closed laptop).
    const killed = world.ctx();
    killed.clock = {
      ...killed.clock,
      sleep: async () => {
        throw new Error("killed");
      },
    };
    await expect(revive(killed)).rejects.toThrow("killed");
    const state = () => JSON.parse(readFileSync(join(world.dir.path, ".mcops-state.json"), "utf8"));
    const { runId } = state().revive;
    expect(runId).toMatch(/^[0-9a-f]{16}$/);
    expect(world.digitalocean.droplets()[0]?.tags).toContain(`mcops-run:${runId}`);

    // Run again at once, the list still lagging: the droplet is looked for by the same run's tag and found.
    world.out.length = 0;
    expect(await revive(world.ctx())).toBe(0);
    expect(world.digitalocean.droplets()).toHaveLength(1);
    expect(world.digitalocean.requests.filter((r) => r.route === "POST /v2/droplets")).toHaveLength(1);
    expect(world.out.join("")).toContain(`(found by its tag mcops-run:${runId}`);
    // Done: the next revive is a new run.
    expect(state().revive).toBeUndefined();
  });
});
