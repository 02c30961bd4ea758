import { describe, expect, it } from "vitest";
import type { DigitalOcean } from "../src/digitalocean.ts";
import { type HibernateDeps, type HibernateRun, hibernateStep } from "../src/hibernate-steps.ts";

/**
 * The snapshot step against DigitalOcean's answers as they can fall in time: a stand-in cannot make a snapshot end
 * between two of the step's reads on purpose, so here DigitalOcean is what the step reads, one answer at a time.
 */

const STARTED = Date.parse("2026-11-21T06:12:00Z");
const DROPLET = { id: 7, name: "mc", size: "s-2vcpu-4gb", region: "fra1", tags: ["mcops"] };

function run(): HibernateRun {
  return { phase: "snapshot", startedAt: STARTED, phaseSince: STARTED + 60_000, droplet: DROPLET, done: [] };
}

/** DigitalOcean as the step reads it; each snapshot asked is counted. */
function account(actions: Array<{ status: "in-progress" | "completed" | "errored"; startedAt: number }>) {
  const asked: string[] = [];
  const digitalocean = {
    recentActions: async () =>
      actions.map((a, i) => ({
        id: i + 1,
        type: "snapshot",
        status: a.status,
        started_at: new Date(a.startedAt).toISOString(),
      })),
    // Not listed yet: the snapshot asked before is still being taken, or ended just after this read.
    snapshots: async () => [],
    action: async (_id: number, type: string, extra: Record<string, string> = {}) => {
      asked.push(`${type} ${extra.name}`);
      return { id: 99, type, status: "in-progress" as const };
    },
  } as unknown as DigitalOcean;
  const deps: HibernateDeps = {
    digitalocean,
    find: {},
    server: { key: "play.example.co.uk" },
    players: async () => 0,
    keep: 2,
    now: () => STARTED + 90_000,
    pollMs: 10,
  };
  return { deps, asked };
}

describe("the snapshot step after a step whose answer was lost", () => {
  it("waits for a snapshot this run asked (in progress, or ended but not yet listed) instead of asking a second", async () => {
    for (const status of ["in-progress", "completed"] as const) {
      const { deps, asked } = account([{ status, startedAt: STARTED + 30_000 }]);
      const step = await hibernateStep(run(), deps);
      expect(step.run.phase).toBe("snapshot");
      expect(step.waitMs).toBe(10);
      expect(asked).toEqual([]);
    }
  });

  it("asks for one when the only snapshot actions are from before the run, or errored", async () => {
    const { deps, asked } = account([
      { status: "completed", startedAt: STARTED - 86_400_000 },
      { status: "errored", startedAt: STARTED + 30_000 },
    ]);
    const step = await hibernateStep(run(), deps);
    expect(asked).toEqual(["snapshot mcops-play.example.co.uk-2026-11-21-0613"]);
    expect(step.run.snapshot).toEqual({ name: "mcops-play.example.co.uk-2026-11-21-0613" });
  });
});
