import { chownSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { type IncomingHttpHeaders, request } from "node:http";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type DockerStandIn, startDockerStandIn } from "../src/docker.ts";
import { waitUntil } from "../src/hostile.ts";
import { type TempDir, tempDir } from "../src/http.ts";

let dir: TempDir;
let docker: DockerStandIn;
let work: string;
const GAME = 988;
const IMAGE = "ghcr.io/pterodactyl/yolks:java_21";

beforeEach(async () => {
  dir = tempDir("mcops-docker-ctr-");
  docker = await startDockerStandIn({ dir: dir.path });
  work = join(dir.path, "staging");
  mkdirSync(work);
  chownSync(work, GAME, GAME);
});

afterEach(async () => {
  await docker.close();
  dir.cleanup();
});

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json: () => { message?: string } & Record<string, unknown>;
}

/** One request on the socket, its whole answer (a followed stream: until it ends). */
function call(method: string, path: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: docker.socket, path, method }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const all = Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: all,
          json: () => JSON.parse(all.toString()),
        });
      });
    });
    req.on("error", reject);
    if (body !== undefined) req.setHeader("Content-Type", "application/json");
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** Creates a container running `script` in sh as the game's user, the staging directory at /home/container. */
async function create(script: string, extra: Record<string, unknown> = {}, name = ""): Promise<string> {
  const answer = await call("POST", `/v1.41/containers/create${name ? `?name=${name}` : ""}`, {
    Image: IMAGE,
    Cmd: ["sh", "-c", script],
    User: `${GAME}:${GAME}`,
    WorkingDir: "/home/container",
    Env: ["GREETING=hello"],
    Labels: { Service: "mcops", ContainerType: "mcops_installer" },
    Tty: false,
    HostConfig: { Binds: [`${work}:/home/container`], NetworkMode: "bridge" },
    ...extra,
  });
  expect(answer.status).toBe(201);
  expect(answer.json().Warnings).toEqual([]);
  return String(answer.json().Id);
}

/** The stdcopy frames of a log stream: [stream, text] each. */
function frames(bytes: Buffer): [number, string][] {
  const out: [number, string][] = [];
  for (let at = 0; at + 8 <= bytes.length; ) {
    const size = bytes.readUInt32BE(at + 4);
    out.push([bytes[at] ?? -1, bytes.subarray(at + 8, at + 8 + size).toString()]);
    at += 8 + size;
  }
  return out;
}

describe("Docker stand-in: containers", () => {
  it("runs the command here as the container's user in the bind's source, paths mapped, exit code to wait", async () => {
    const id = await create('id -u > /home/container/uid; pwd; echo "$GREETING" >&2; exit 3');
    expect((await call("POST", `/v1.41/containers/${id}/start`)).status).toBe(204);
    const waited = await call("POST", `/v1.41/containers/${id}/wait`);
    expect(waited.json()).toEqual({ StatusCode: 3 });
    expect(readFileSync(join(work, "uid"), "utf8").trim()).toBe(String(GAME));
    expect(statSync(join(work, "uid")).uid).toBe(GAME);
    const [container] = docker.containers;
    expect(container).toMatchObject({ id, image: IMAGE, user: "988:988", state: "exited", exitCode: 3 });
    expect(container?.binds).toEqual([{ source: work, target: "/home/container", readOnly: false }]);
    expect(container?.ran?.argv).toEqual(["sh", "-c", `id -u > ${work}/uid; pwd; echo "$GREETING" >&2; exit 3`]);

    // API 1.41: frames, but labelled raw-stream, as moby does before 1.42.
    const logs = await call("GET", `/v1.41/containers/${id}/logs?stdout=1&stderr=1`);
    expect(logs.headers["content-type"]).toBe("application/vnd.docker.raw-stream");
    const got = frames(logs.body);
    expect(got).toContainEqual([1, `${work}\n`]);
    expect(got).toContainEqual([2, "hello\n"]);
    const current = await call("GET", `/containers/${id}/logs?stderr=1`);
    expect(current.headers["content-type"]).toBe("application/vnd.docker.multiplexed-stream");
    expect(frames(current.body)).toEqual([[2, "hello\n"]]);
  });

  it("follows the logs of a running container until it ends; a Tty container's are raw", async () => {
    const id = await create("echo one; while [ ! -e /home/container/go ]; do sleep 0.05; done; echo two", {
      Tty: true,
    });
    await call("POST", `/v1.41/containers/${id}/start`);
    const followed = call("GET", `/v1.41/containers/${id}/logs?stdout=1&stderr=1&follow=1`);
    await waitUntil(() => docker.containers[0]?.output.length === 1, "the first line");
    mkdirSync(join(work, "go"));
    const logs = await followed;
    expect(logs.body.toString()).toBe("one\ntwo\n");
  });

  it("kills (409 when not running) and removes (409 running without force; force kills)", async () => {
    const id = await create("sleep 600");
    // moby's words: errNotRunning wrapped by postContainersKill (the swagger's example is an older text).
    expect((await call("POST", `/v1.41/containers/${id}/kill`)).json().message).toBe(
      `cannot kill container: ${id}: container ${id} is not running`,
    );
    await call("POST", `/v1.41/containers/${id}/start`);
    expect((await call("POST", `/v1.41/containers/${id}/start`)).status).toBe(304);
    const running = await call("DELETE", `/v1.41/containers/${id}`);
    expect(running.status).toBe(409);
    expect(running.json().message).toBe(
      `cannot remove container "${id}": container is running: stop the container before removing or force remove`,
    );
    const waited = call("POST", `/v1.41/containers/${id.slice(0, 12)}/wait`);
    expect((await call("POST", `/v1.41/containers/${id}/kill?signal=SIGKILL`)).status).toBe(204);
    expect((await waited).json()).toEqual({ StatusCode: 137 });
    expect((await call("DELETE", `/v1.41/containers/${id}?force=1`)).status).toBe(204);
    expect(docker.containers[0]).toMatchObject({ state: "removed", killedWith: "SIGKILL" });
    expect((await call("POST", `/v1.41/containers/${id}/start`)).json().message).toBe(`No such container: ${id}`);

    const second = await create("sleep 600");
    await call("POST", `/v1.41/containers/${second}/start`);
    expect((await call("DELETE", `/v1.41/containers/${second}?force=1`)).status).toBe(204);
    expect(docker.containers[1]).toMatchObject({ state: "removed", exitCode: 137 });
    expect(docker.calls.map((c) => `${c.method} ${c.status}`).slice(-2)).toEqual(["POST 204", "DELETE 204"]);
  });

  it("answers Docker's errors: no such image, a name in use, a command not in PATH, an unsupported version", async () => {
    const missing = await call("POST", "/v1.41/containers/create", { Image: "eclipse-temurin:21-jre", Cmd: ["java"] });
    expect(missing.status).toBe(404);
    expect(missing.json().message).toBe("No such image: eclipse-temurin:21-jre");
    const id = await create("true", {}, "mcops-installer");
    const again = await call("POST", "/v1.41/containers/create?name=mcops-installer", { Image: IMAGE, Cmd: ["true"] });
    expect(again.status).toBe(409);
    expect(again.json().message).toBe(
      `Conflict. The container name "/mcops-installer" is already in use by container "${id}". You have to remove (or rename) that container to be able to reuse that name.`,
    );
    const nowhere = await create("true", { Cmd: ["no-such-command"] });
    const refused = await call("POST", `/v1.41/containers/${nowhere}/start`);
    expect(refused.status).toBe(400);
    expect(refused.json().message).toContain('exec: "no-such-command": executable file not found in $PATH');
    const tooNew = await call("GET", "/v1.99/images/x/json");
    expect(tooNew.json().message).toBe("client version 1.99 is too new. Maximum supported API version is 1.51");
  });

  it("inspects images by their full reference; the default images are the eggs' Java images", async () => {
    for (const n of [8, 11, 16, 17, 21]) {
      const image = await call("GET", `/v1.41/images/ghcr.io/pterodactyl/yolks:java_${n}/json`);
      expect(image.status).toBe(200);
      expect(image.json().RepoTags).toEqual([`ghcr.io/pterodactyl/yolks:java_${n}`]);
    }
    const missing = await call("GET", `/v1.41/images/${encodeURIComponent("ghcr.io/pterodactyl/yolks:java_25")}/json`);
    expect(missing.status).toBe(404);
    expect(missing.json().message).toBe("No such image: ghcr.io/pterodactyl/yolks:java_25");
  });

  it("sends the containers' own events on /events: create, start, die with the exit code, destroy", async () => {
    const lines: string[] = [];
    const req = request({ socketPath: docker.socket, path: "/v1.41/events" }, (res) =>
      res.on("data", (chunk: Buffer) => lines.push(...chunk.toString().split("\n").filter(Boolean))),
    );
    req.end();
    await waitUntil(() => docker.followers === 1, "the event stream");
    const id = await create("exit 4");
    await call("POST", `/v1.41/containers/${id}/start`);
    await call("POST", `/v1.41/containers/${id}/wait`);
    await call("DELETE", `/v1.41/containers/${id}`);
    await waitUntil(() => lines.length === 4, "four events");
    const events = lines.map((line) => JSON.parse(line));
    expect(events.map((e) => e.Action)).toEqual(["create", "start", "die", "destroy"]);
    expect(events[2].Actor).toMatchObject({ ID: id, Attributes: { ContainerType: "mcops_installer", exitCode: "4" } });
    req.destroy();
  });
});
