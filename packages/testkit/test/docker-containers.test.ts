import { chownSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { type IncomingHttpHeaders, request } from "node:http";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type DockerStandIn, type DockerStandInOptions, startDockerStandIn } from "../src/docker.ts";
import { waitUntil } from "../src/hostile.ts";
import { type TempDir, tempDir } from "../src/http.ts";

let dir: TempDir;
let docker: DockerStandIn;
let work: string;
const GAME = 988;
const IMAGE = "ghcr.io/pterodactyl/yolks:java_21";
const JAVA_22 = "ghcr.io/pterodactyl/yolks:java_22";
const EGGS_21 = "ghcr.io/ptero-eggs/yolks:java_21";

beforeEach(async () => {
  dir = tempDir("mcops-docker-ctr-");
  docker = await startDockerStandIn({ dir: dir.path });
  work = join(dir.path, "staging");
  mkdirSync(work);
  chownSync(work, GAME, GAME);
});

let others: DockerStandIn[] = [];

afterEach(async () => {
  for (const other of others) await other.close();
  others = [];
  await docker.close();
  dir.cleanup();
});

/** Another stand-in (another engine, other images), in a directory of its own, closed after the test. */
async function another(options: Omit<DockerStandInOptions, "dir">): Promise<DockerStandIn> {
  const own = join(dir.path, `stand-in-${others.length}`);
  mkdirSync(own);
  const stand = await startDockerStandIn({ dir: own, ...options });
  others.push(stand);
  return stand;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json: () => { message?: string } & Record<string, unknown>;
}

/** One request on the socket, its whole answer (a followed stream: until it ends). */
function call(method: string, path: string, body?: unknown): Promise<Answer> {
  return callOn(docker.socket, method, path, body);
}

function callOn(socketPath: string, method: string, path: string, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method }, (res) => {
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
    // The image's ENTRYPOINT (temurin's, which ends in exec "$@") runs the Cmd: the stand-in's script stands for it.
    expect(container?.entrypoint).toEqual(["/__cacert_entrypoint.sh"]);
    expect(container?.ran?.argv).toEqual([
      join(dir.path, "image-programs", "temurin-entrypoint"),
      "sh",
      "-c",
      `id -u > ${work}/uid; pwd; echo "$GREETING" >&2; exit 3`,
    ]);

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
    const nowhere = await create("true", { Entrypoint: ["no-such-command"], Cmd: [] });
    const refused = await call("POST", `/v1.41/containers/${nowhere}/start`);
    expect(refused.status).toBe(400);
    expect(refused.json().message).toContain('exec: "no-such-command": executable file not found in $PATH');
    const tooNew = await call("GET", "/v1.99/images/x/json");
    expect(tooNew.json().message).toBe("client version 1.99 is too new. Maximum supported API version is 1.51");
  });

  it("inspects images by their full reference; the default images are the eggs' Java images, with their config", async () => {
    for (const n of [8, 11, 16, 17, 21]) {
      const image = await call("GET", `/v1.41/images/ghcr.io/pterodactyl/yolks:java_${n}/json`);
      expect(image.status).toBe(200);
      expect(image.json().RepoTags).toEqual([`ghcr.io/pterodactyl/yolks:java_${n}`]);
      expect(image.json().Config).toMatchObject({
        // The bases pinned before temurin's entrypoint came (8u312, 11.0.13, 16) have none.
        Entrypoint: n === 17 || n === 21 ? ["/__cacert_entrypoint.sh"] : null,
        Cmd: ["/bin/bash", "/entrypoint.sh"],
        User: "container",
        WorkingDir: "/home/container",
      });
    }
    // API 1.52 leaves the Config fields that are not set out.
    const newer = await another({ engine: "29.0", images: [JAVA_22] });
    const answer = await callOn(newer.socket, "GET", `/v1.52/images/${encodeURIComponent(JAVA_22)}/json`);
    expect(answer.json().Config).toEqual({
      Entrypoint: ["/usr/bin/tini", "-g", "--", "/entrypoint.sh"],
      WorkingDir: "/home/container",
      Env: expect.arrayContaining(["USER=container", "HOME=/home/container"]),
    });
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

/** Runs a container of `image` made from `body` to its end on `socket`: its exit code and what it printed. */
async function runOn(
  socket: string,
  image: string,
  body: Record<string, unknown>,
): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const created = await callOn(socket, "POST", "/containers/create", {
    Image: image,
    User: `${GAME}:${GAME}`,
    HostConfig: { Binds: [`${work}:/home/container`] },
    ...body,
  });
  expect(created.status, created.body.toString()).toBe(201);
  const id = String(created.json().Id);
  expect((await callOn(socket, "POST", `/containers/${id}/start`)).status).toBe(204);
  const { StatusCode } = (await callOn(socket, "POST", `/containers/${id}/wait`)).json();
  const logs = frames((await callOn(socket, "GET", `/containers/${id}/logs?stdout=1&stderr=1`)).body);
  const text = (stream: number) =>
    logs
      .filter(([s]) => s === stream)
      .map(([, t]) => t)
      .join("");
  return { exitCode: Number(StatusCode), stdout: text(1), stderr: text(2) };
}

describe("Docker stand-in: the image's ENTRYPOINT and CMD merged as moby merges them", () => {
  const SCRIPT = ["sh", "-c", "echo installed > /home/container/done"];

  it('yolks java_21 (temurin\'s entrypoint, exec "$@"): a Cmd alone runs, as its arguments', async () => {
    expect(await runOn(docker.socket, IMAGE, { Cmd: SCRIPT })).toMatchObject({ exitCode: 0 });
    expect(readFileSync(join(work, "done"), "utf8")).toBe("installed\n");
    expect(docker.containers[0]).toMatchObject({ entrypoint: ["/__cacert_entrypoint.sh"], cmd: SCRIPT });
  });

  it.each([
    [JAVA_22, "env"],
    [EGGS_21, "eval"],
  ])(
    "%s (tini and entrypoint.sh): a Cmd alone is ignored, $STARTUP runs (%s), exit 0 with nothing done",
    async (image) => {
      const stand = await another({ images: [image] });
      const ran = await runOn(stand.socket, image, { Cmd: SCRIPT });
      expect(ran.exitCode).toBe(0);
      expect(existsSync(join(work, "done"))).toBe(false);
      // entrypoint.sh shows `java -version` (on stderr) and the empty command it runs.
      expect(ran.stderr).toMatch(/version "\d+/);
      expect(ran.stdout).toContain("container@pterodactyl~ ");
      expect(stand.containers[0]).toMatchObject({
        entrypoint: ["/usr/bin/tini", "-g", "--", "/entrypoint.sh"],
        cmd: SCRIPT,
      });
      // With STARTUP set it runs that ({{VAR}} read as $VAR), in the working directory.
      const started = await runOn(stand.socket, image, { Env: ["STARTUP=touch {{FILE}}", "FILE=started"] });
      expect(started.exitCode).toBe(0);
      expect(started.stdout).toContain("container@pterodactyl~ touch started");
      expect(existsSync(join(work, "started"))).toBe(true);
    },
  );

  it.each([IMAGE, JAVA_22, EGGS_21])(
    "%s: an Entrypoint of its own replaces the image's; the Cmd are its arguments",
    async (image) => {
      const stand = await another({ images: [image] });
      const ran = await runOn(stand.socket, image, { Entrypoint: ["sh"], Cmd: SCRIPT.slice(1) });
      expect(ran.exitCode).toBe(0);
      expect(readFileSync(join(work, "done"), "utf8")).toBe("installed\n");
      expect(stand.containers[0]).toMatchObject({ entrypoint: ["sh"], cmd: SCRIPT.slice(1) });
    },
  );

  it("Entrypoint [] keeps the image's out; [] with no Cmd takes the image's Cmd; [\"\"] is none; null is the image's", async () => {
    const made = async (body: Record<string, unknown>) => {
      const answer = await call("POST", "/containers/create", { Image: IMAGE, ...body });
      return { status: answer.status, message: answer.json().message, container: docker.containers.at(-1) };
    };
    expect((await made({ Entrypoint: [], Cmd: ["true"] })).container).toMatchObject({ entrypoint: [], cmd: ["true"] });
    expect((await made({ Entrypoint: [] })).container).toMatchObject({
      entrypoint: [],
      cmd: ["/bin/bash", "/entrypoint.sh"],
    });
    expect((await made({ Entrypoint: [""], Cmd: ["true"] })).container).toMatchObject({
      entrypoint: [],
      cmd: ["true"],
    });
    expect((await made({ Entrypoint: null, Cmd: ["true"] })).container).toMatchObject({
      entrypoint: ["/__cacert_entrypoint.sh"],
      cmd: ["true"],
    });
    // The image's user, working directory and Env (the container's own first) when the container sets none.
    expect((await made({ Cmd: ["true"], Env: ["HOME=/tmp"] })).container).toMatchObject({
      user: "container",
      workingDir: "/home/container",
      env: expect.arrayContaining(["HOME=/tmp", "USER=container", "JAVA_HOME=/opt/java/openjdk"]),
    });
    expect(docker.containers.at(-1)?.env).not.toContain("HOME=/home/container");
    // java_22 has neither a Cmd nor a user; with an empty Entrypoint and no Cmd, there is no command.
    const stand = await another({ images: [JAVA_22] });
    const none = await callOn(stand.socket, "POST", "/containers/create", { Image: JAVA_22, Entrypoint: [] });
    expect([none.status, none.json().message]).toEqual([400, "no command specified"]);
    expect(stand.containers).toEqual([]);
  });
});

describe("Docker stand-in: engines and their API versions", () => {
  it.each([
    ["20.10", "1.41", "Docker/20.10.24+dfsg1 (linux)"],
    ["26.1", "1.45", "Docker/26.1.5+dfsg1 (linux)"],
    ["29.0", "1.52", "Docker/29.0.0 (linux)"],
  ] as const)("%s answers /_ping with Api-Version %s", async (engine, version, server) => {
    const stand = await another({ engine });
    const ping = await callOn(stand.socket, "GET", "/_ping");
    expect([ping.status, ping.body.toString()]).toEqual([200, "OK"]);
    expect(ping.headers["api-version"]).toBe(version);
    expect(ping.headers.server).toBe(server);
  });

  it("29.0 refuses 1.41 with moby's words (its floor 1.44); 20.10 refuses 1.42 and serves 1.12", async () => {
    const newer = await another({ engine: "29.0" });
    const old = await callOn(newer.socket, "POST", "/v1.41/containers/create", { Image: IMAGE, Cmd: ["true"] });
    expect([old.status, old.json().message]).toEqual([
      400,
      "client version 1.41 is too old. Minimum supported API version is 1.44, please upgrade your client to a newer version",
    ]);
    expect(
      (await callOn(newer.socket, "POST", "/v1.44/containers/create", { Image: IMAGE, Cmd: ["true"] })).status,
    ).toBe(201);
    const debian = await another({ engine: "20.10" });
    const tooNew = await callOn(debian.socket, "GET", `/v1.42/images/${encodeURIComponent(IMAGE)}/json`);
    expect([tooNew.status, tooNew.json().message]).toEqual([
      400,
      "client version 1.42 is too new. Maximum supported API version is 1.41",
    ]);
    expect((await callOn(debian.socket, "GET", `/v1.12/images/${encodeURIComponent(IMAGE)}/json`)).status).toBe(200);
  });

  it("before API 1.30 a wait's headers come only when the container stops", async () => {
    const id = await create("while [ ! -e /home/container/go ]; do sleep 0.05; done");
    await call("POST", `/v1.29/containers/${id}/start`);
    let answered = false;
    const waited = call("POST", `/v1.29/containers/${id}/wait`).then((answer) => {
      answered = true;
      return answer;
    });
    // The current API's wait answers its headers at once: once it has, the old one would have too.
    const headers = await new Promise<number>((resolve) => {
      const req = request(
        { socketPath: docker.socket, path: `/v1.30/containers/${id}/wait`, method: "POST" },
        (res) => {
          resolve(res.statusCode ?? 0);
          res.resume();
        },
      );
      req.end();
    });
    expect(headers).toBe(200);
    expect(answered).toBe(false);
    mkdirSync(join(work, "go"));
    expect((await waited).json()).toEqual({ StatusCode: 0 });
  });
});

/** A pull's progress messages, as the daemon streams them (a JSON object and \r\n each). */
function messages(body: Buffer): Record<string, unknown>[] {
  const text = body.toString();
  expect(text.endsWith("\r\n")).toBe(true);
  return text
    .split("\r\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

describe("Docker stand-in: images absent until pulled", () => {
  const pull = (socket: string, name: string, tag: string) =>
    callOn(socket, "POST", `/images/create?fromImage=${encodeURIComponent(name)}&tag=${tag}`);

  it("a registry's image is absent until pulled; the pull streams per-layer progress, then it is there", async () => {
    const stand = await another({ images: ["ghcr.io/pterodactyl/yolks:java_17"] });
    const missing = await callOn(stand.socket, "POST", "/containers/create", { Image: IMAGE, Cmd: ["true"] });
    expect([missing.status, missing.json().message]).toEqual([404, `No such image: ${IMAGE}`]);
    const pulled = await pull(stand.socket, "ghcr.io/pterodactyl/yolks", "java_21");
    expect(pulled.status).toBe(200);
    expect(pulled.headers["content-type"]).toBe("application/json");
    const stream = messages(pulled.body);
    expect(stream[0]).toEqual({ status: "Pulling from pterodactyl/yolks", id: "java_21" });
    const complete = stream.filter((m) => m.status === "Pull complete");
    expect(complete).toHaveLength(5);
    // Many progress bars per layer: what a client must not log one by one.
    expect(stream.filter((m) => m.status === "Downloading").length).toBeGreaterThan(50);
    expect(stream.at(-2)?.status).toMatch(/^Digest: sha256:[0-9a-f]{64}$/);
    expect(stream.at(-1)).toEqual({ status: `Status: Downloaded newer image for ${IMAGE}` });
    expect(stand.images).toContain(IMAGE);
    expect((await callOn(stand.socket, "POST", "/containers/create", { Image: IMAGE, Cmd: ["true"] })).status).toBe(
      201,
    );
    // Again: up to date, no layer.
    const again = messages((await pull(stand.socket, "ghcr.io/pterodactyl/yolks", "java_21")).body);
    expect(again.map((m) => m.status)).toEqual([
      "Pulling from pterodactyl/yolks",
      expect.stringMatching(/^Digest: /),
      `Status: Image is up to date for ${IMAGE}`,
    ]);
  });

  it("answers a pull the registry cannot give as moby does: 404 a missing tag, 500 an unknown repository, 400 no reference", async () => {
    const tag = await pull(docker.socket, "ghcr.io/pterodactyl/yolks", "java_99");
    expect([tag.status, tag.json().message]).toEqual([
      404,
      "manifest for ghcr.io/pterodactyl/yolks:java_99 not found: manifest unknown: manifest unknown",
    ]);
    const repository = await pull(docker.socket, "ghcr.io/someone/yolks", "java_21");
    expect([repository.status, repository.json().message]).toEqual([
      500,
      'Head "https://ghcr.io/v2/someone/yolks/manifests/java_21": unauthorized',
    ]);
    const hub = await pull(docker.socket, "someone/yolks", "java_21");
    expect([hub.status, hub.json().message]).toEqual([
      404,
      "pull access denied for someone/yolks, repository does not exist or may require 'docker login': denied: requested access to the resource is denied",
    ]);
    const tilde = await pull(docker.socket, "~ghcr.io/pterodactyl/yolks", "java_21");
    expect([tilde.status, tilde.json().message]).toEqual([400, "invalid reference format"]);
    const create = await call("POST", "/containers/create", { Image: `~${IMAGE}`, Cmd: ["true"] });
    expect([create.status, create.json().message]).toEqual([400, "invalid reference format"]);
  });

  it("injected: an unreachable registry is 500 before any output; a stream that breaks has the error in it", async () => {
    const stand = await another({ images: [] });
    stand.injectPull({ kind: "unreachable" });
    const unreachable = await pull(stand.socket, "ghcr.io/pterodactyl/yolks", "java_21");
    expect([unreachable.status, unreachable.json().message]).toEqual([
      500,
      'Get "https://ghcr.io/v2/": dial tcp: lookup ghcr.io: no such host',
    ]);
    stand.injectPull({ kind: "midway", message: "read tcp: connection reset by peer" });
    const broken = await pull(stand.socket, "ghcr.io/pterodactyl/yolks", "java_21");
    expect(broken.status).toBe(200);
    expect(messages(broken.body).at(-1)).toEqual({
      errorDetail: { message: "read tcp: connection reset by peer" },
      error: "read tcp: connection reset by peer",
    });
    expect(stand.images).toEqual([]);
    expect((await pull(stand.socket, "ghcr.io/pterodactyl/yolks", "java_21")).status).toBe(200);
    expect(stand.images).toEqual([IMAGE]);
  });
});
