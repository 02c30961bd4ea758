import { createServer } from "node:http";
import { join } from "node:path";
import { JobError } from "@mcops/core/errors";
import { type TempDir, tempDir } from "@mcops/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { DockerSocket, MAX_API, negotiatedVersion } from "../src/docker-socket.ts";

describe("negotiatedVersion (moby client NegotiateAPIVersion)", () => {
  it.each([
    ["1.41", "1.41"],
    ["1.45", "1.45"],
    ["1.52", "1.52"],
    ["1.56", MAX_API],
    ["2.0", MAX_API],
    [undefined, "1.24"],
    ["not a version", "1.24"],
  ])("the engine says %s: %s", (engine, version) => {
    expect(negotiatedVersion(engine)).toBe(version);
  });
});

describe("DockerSocket", () => {
  let dir: TempDir | undefined;
  afterEach(() => dir?.cleanup());

  /** A daemon on a socket that answers every request 200 with these headers, counting them by path. */
  async function daemon(headers: Record<string, string>) {
    dir = tempDir("mcops-docker-socket-");
    const socket = join(dir.path, "docker.sock");
    const paths: string[] = [];
    const server = createServer((req, res) => {
      paths.push(req.url ?? "");
      res.writeHead(200, { "Content-Type": "application/json", ...headers });
      res.end("{}");
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    return { socket, paths, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  it("pings once, then asks every request at the negotiated version", async () => {
    const d = await daemon({ "Api-Version": "1.45" });
    const docker = new DockerSocket(d.socket);
    await docker.call("GET", "/images/x/json");
    await docker.call("DELETE", "/containers/abc?force=1");
    await d.close();
    expect(d.paths).toEqual(["/_ping", "/v1.45/images/x/json", "/v1.45/containers/abc?force=1"]);
  });

  it("an engine whose ping says no version (older than API 1.25) is refused: its waits answer only at the end", async () => {
    const d = await daemon({});
    const error = await new DockerSocket(d.socket).call("GET", "/images/x/json").catch((e: unknown) => e);
    await d.close();
    expect(error).toBeInstanceOf(JobError);
    expect((error as JobError).message).toBe("Docker's Engine API is 1.24, older than the 1.30 loader installs need");
    expect(d.paths).toEqual(["/_ping"]);
  });
});
