import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
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

function watch(
  clock: Clock,
  options: { uuid?: string; shortId?: string; socket?: string; retryMs?: number } = { uuid },
) {
  watching = watchContainer({
    socket: `${dir.path}/docker.sock`,
    uuid,
    ...options,
    clock,
    retryMs: options.retryMs,
    signal: abort.signal,
    logger,
    onOomKill: (kill) => kills.push(kill),
  });
}

/** An event line as Docker writes it, at a time the test chooses. */
const raw = (name: string, action: string, nano: number, extra: Record<string, string> = {}) =>
  `${JSON.stringify({ Type: "container", Action: action, Actor: { ID: `id-${name}`, Attributes: { name, ContainerType: "server_process", ...extra } }, scope: "local", time: Math.floor(nano / 1e9), timeNano: nano })}\n`;

/** A daemon on its own socket that answers each request with `answer`. */
async function daemon(
  answer: (res: import("node:http").ServerResponse) => void,
): Promise<{ socket: string; asked: () => number; close(): void }> {
  const socket = join(dir.path, `daemon-${randomUUID().slice(0, 8)}.sock`);
  let asked = 0;
  const server: Server = createServer((_req, res) => {
    asked++;
    answer(res);
  });
  await new Promise<void>((r) => server.listen(socket, r));
  return {
    socket,
    asked: () => asked,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
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
    docker.emit(uuid, "destroy"); // and the new container Wings makes for the next start
    docker.emit(uuid, "start");
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

  it("takes an oom after its die (older containerd) and out-of-order events of other containers as the kill", async () => {
    watch(gatedClock().clock);
    await following();
    docker.exit(uuid, 137);
    docker.emit(uuid, "oom"); // containerd#12372: the oom may come after the exit
    await waitUntil(() => kills.length === 1, "the kill with a late oom");
    docker.emit(uuid, "destroy");
    const t = (Date.now() + 5000) * 1e6;
    docker.writeRaw(raw(uuid, "oom", t));
    docker.writeRaw(raw(randomUUID(), "die", t + 5000, { exitCode: "0" })); // another server's, stamped later, sent first
    docker.writeRaw(raw(uuid, "die", t + 2000, { exitCode: "137", execDuration: "12" }));
    await waitUntil(() => kills.length === 2, "the kill sent out of time order");
    expect(kills[1]).toEqual({ exitCode: 137, ranSeconds: 12 });
  });

  it("does not take an oom the game outlived, then a clean stop, for a kill", async () => {
    watch(gatedClock().clock);
    await following();
    docker.emit(uuid, "oom"); // a helper process killed
    docker.exit(uuid, 0); // hours later, the panel's stop
    docker.emit(uuid, "start");
    docker.oomKill(uuid); // the marker
    await waitUntil(() => kills.length > 0, "the marker");
    expect(kills).toHaveLength(1);
  });

  it("asks from where it connected when nothing came before the stream ended, and from a saved mark", async () => {
    const marks: string[] = [];
    const gate = gatedClock();
    watchContainer({
      socket: docker.socket,
      uuid,
      clock: gate.clock,
      signal: abort.signal,
      logger,
      onOomKill: (kill) => kills.push(kill),
      onMark: (mark) => marks.push(JSON.stringify(mark)),
    });
    await following();
    docker.dropFollowers();
    await gate.idle();
    docker.oomKill(uuid); // in the gap, with nothing read before it
    await gate.retry();
    await waitUntil(() => kills.length === 1, "the kill in the gap");
    expect(docker.requests[1]?.get("since")).toMatch(/^\d+$/);
    // A new watch (the tailer restarted) from the last mark: the kill is not posted again, the next one is.
    abort.abort();
    abort = new AbortController();
    const mark = JSON.parse(marks.at(-1) as string);
    watching = watchContainer({
      socket: docker.socket,
      uuid,
      clock: gatedClock().clock,
      signal: abort.signal,
      logger,
      onOomKill: (kill) => kills.push(kill),
      mark,
    });
    await waitUntil(() => docker.requests.length === 3, "the watch of the restarted tailer");
    expect(docker.requests[2]?.get("since")).toBe(String(Math.floor(mark.sinceNano / 1e9)));
    docker.emit(uuid, "start");
    docker.oomKill(uuid);
    await waitUntil(() => kills.length === 2, "the next kill");
    expect(kills).toHaveLength(2);
  });

  it("tries again after an error answer cut midway, and ends at once when stopped while Docker says nothing", async () => {
    const cut = await daemon((res) => {
      res.writeHead(500, { "Content-Type": "application/json", "Content-Length": "1000" });
      res.write('{"message":"starting');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const gate = gatedClock();
    watch(gate.clock, { uuid, socket: cut.socket });
    await gate.retry();
    await gate.idle();
    expect(cut.asked()).toBe(2);
    expect(lines.filter((l) => l.startsWith("WARN"))).toEqual([
      expect.stringMatching(/^WARN Docker's events at .*: answered 500: .*not seen until it answers/),
    ]);
    abort.abort();
    await watching;
    cut.close();
    const silent = await daemon(() => undefined);
    abort = new AbortController();
    watch(gatedClock().clock, { uuid, socket: silent.socket });
    await waitUntil(() => silent.asked() === 1, "the request");
    abort.abort();
    await watching;
    silent.close();
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
