/**
 * The Docker stand-in's container routes held to the Engine API's own answers. Each exchange in test/contracts/docker/
 * is built from moby/moby at v28.3.3 (API 1.51, the version the stand-in answers as): api/swagger.yaml's schemas and
 * examples and the daemon code that writes the answer (its `source` says where; the folder's README names the
 * snapshot and licence). It is replayed on the stand-in's Unix socket, in the state the exchange needs, and the answer
 * must have the real status, every header the real answer lists, and the real body's shape; an error's `message`
 * must be the daemon's own words, since a client shows it. A stand-in that drifts from moby fails here, naming the
 * exchange and its source.
 */
import { mkdirSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Answer, Likeness, RealExchange, ReplayState } from "../src/contract.ts";
import { contractProblems, expectLikeReal, fill, named, realExchanges } from "../src/contract.ts";
import { DOCKER_ROUTES, type DockerStandIn, startDockerStandIn } from "../src/docker.ts";
import { waitUntil } from "../src/hostile.ts";
import { type TempDir, tempDir } from "../src/http.ts";

const exchanges = realExchanges("docker");
const PREFIX = "/v1.51";
const IMAGE = "ghcr.io/pterodactyl/yolks:java_21";

/** A stand-in on a socket in its own directory, with a directory to bind; `id` is the container a state made. */
interface Stand {
  docker: DockerStandIn;
  dir: TempDir;
  work: string;
  id?: string;
}

let open: Stand[] = [];

afterEach(async () => {
  const closing = open;
  open = [];
  for (const s of closing) {
    await s.docker.close();
    s.dir.cleanup();
  }
});

async function start(): Promise<Stand> {
  const dir = tempDir("mcops-docker-contract-");
  const work = join(dir.path, "work");
  mkdirSync(work);
  const stand = { docker: await startDockerStandIn({ dir: dir.path }), dir, work };
  open.push(stand);
  return stand;
}

/** One request on the socket, its whole answer as `replay` reads one (a JSON body parsed, an empty one undefined). */
function call(
  s: Stand,
  method: string,
  path: string,
  body?: string,
  contentType = "application/json",
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: s.docker.socket, path, method }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          if (typeof value === "string") headers.set(name, value);
        const json = headers.get("content-type")?.startsWith("application/json") && text !== "";
        resolve({ status: res.statusCode ?? 0, headers, body: json ? jsonBody(text) : text === "" ? undefined : text });
      });
    });
    req.on("error", reject);
    if (body !== undefined) req.setHeader("Content-Type", contentType);
    req.end(body);
  });
}

/** A JSON answer: one value, or a stream of them (a pull's progress, a JSON object and \r\n each) as a list. */
function jsonBody(text: string): unknown {
  const values = text.split(/\r?\n/).filter((line) => line !== "");
  return values.length === 1 ? JSON.parse(text) : values.map((line) => JSON.parse(line));
}

/** The fixtures' placeholders: the state's container and the directory bound into it. */
const values = (s: Stand) => (name: string) => ({ id: s.id, dir: s.work })[name];

/** A container of the stand-in's image running `script` in sh, made as a client makes it; its id kept as `{id}`. */
async function created(s: Stand, script: string, name = ""): Promise<string> {
  const body = { Image: IMAGE, Cmd: ["sh", "-c", script], Tty: false, HostConfig: { Binds: [`${s.work}:/w`] } };
  const answer = await call(
    s,
    "POST",
    `${PREFIX}/containers/create${name ? `?name=${name}` : ""}`,
    JSON.stringify(body),
  );
  expect(answer.status).toBe(201);
  s.id = String((answer.body as { Id: unknown }).Id);
  return s.id;
}

async function running(s: Stand, script = "sleep 600"): Promise<void> {
  const id = await created(s, script);
  expect((await call(s, "POST", `${PREFIX}/containers/${id}/start`)).status).toBe(204);
}

const container = (s: Stand) => s.docker.containers.find((c) => c.id === s.id);

/** What an exchange needs: steps before, checks after, and the Content-Type its body is sent with. */
interface State extends ReplayState<never, Stand> {
  contentType?: string;
}

const STATES: Record<string, State> = {
  "create with a name in use: 409 Conflict": { before: (s) => created(s, "true", "mcops-installer").then(() => {}) },
  "create with a body that is not JSON's type: 400": { contentType: "text/plain" },
  "start: 204": {
    before: (s) => created(s, "sleep 600").then(() => {}),
    after: (s) => expect(container(s)?.state).toBe("running"),
  },
  "start of a running container: 304": { before: (s) => running(s) },
  "wait: 200 StatusCode": { before: (s) => running(s, "exit 0") },
  "wait with an unknown condition: 400": { before: (s) => created(s, "true").then(() => {}) },
  "logs of a container without a TTY: 200 multiplexed stream": {
    before: async (s) => {
      await running(s, "echo installed");
      await waitUntil(() => container(s)?.state === "exited", "the container to exit");
    },
  },
  "logs without stdout or stderr: 400": { before: (s) => created(s, "true").then(() => {}) },
  "kill: 204": {
    before: (s) => running(s),
    after: (s) => expect(container(s)?.killedWith).toBe("SIGKILL"),
  },
  "kill of a container that is not running: 409": { before: (s) => created(s, "true").then(() => {}) },
  "kill with an unknown signal: 400": { before: (s) => running(s) },
  "delete: 204": {
    before: (s) => created(s, "true").then(() => {}),
    after: (s) => expect(container(s)?.state).toBe("removed"),
  },
  "delete of a running container with force: 204": {
    before: (s) => running(s),
    after: (s) => expect([container(s)?.state, container(s)?.killedWith]).toEqual(["removed", "SIGKILL"]),
  },
  "delete of a running container without force: 409": {
    before: (s) => running(s),
    after: (s) => expect(container(s)?.state).toBe("running"),
  },
  "pull: 200 streamed progress, then the image": {
    before: (s) => expect(s.docker.images).not.toContain("ghcr.io/pterodactyl/yolks:java_22"),
    after: (s) => expect(s.docker.images).toContain("ghcr.io/pterodactyl/yolks:java_22"),
  },
};

/** Paths no route of the table has: an unknown one, and a version the daemon refuses before any route. */
const offTable = (e: RealExchange) => /page not found|client version/.test(JSON.stringify(e.response.body));

describe("the Engine API's own answers, replayed against the stand-in", () => {
  it("are named once each and on a container or image route of DOCKER_ROUTES (but the refusals before any route); each of those routes is listed once, with its source and a real exchange", () => {
    const routes = DOCKER_ROUTES.filter((r) => /^\/(containers|images)\//.test(r.path));
    const table = { routes, states: STATES, prefix: PREFIX, offTable, everyRouteReal: true };
    expect(contractProblems(exchanges, table)).toEqual([]);
  });

  it.each(named(exchanges))("%s", async (_name, real) => {
    const state = STATES[real.name] ?? {};
    const s = await start();
    await state.before?.(s);
    const body = real.request.body === undefined ? undefined : await fill(JSON.stringify(real.request.body), values(s));
    const path = await fill(real.request.path, values(s));
    const answer = await call(s, real.request.method, path, body, state.contentType);
    // A log stream's bytes are not in the fixtures.
    const likeness: Likeness = real.response.headers?.["Content-Type"]?.startsWith("application/vnd.docker")
      ? { bodyless: "any" }
      : {};
    expectLikeReal(real, answer, likeness);
    const message = (real.response.body as { message?: string } | undefined)?.message;
    if (message !== undefined)
      expect((answer.body as { message?: unknown }).message).toBe(await fill(message, values(s)));
    await state.after?.(s);
  });
});
