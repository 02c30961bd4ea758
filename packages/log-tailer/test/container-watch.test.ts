import { randomUUID } from "node:crypto";
import type { Clock } from "@mcops/core/clock";
import type { Logger } from "@mcops/core/log";
import { type DockerStandIn, startDockerStandIn, type TempDir, tempDir, waitUntil } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type OomKill, watchContainer } from "../src/container-watch.ts";

/** The watch of Docker's events, against the Docker stand-in on a real Unix socket. */
let dir: TempDir;
let docker: DockerStandIn;
let abort: AbortController;
let kills: OomKill[];
let lines: string[];
let watching: Promise<void> | undefined;
const uuid = randomUUID();
const logger = {
  info: (l: string) => lines.push(`INFO ${l}`),
  warn: (l: string) => lines.push(`WARN ${l}`),
  error: (l: string) => lines.push(`ERROR ${l}`),
} as unknown as Logger;

/** A clock whose waits between tries end only when the test lets them: it decides what happens in the gap. */
function gatedClock() {
  const waiting: Array<() => void> = [];
  const clock: Clock = {
    now: () => Date.now(),
    sleep: (_ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        waiting.push(resolve);
        signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
      }),
  };
  return {
    clock,
    /** Waits until the watch is between tries. */
    idle: () => waitUntil(() => waiting.length > 0, "the watch to wait before trying again", 10_000),
    /** Waits until the watch is between tries, then lets it try again. */
    async retry() {
      await this.idle();
      waiting.shift()?.();
    },
  };
}

function watch(clock: Clock, options: { uuid?: string; shortId?: string } = { uuid }) {
  watching = watchContainer({
    socket: `${dir.path}/docker.sock`,
    ...options,
    clock,
    signal: abort.signal,
    logger,
    onOomKill: (kill) => kills.push(kill),
  });
}

const following = (n = 1) => waitUntil(() => docker.followers === n, "the watch to follow the events", 10_000);

beforeEach(async () => {
  dir = tempDir("mcops-docker-");
  docker = await startDockerStandIn({ dir: dir.path });
  abort = new AbortController();
  kills = [];
  lines = [];
});

afterEach(async () => {
  abort.abort();
  await watching;
  watching = undefined;
  await docker.close();
  dir.cleanup();
});

describe("container watch", () => {
  it("reports a kill for memory of the server's container once: oom, then die", async () => {
    watch(gatedClock().clock);
    await following();
    docker.emit(uuid, "start");
    docker.oomKill(uuid);
    await waitUntil(() => kills.length === 1, "the kill");
    expect(kills).toEqual([{ exitCode: 137, ranSeconds: expect.any(Number) }]);
    // Only the actions that matter are asked for, from containers only.
    expect(JSON.parse(docker.requests[0]?.get("filters") ?? "")).toEqual({
      type: ["container"],
      event: ["oom", "die", "start", "destroy"],
    });
    expect(lines).toContain(`INFO following Docker's events for container ${uuid}`);
  });

  it("ignores a plain stop, another server's kill, a container without Wings' label, and an oom the process survived", async () => {
    watch(gatedClock().clock);
    await following();
    docker.exit(uuid, 0); // the panel's stop
    docker.exit(uuid, 137); // Wings' kill after its stop timeout: a kill, not for memory
    docker.oomKill(randomUUID()); // another server on the same node
    docker.emit(uuid, "oom", { ContainerType: "installer" }); // not the server's process container
    docker.emit(uuid, "die", { ContainerType: "installer", exitCode: "137" });
    docker.emit(uuid, "oom"); // a child process killed; the game lives on and is restarted later by hand
    docker.emit(uuid, "destroy");
    docker.emit(uuid, "start");
    docker.exit(uuid, 0);
    // A marker that must be reported: once it is, everything before it has been read.
    docker.oomKill(uuid);
    await waitUntil(() => kills.length > 0, "the marker");
    expect(kills).toHaveLength(1);
  });

  it("finds the container by SERVER_ID when the volume is not named by the UUID", async () => {
    watch(gatedClock().clock, { shortId: uuid.slice(0, 8) });
    await following();
    docker.oomKill(`${uuid.slice(0, 7)}${uuid[7] === "0" ? "1" : "0"}-0000-4000-8000-000000000000`); // a near miss
    docker.oomKill(uuid);
    await waitUntil(() => kills.length > 0, "the kill");
    expect(kills).toHaveLength(1);
  });

  it("skips a damaged stream's lines, however long, and reads the next event", async () => {
    watch(gatedClock().clock);
    await following();
    docker.writeRaw(`${"x".repeat(200 * 1024)}`);
    docker.writeRaw(`${"y".repeat(100 * 1024)}\nnot json\n{"Type":"container","Action":"die"}\n[1,2]\nnull\n`);
    docker.writeRaw(
      `${JSON.stringify({ Type: "container", Action: "oom", Actor: { ID: "x", Attributes: { name: uuid, ContainerType: "server_process" } }, timeNano: "soon" })}\n`,
    );
    docker.oomKill(uuid);
    await waitUntil(() => kills.length > 0, "the kill after the damage");
    expect(kills).toHaveLength(1);
  });

  it("follows the stream again after the daemon restarts, with what happened in between, nothing twice", async () => {
    const gate = gatedClock();
    watch(gate.clock);
    await following();
    docker.oomKill(uuid);
    await waitUntil(() => kills.length === 1, "the first kill");
    docker.dropFollowers();
    await waitUntil(() => lines.some((l) => l.startsWith("WARN Docker's event stream ended")), "the end said");
    // Killed again while nobody follows: the next connection asks from the last event's second and gets it.
    docker.emit(uuid, "start");
    docker.oomKill(uuid);
    await gate.retry();
    await waitUntil(() => kills.length === 2, "the kill in the gap");
    await following();
    expect(docker.requests[1]?.get("since")).toMatch(/^\d+$/);
    docker.emit(uuid, "start");
    docker.oomKill(uuid);
    await waitUntil(() => kills.length === 3, "the kill after");
    expect(kills).toHaveLength(3);
  });

  it("says once that there is no Docker socket, then follows it when Docker is there", async () => {
    await docker.close();
    const gate = gatedClock();
    watch(gate.clock);
    await gate.retry();
    await gate.retry();
    await gate.idle();
    expect(lines.filter((l) => l.startsWith("WARN"))).toEqual([
      `WARN no Docker socket at ${dir.path}/docker.sock: out-of-memory kills of the server's container are not seen until it answers (DOCKER_SOCKET=off turns this off)`,
    ]);
    docker = await startDockerStandIn({ dir: dir.path });
    await gate.retry();
    await following();
    docker.oomKill(uuid);
    await waitUntil(() => kills.length === 1, "the kill");
  });
});
