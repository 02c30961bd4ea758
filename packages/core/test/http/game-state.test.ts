import {
  type PanelStandIn,
  type PanelStandInOptions,
  startPanelStandIn,
  startUnderCachedOffline,
} from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.ts";
import { gameState, PROBE_COMMAND, stopGame } from "../../src/http/game-state.ts";
import { createPanelClient, PanelError } from "../../src/http/panel-client.ts";
import { silentLogger } from "../../src/log.ts";

let panel: PanelStandIn;

afterEach(async () => {
  await panel.close();
});

async function start(options: PanelStandInOptions): Promise<PanelStandIn> {
  panel = await startPanelStandIn({ timings: { startMs: 80, stopMs: 80 }, ...options });
  return panel;
}

const client = () =>
  createPanelClient({ url: panel.url, key: panel.apiKey, serverId: panel.server.identifier, backoffMs: 10 });

/** The console commands the panel was sent, with its answer: "list 204" (the game took it), "list 502" (not running). */
const probes = () => panel.calls.filter((c) => c.kind === "command").map((c) => `${c.command} ${c.status}`);

/** A game started through the panel just after the panel cached "offline" (a /start from Discord); calls forgotten. */
async function startedUnderCachedOffline(): Promise<{ close(): void }> {
  const scene = await startUnderCachedOffline(panel, () => "");
  panel.reset();
  return scene;
}

function logging(lines: string[]) {
  return { ...silentLogger, info: (text: string) => lines.push(text) };
}

describe("gameState", () => {
  it("takes a cached offline for what it is: the game took the probe, it runs", async () => {
    await start({ servers: [{ state: "offline" }] });
    await startedUnderCachedOffline();
    const lines: string[] = [];
    expect(await gameState(client(), { clock: systemClock, logger: logging(lines) })).toEqual({
      shown: "offline",
      state: "running",
    });
    expect(probes()).toEqual([`${PROBE_COMMAND} 204`]);
    expect(lines).toEqual([
      "the panel showed the server offline (its answer is cached for 20 s), but the game took a console command: it runs",
    ]);
  });

  it("takes Server must be online to a server shown offline as the game not running", async () => {
    await start({ servers: [{ state: "offline" }] });
    expect(await gameState(client(), { clock: systemClock })).toEqual({ shown: "offline", state: "offline" });
    expect(probes()).toEqual(["list 502"]);
    expect(panel.signals()).toEqual([]);
  });

  it("takes a server shown running whose game crashed as offline once the panel shows it so", async () => {
    await start({ servers: [{ state: "running" }], resourcesCacheMs: 200 });
    expect((await client().resources()).state).toBe("running");
    panel.setState("offline");
    expect(await gameState(client(), { clock: systemClock })).toEqual({ shown: "running", state: "offline" });
    expect(probes()).toEqual(["list 502"]);
  });

  it("refuses to tell when the panel shows the server running and a proxy in front of Wings answers 502", async () => {
    await start({ servers: [{ state: "running" }] });
    const held = panel.holdResources();
    panel.inject({ kind: "wings", status: 502, route: "command" });
    const error = await gameState(client(), { clock: systemClock, recheckTimeoutMs: 300 }).catch((e: unknown) => e);
    held.release();
    expect(error).toBeInstanceOf(PanelError);
    expect(error).toMatchObject({ kind: "wings", exitCode: 75 });
    expect((error as PanelError).message).toMatch(
      /^cannot tell whether the game runs: the panel showed the server running, its console answers "Server must be online", and the panel does not show it offline \(the server did not become offline in 0 s \(it is running\)\)$/,
    );
    expect(panel.state()).toBe("running");
  });

  it("reads Wings' own state once the panel's cache has gone when Wings cannot inspect the container (none: a prune)", async () => {
    await start({ servers: [{ state: "offline" }], resourcesCacheMs: 150 });
    panel.removeContainer();
    expect(await gameState(client(), { clock: systemClock, cacheMs: 150 })).toEqual({
      shown: "offline",
      state: "offline",
    });
    const [probe, fresh] = panel.calls.filter((c) => c.kind !== "resources" || c.at > (panel.calls[1]?.at ?? 0));
    expect(probe).toMatchObject({ kind: "command", status: 500 });
    // The state that decided was read after the cache of the first answer had gone.
    expect(fresh).toMatchObject({ kind: "resources", status: 200 });
    expect((fresh?.at ?? 0) - (probe?.at ?? 0)).toBeGreaterThanOrEqual(150);
  });

  it("says a panel that does not answer as it is, asking the game nothing", async () => {
    await start({ servers: [{ state: "offline" }] });
    const p = client();
    await panel.close();
    const error = await gameState(p, { clock: systemClock }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "network" });
    // A closed stand-in for afterEach.
    panel = await startPanelStandIn();
  });
});

describe("stopGame", () => {
  it("stops a game the panel still shows offline, and returns only once its container stopped", async () => {
    await start({ servers: [{ state: "offline" }], timings: { startMs: 80, stopMs: 400 } });
    const held = await startedUnderCachedOffline();
    await stopGame(client(), { clock: systemClock, timeoutMs: 30_000 });
    expect(panel.state()).toBe("offline");
    expect(panel.signals()).toEqual(["stop"]);
    const calls = probes();
    // The cached "offline" was never taken for the stop: the game took the probe while it stopped, then refused.
    expect(calls.at(-1)).toBe("list 502");
    expect(calls.slice(0, -1).every((c) => c === "list 204")).toBe(true);
    expect(calls.length).toBeGreaterThan(1);
    const offline = panel.stateHistory().findLast((h) => h.state === "offline")?.at ?? Number.POSITIVE_INFINITY;
    expect(panel.calls.findLast((c) => c.kind === "command")?.at).toBeGreaterThanOrEqual(offline);
    held.close();
  });

  it("sends the stop again when Wings dropped it (a start held its power lock), once the panel's answer is Wings' own", async () => {
    // The start's container runs 500 ms in: until then the start holds Wings' power lock, and the stop is dropped.
    await start({
      servers: [{ state: "offline" }],
      resourcesCacheMs: 100,
      timings: { startMs: 600, stopMs: 80, containerMs: 500 },
    });
    const p = client();
    await p.power("start");
    await panel.waitForState("starting");
    const lines: string[] = [];
    await stopGame(p, { clock: systemClock, logger: logging(lines), timeoutMs: 30_000, cacheMs: 100, pollMs: 200 });
    expect(panel.signals()).toEqual(["start", "stop", "stop"]);
    expect(panel.state()).toBe("offline");
    expect(panel.stateHistory().map((h) => h.state)).toEqual(["offline", "starting", "running", "stopping", "offline"]);
    expect(lines).toContain(
      "the server still runs: Wings did not act on the stop (a start held it); stopping it again",
    );
  });

  it("sends a harmless stop to a game already stopped, and is done at the first look", async () => {
    await start({ servers: [{ state: "offline" }] });
    await stopGame(client(), { clock: systemClock, timeoutMs: 30_000 });
    expect(panel.signals()).toEqual(["stop"]);
    expect(panel.stateHistory().map((h) => h.state)).toEqual(["offline"]);
    expect(probes()).toEqual(["list 502"]);
  });

  it("gives up after timeoutMs, saying the container still runs under a cached offline", async () => {
    await start({ servers: [{ state: "offline" }], timings: { startMs: 80, stopMs: 600_000 } });
    const held = await startedUnderCachedOffline();
    const error = await stopGame(client(), { clock: systemClock, timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "timeout" });
    expect((error as PanelError).message).toBe(
      "the server did not stop in 0 s (the panel shows it offline, but its container still runs)",
    );
    held.close();
  });
});
