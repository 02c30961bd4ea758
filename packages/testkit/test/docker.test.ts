import { randomUUID } from "node:crypto";
import { type IncomingMessage, request } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type DockerStandIn, startDockerStandIn } from "../src/docker.ts";
import { type TempDir, tempDir } from "../src/http.ts";

let dir: TempDir;
let docker: DockerStandIn;
const open: IncomingMessage[] = [];

beforeEach(async () => {
  dir = tempDir("mcops-docker-");
  docker = await startDockerStandIn({ dir: dir.path });
});

afterEach(async () => {
  for (const res of open.splice(0)) res.destroy();
  await docker.close();
  dir.cleanup();
});

/** GET on the socket; a 200 event stream stays open and collects its lines. */
function get(
  path: string,
): Promise<{ status: number; headers: IncomingMessage["headers"]; lines: string[]; body: () => string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: docker.socket, path }, (res) => {
      open.push(res);
      let text = "";
      res.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
      });
      res.on("error", () => undefined);
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        get lines() {
          return text.split("\n").filter(Boolean);
        },
        body: () => text,
      });
    });
    req.on("error", reject);
    req.end();
  });
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(condition()).toBe(true);
}

/** The example of docs.docker.com/reference/api/engine/version/v1.51/#tag/System/operation/SystemEvents. */
const REAL_EVENT = {
  Type: "container",
  Action: "create",
  Actor: {
    ID: "ede54ee1afda366ab42f824e8a5ffd195155d853ceaec74a927f249ea270c743",
    Attributes: { "com.example.some-label": "some-label-value", image: "alpine:latest", name: "my-container" },
  },
  scope: "local",
  time: 1461943101,
  timeNano: 1461943101381709600,
};

describe("Docker events stand-in", () => {
  it("streams each event as a line of JSON, shaped like Docker's, oom before die with exit code 137", async () => {
    const stream = await get(`/v1.51/events?filters=${encodeURIComponent('{"type":["container"]}')}`);
    expect(stream.status).toBe(200);
    expect(stream.headers["content-type"]).toBe("application/json");
    expect(stream.headers["api-version"]).toBe("1.51");
    const uuid = randomUUID();
    docker.oomKill(uuid);
    await until(() => stream.lines.length === 2);
    const [oom, die] = stream.lines.map((line) => JSON.parse(line));
    for (const event of [oom, die]) {
      expect(Object.keys(event).sort()).toEqual(Object.keys(REAL_EVENT).sort());
      expect(Object.keys(event.Actor).sort()).toEqual(Object.keys(REAL_EVENT.Actor).sort());
      expect(event.Actor.ID).toMatch(/^[0-9a-f]{64}$/);
      expect(event.Actor.Attributes).toMatchObject({
        name: uuid,
        Service: "Pterodactyl",
        ContainerType: "server_process",
      });
    }
    expect([oom.Action, die.Action]).toEqual(["oom", "die"]);
    expect(die.Actor.Attributes).toMatchObject({ exitCode: "137", execDuration: expect.stringMatching(/^\d+$/) });
    expect(die.timeNano).toBeGreaterThan(oom.timeNano);
    expect(oom.time).toBe(Math.floor(oom.timeNano / 1e9));
  });

  it("filters by event, container name and label, and replays what it kept with since", async () => {
    const uuid = randomUUID();
    const before = Math.floor(Date.now() / 1000);
    docker.emit(uuid, "start");
    docker.exit(uuid, 0);
    const dies = await get(
      `/events?since=${before}&filters=${encodeURIComponent(JSON.stringify({ event: { die: true }, container: [uuid] }))}`,
    );
    const labelled = await get(
      `/events?filters=${encodeURIComponent(JSON.stringify({ label: ["ContainerType=installer"] }))}`,
    );
    await until(() => dies.lines.length === 1);
    docker.oomKill(randomUUID());
    docker.oomKill(uuid);
    docker.emit(uuid, "die", { ContainerType: "installer", exitCode: "0" });
    await until(() => dies.lines.length === 3 && labelled.lines.length === 1);
    expect(dies.lines.map((l) => JSON.parse(l).Actor.Attributes.exitCode)).toEqual(["0", "137", "0"]);
    expect(docker.followers).toBe(2);
    docker.dropFollowers();
    await until(() => docker.followers === 0);
  });

  it("answers an unknown filter 400 with Docker's message, /_ping OK, anything else 404", async () => {
    const bad = await get(`/events?filters=${encodeURIComponent('{"colour":["red"]}')}`);
    await until(() => bad.body().length > 0);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body())).toEqual({ message: "invalid filter 'colour'" });
    const ping = await get("/_ping");
    await until(() => ping.body() === "OK");
    expect((await get("/containers/json")).status).toBe(404);
  });
});
