import { bodiesRead, type PanelStandIn, realExchanges, startPanelStandIn } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createPanelClient,
  type PanelClientOptions,
  PanelError,
  panelEnvelopeSchema,
  serverSchema,
  startupSchema,
  statsSchema,
} from "../../src/http/panel-client.ts";
import { checkShape, POLICIES, ResponseShapeError } from "../../src/http/request.ts";
import { registerSecret } from "../../src/secrets.ts";

let panel: PanelStandIn;

function client(overrides: Partial<PanelClientOptions> = {}) {
  return createPanelClient({
    url: panel.url,
    key: panel.apiKey,
    serverId: panel.server.identifier,
    backoffMs: 10,
    ...overrides,
  });
}

async function panelError(promise: Promise<unknown>): Promise<PanelError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(PanelError);
  return error as PanelError;
}

beforeEach(async () => {
  panel = await startPanelStandIn({ timings: { startMs: 60, stopMs: 60 } });
  registerSecret(panel.apiKey);
});

afterEach(async () => {
  await panel.close();
});

describe("createPanelClient", () => {
  it("reads the server record and its live resources", async () => {
    const c = client();
    expect(await c.details()).toMatchObject({
      identifier: panel.server.identifier,
      uuid: panel.server.uuid,
      status: null,
    });
    expect(await c.resources()).toMatchObject({ state: "offline", uptimeMs: 0, isSuspended: false });
  });

  it("sends power signals and console commands, and waits for a state", async () => {
    const c = client();
    await c.power("start");
    const running = await c.waitForState("running", { timeoutMs: 30_000, pollMs: 20 });
    expect(running.state).toBe("running");
    await c.command("save-all flush");
    await c.power("stop");
    await c.waitForState(["offline"], { timeoutMs: 30_000, pollMs: 20 });
    expect(panel.signals()).toEqual(["start", "stop"]);
    expect(panel.commands()).toEqual(["save-all flush"]);
    const auth = panel.calls.every((call) => call.status !== 401);
    expect(auth).toBe(true);
  });

  it("times out waiting for a state the server never reaches, saying where it is", async () => {
    const error = await panelError(client().waitForState("running", { timeoutMs: 100, pollMs: 20 }));
    expect(error.kind).toBe("timeout");
    expect(error.message).toBe("the server did not become running in 0 s (it is offline)");
  });

  it("explains a wrong key (401) without ever showing the key", async () => {
    const wrong = `ptlc_${"w".repeat(43)}`;
    registerSecret(wrong);
    const error = await panelError(client({ key: wrong }).resources());
    expect(error.kind).toBe("auth");
    expect(error.message).toBe("the panel refused the API key (401 AuthenticationException: Unauthenticated.)");
    expect(`${error.message} ${error.where} ${error.hint}`).not.toContain(wrong);
  });

  it("explains an application key (403) and an unknown server (404)", async () => {
    const appKey = `ptla_${"a".repeat(43)}`;
    expect((await panelError(client({ key: appKey }).resources())).kind).toBe("forbidden");
    const missing = await panelError(client({ serverId: "00000000" }).resources());
    expect(missing.kind).toBe("not-found");
    expect(missing.hint).toMatch(/SERVER_ID/);
  });

  it("explains a suspended or installing server (409)", async () => {
    panel.setStatus("installing");
    const error = await panelError(client().power("start"));
    expect(error.kind).toBe("conflict");
    expect(error.detail).toBe("This server has not yet completed its installation process, please try again later.");
  });

  it("says a command needs a running server (502) and does not repeat it", async () => {
    const error = await panelError(client().command("say hello"));
    expect(error.kind).toBe("server-offline");
    expect(error.detail).toBe("Server must be online in order to send commands.");
    expect(panel.calls.filter((c) => c.kind === "command")).toHaveLength(1);
  });

  it("never takes a proxy's 502 for a stopped server: a read is repeated, then said as the panel not answering", async () => {
    panel.setState("running");
    const page = "<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>";
    panel.inject({ kind: "status", status: 502, body: page, route: "resources" });
    expect((await client().resources()).state).toBe("running");
    expect(panel.calls.filter((c) => c.kind === "resources").map((c) => c.status)).toEqual([502, 200]);

    panel.inject({ kind: "status", status: 502, body: page, route: "resources", times: 4 });
    const error = await panelError(client().resources());
    expect(error).toMatchObject({
      kind: "panel-unavailable",
      message: "the panel did not answer (502 from its proxy on /resources)",
      hint: expect.stringContaining("restarting"),
    });
    // On the console route too, a 502 page that is not the panel's own is not "the server is not running".
    panel.inject({ kind: "status", status: 502, body: page, route: "command" });
    expect((await panelError(client().command("say hi"))).kind).toBe("panel-unavailable");
  });

  it("takes Cloudflare's 520-524 in front of the panel as the panel not answering, and repeats reads", async () => {
    panel.inject({ kind: "status", status: 522, body: "error code: 522", route: "resources", times: 4 });
    const error = await panelError(client().resources());
    expect(error).toMatchObject({ kind: "panel-unavailable", status: 522 });
    expect(panel.calls.filter((c) => c.kind === "resources")).toHaveLength(4);
  });

  it("passes on a validation error (422) with the field", async () => {
    const error = await panelError(client().power("explode" as never));
    expect(error.kind).toBe("validation");
    expect(error.message).toContain("field signal");
  });

  it("waits out a 429 for Retry-After and repeats even a restart", async () => {
    panel.inject({ kind: "rate-limit", retryAfterSeconds: 1, route: "power" });
    panel.setState("running");
    const started = Date.now();
    await client().power("restart");
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(panel.calls.filter((c) => c.kind === "power").map((c) => c.status)).toEqual([429, 204]);
    expect(panel.signals()).toEqual(["restart"]);
  });

  it("gives up at once on a 429 whose Retry-After is longer than two minutes, saying when to try again", async () => {
    panel.inject({ kind: "rate-limit", retryAfterSeconds: 3600, route: "power" });
    panel.setState("running");
    // Waiting it out would run into the test's timeout.
    const error = await panelError(client().power("restart"));
    expect(error).toMatchObject({ kind: "rate-limited", hint: expect.stringContaining("try again in 3600 seconds") });
    expect(panel.signals()).toEqual([]);
  });

  it("repeats a read after a 5xx or a dropped connection, but never a restart after a 500", async () => {
    panel.inject({ kind: "status", status: 500, route: "resources" });
    panel.inject({ kind: "drop", route: "resources" });
    expect((await client().resources()).state).toBe("offline");
    expect(panel.calls.filter((c) => c.kind === "resources").map((c) => c.status)).toEqual([500, 0, 200]);

    panel.setState("running");
    panel.inject({ kind: "status", status: 500, route: "power" });
    expect((await panelError(client().power("restart"))).kind).toBe("panel-error");
    expect(panel.calls.filter((c) => c.kind === "power")).toHaveLength(1);
  });

  it("explains Wings being unreachable (504) once the tries are used up, as a fault to try again (75)", async () => {
    panel.inject({ kind: "status", status: 504, route: "resources", times: 4 });
    const error = await panelError(client().resources());
    expect(error).toMatchObject({ kind: "wings", exitCode: 75 });
    expect(error.message).toMatch(/^the panel could not get an answer from Wings: no answer \(Wings is down/);
    expect(error.hint).toMatch(/journalctl -u wings/);
    expect(panel.calls.filter((c) => c.kind === "resources")).toHaveLength(4);
  });

  it("reads Wings' status in the panel's envelope before its own: never SERVER_ID or CONTROL_KEY for a node's fault", async () => {
    panel.setState("running");
    panel.inject({ kind: "wings", status: 404, route: "power" });
    const notLoaded = await panelError(client().power("stop"));
    expect(notLoaded).toMatchObject({
      kind: "wings",
      exitCode: 75,
      status: 404,
      wingsStatus: 404,
      hint: expect.stringContaining("restart Wings"),
    });
    expect(notLoaded.message).toBe(
      'the panel could not get an answer from Wings: status 404, Wings has no such server loaded ("The requested resource does not exist on this instance")',
    );
    panel.inject({ kind: "wings", status: 403, route: "command" });
    const token = await panelError(client().command("list"));
    expect(token).toMatchObject({ kind: "wings", wingsStatus: 403, hint: expect.stringContaining("token") });
    panel.removeContainer();
    const noContainer = await panelError(client().command("save-off"));
    expect(noContainer).toMatchObject({ kind: "wings", status: 500, wingsStatus: 500, exitCode: 75 });
    expect(noContainer.message).toContain("status 500, Wings failed (the server's container may not exist)");
    // Resources keep the panel's 504 and say Wings' status in the detail; a read is tried again meanwhile.
    panel.inject({ kind: "wings", status: 404, route: "resources", times: 4 });
    const read = await panelError(client().resources());
    expect(read).toMatchObject({ kind: "wings", status: 504, wingsStatus: 404 });
    for (const error of [notLoaded, token, noContainer, read]) {
      expect(`${error.message} ${error.hint}`).not.toMatch(/SERVER_ID|CONTROL_KEY|panel.*restarting/);
    }
  });

  it("says a proxy in front of Wings (502 with no request id) apart from a stopped server", async () => {
    panel.setState("running");
    panel.inject({ kind: "wings", status: 502, route: "power" });
    const error = await panelError(client().power("restart"));
    expect(error).toMatchObject({ kind: "wings", status: 502, wingsStatus: 502, exitCode: 75 });
    expect(error.message).toContain("a proxy in front of Wings got no answer from it");
    expect(panel.calls.filter((c) => c.kind === "power")).toHaveLength(1);
  });

  it("waits longer for one try than the panel waits for Wings (its Guzzle timeout, 15 s), so the panel's 504 arrives", () => {
    expect(POLICIES.panel.timeoutMs).toBeGreaterThan(15_000);
  });

  it("reads the panel's default current_state, stopped (Wings gave no state), as offline", async () => {
    panel.setStateReported(false);
    expect((await client().resources()).state).toBe("offline");
  });

  it("says the panel cannot be reached when nothing listens", async () => {
    const url = panel.url;
    await panel.close();
    const error = await panelError(
      createPanelClient({ url, key: "k".repeat(40), serverId: "1a2b3c4d", backoffMs: 5, maxAttempts: 2 }).resources(),
    );
    expect(error).toMatchObject({
      kind: "network",
      message: "cannot reach the panel (ECONNREFUSED) after 2 tries",
      where: url,
    });
    panel = await startPanelStandIn();
  });

  it("reads the server's image, the egg's images and the startup line, and switches the image", async () => {
    const c = client();
    expect(await c.details()).toMatchObject({
      dockerImage: "ghcr.io/pterodactyl/yolks:java_21",
      permissions: ["*"],
    });
    const startup = await c.startup();
    expect(startup).toEqual({
      dockerImages: {
        "Java 21": "ghcr.io/pterodactyl/yolks:java_21",
        "Java 17": "ghcr.io/pterodactyl/yolks:java_17",
        "Java 16": "ghcr.io/pterodactyl/yolks:java_16",
        "Java 11": "ghcr.io/pterodactyl/yolks:java_11",
        "Java 8": "ghcr.io/pterodactyl/yolks:java_8",
      },
      startupCommand: "java -Xms128M -XX:MaxRAMPercentage=95.0 -jar server.jar",
      rawStartupCommand: "java -Xms128M -XX:MaxRAMPercentage=95.0 -jar {{SERVER_JARFILE}}",
    });
    await c.setDockerImage("ghcr.io/pterodactyl/yolks:java_17");
    expect(panel.dockerImage()).toBe("ghcr.io/pterodactyl/yolks:java_17");
    expect(panel.imageChanges()).toEqual([
      { from: "ghcr.io/pterodactyl/yolks:java_21", to: "ghcr.io/pterodactyl/yolks:java_17" },
    ]);
  });

  it("says an image the egg does not offer (422), one an administrator set (400) and a missing permission (403)", async () => {
    const c = client();
    const missing = await panelError(c.setDockerImage("ghcr.io/pterodactyl/yolks:java_25"));
    expect(missing).toMatchObject({ kind: "image-not-offered", exitCode: 1, status: 422 });
    expect(missing.message).toBe(
      "the panel refused the image: the egg does not offer it (422 ValidationException: The selected docker image is invalid.)",
    );
    expect(missing.hint).toContain("Nests → the egg → Docker Images");

    panel.setDockerImage("registry.example.com/custom:1");
    const locked = await panelError(c.setDockerImage("ghcr.io/pterodactyl/yolks:java_17"));
    expect(locked).toMatchObject({ kind: "image-locked", status: 400 });
    expect(locked.message).toContain("manually set by an administrator");
    expect(locked.hint).toContain("admin area (Servers → the server → Startup → Docker Image)");
    expect(panel.dockerImage()).toBe("registry.example.com/custom:1");

    await panel.close();
    panel = await startPanelStandIn({ servers: [{ permissions: ["control.console"] }] });
    const subuser = client();
    expect((await subuser.details()).permissions).toEqual(["control.console"]);
    const read = await panelError(subuser.startup());
    expect(read).toMatchObject({ kind: "forbidden", status: 403 });
    expect(read.hint).toContain("startup.read");
    const write = await panelError(subuser.setDockerImage("ghcr.io/pterodactyl/yolks:java_17"));
    expect(write.hint).toContain("startup.docker-image");
    expect(panel.imageChanges()).toEqual([]);
  });

  it("says in one line which field of which route changed when the panel answers another shape", async () => {
    const renamed = { object: "stats", attributes: { state: "running", is_suspended: false, resources: {} } };
    panel.inject({ kind: "status", status: 200, body: renamed, route: "resources" });
    const error = await client()
      .resources()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseShapeError);
    expect((error as Error).message).toBe(
      `the panel answered GET /api/client/servers/${panel.server.identifier}/resources in an unexpected shape: attributes.current_state: expected "offline" or "starting" or "running" or "stopping", got missing`.replace(
        '"stopping"',
        '"stopping" or "stopped"',
      ),
    );
    panel.inject({ kind: "status", status: 200, body: "<html>maintenance</html>", route: "details" });
    await expect(client().details()).rejects.toThrow(
      `the panel answered GET /api/client/servers/${panel.server.identifier} with something that is not JSON`,
    );
  });
});

/** Every body the client reads, the route it comes from, and the schema that reads it. */
const PANEL_READS = [
  { name: "serverSchema", schema: serverSchema, method: "GET", path: "/api/client/servers/{server}" },
  { name: "statsSchema", schema: statsSchema, method: "GET", path: "/api/client/servers/{server}/resources" },
  { name: "startupSchema", schema: startupSchema, method: "GET", path: "/api/client/servers/{server}/startup" },
].map((read) => ({ ...read, answers: "success" as const }));
const PANEL_ERROR_READS = [
  "GET /api/client/servers/{server}",
  "GET /api/client/servers/{server}/resources",
  "POST /api/client/servers/{server}/power",
  "POST /api/client/servers/{server}/command",
  "GET /api/client/servers/{server}/startup",
  "PUT /api/client/servers/{server}/settings/docker-image",
].map((route) => {
  const [method = "", path = ""] = route.split(" ");
  return { name: "panelEnvelopeSchema", schema: panelEnvelopeSchema, method, path, answers: "failure" as const };
});

describe("the client's schemas and the panel's real answers (testkit test/contracts/panel)", () => {
  const { cases, unmatched } = bodiesRead(realExchanges("panel"), [...PANEL_READS, ...PANEL_ERROR_READS]);
  const wingsErrors = realExchanges("panel")
    .filter((e) => JSON.stringify(e.response.body ?? "").includes('"DaemonConnectionException"'))
    .map((e) => [e.name, e] as const);

  it.each(wingsErrors)("says Wings' fault, to be tried again (75): %s", async (_name, real) => {
    const route = real.request.path.split("/").pop() as "resources" | "power" | "command";
    const c = client({ maxAttempts: 1 });
    const call = { resources: () => c.resources(), power: () => c.power("kill"), command: () => c.command("list") };
    panel.inject({ kind: "status", status: real.response.status, body: real.response.body, route });
    const error = await panelError((call[route] ?? call.resources)());
    expect(error, real.source).toMatchObject({ kind: "wings", exitCode: 75, status: real.response.status });
    expect(error.message).toMatch(/^the panel could not get an answer from Wings: (no answer|status \d{3}, )/);
    expect(`${error.message} ${error.hint}`).not.toMatch(/SERVER_ID|CONTROL_KEY|restarting/);
  });

  it("has a real body for every row of the table", () => {
    expect(unmatched).toEqual([]);
  });

  it.each(cases)("%s", (_name, read, real) => {
    const route = `${real.request.method} ${real.request.path}`;
    const check = () => checkShape(read.schema, real.response.body, { service: "the panel", route });
    expect(check, `${real.name} (real answer from ${real.source})`).not.toThrow();
  });
});
