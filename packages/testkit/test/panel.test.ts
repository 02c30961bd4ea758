import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startUnderCachedOffline, stopOrder } from "../src/cached-offline.ts";
import type { TempDir } from "../src/http.ts";
import { tempDir } from "../src/http.ts";
import type { PanelStandIn, PanelStandInOptions } from "../src/panel.ts";
import { startPanelStandIn } from "../src/panel.ts";

let panel: PanelStandIn | undefined;
let dir: TempDir | undefined;

afterEach(async () => {
  await panel?.close();
  panel = undefined;
  dir?.cleanup();
  dir = undefined;
});

async function start(options?: PanelStandInOptions): Promise<PanelStandIn> {
  panel = await startPanelStandIn({ timings: { startMs: 80, stopMs: 80 }, ...options });
  return panel;
}

function api(
  p: PanelStandIn,
  path: string,
  init: { method?: string; body?: unknown; key?: string | null; contentType?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { Accept: "application/json" };
  const key = init.key === undefined ? p.apiKey : init.key;
  if (key !== null) headers.Authorization = `Bearer ${key}`;
  if (init.body !== undefined) headers["Content-Type"] = init.contentType ?? "application/json";
  return fetch(`${p.url}/api/client${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    body: init.body === undefined ? undefined : typeof init.body === "string" ? init.body : JSON.stringify(init.body),
  });
}

const power = (p: PanelStandIn, signal: unknown, id = p.server.identifier) =>
  api(p, `/servers/${id}/power`, { body: { signal } });
const command = (p: PanelStandIn, cmd: unknown, id = p.server.identifier) =>
  api(p, `/servers/${id}/command`, { body: { command: cmd } });
// biome-ignore lint/suspicious/noExplicitAny: the answer's JSON as the vendor documents it; a wrong guess at its shape fails the assertion that reads it
const json = (res: Response): Promise<any> => res.json();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const LOG_LINE = /^\[\d{2}:\d{2}:\d{2}\] \[Server thread\/INFO\]: (.*)$/;
const messages = (lines: string[]) => lines.map((line) => LOG_LINE.exec(line)?.[1]);

describe("authentication", () => {
  it("generates a client key of the documented shape", async () => {
    const p = await start();
    expect(p.apiKey).toMatch(/^ptlc_[A-Za-z0-9]{43}$/);
    expect(p.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it.each([
    ["no key", null],
    ["a wrong key", "ptlc_wrong"],
  ])("answers 401 Unauthenticated with %s", async (_name, key) => {
    const p = await start();
    const res = await api(p, `/servers/${p.server.identifier}`, { key });
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await json(res)).toEqual({
      errors: [{ code: "AuthenticationException", status: "401", detail: "Unauthenticated." }],
    });
  });

  it("answers 403 to an application key", async () => {
    const p = await start();
    const res = await api(p, `/servers/${p.server.identifier}`, { key: "ptla_application" });
    expect(res.status).toBe(403);
    expect(await json(res)).toEqual({
      errors: [
        {
          code: "AccessDeniedHttpException",
          status: "403",
          detail: "You are attempting to use an application API key on an endpoint that requires a client API key.",
        },
      ],
    });
  });
});

describe("server details and resources", () => {
  it("answers the server object by short identifier and by uuid", async () => {
    const p = await start({ servers: [{ name: "Survival" }] });
    for (const id of [p.server.identifier, p.server.uuid]) {
      const res = await api(p, `/servers/${id}`);
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body.object).toBe("server");
      expect(body.meta).toEqual({ is_server_owner: true, user_permissions: ["*"] });
      expect(body.attributes).toMatchObject({
        server_owner: true,
        identifier: p.server.identifier,
        internal_id: 1,
        uuid: p.server.uuid,
        name: "Survival",
        node: "node1.example.test",
        sftp_details: { port: 2022 },
        limits: { memory: 4096, swap: 0, disk: 0, io: 500, cpu: 0, threads: null, oom_disabled: true },
        docker_image: "ghcr.io/pterodactyl/yolks:java_21",
        egg_features: ["eula", "java_version"],
        feature_limits: { databases: 0, allocations: 0, backups: 0 },
        status: null,
        is_suspended: false,
        is_installing: false,
        is_transferring: false,
      });
      // The default includes: the primary allocation and the egg's variables (panel ServerTransformer).
      const { allocations, variables } = body.attributes.relationships;
      expect(allocations).toEqual({
        object: "list",
        data: [
          {
            object: "allocation",
            attributes: { id: 1, ip: expect.any(String), ip_alias: null, port: 25565, notes: null, is_default: true },
          },
        ],
      });
      expect(variables.object).toBe("list");
      expect(variables.data.map((v: { attributes: { env_variable: string } }) => v.attributes.env_variable)).toEqual([
        "SERVER_JARFILE",
        "VANILLA_VERSION",
      ]);
    }
    expect(p.server.identifier).toBe(p.server.uuid.slice(0, 8));
  });

  it("answers 404 for an unknown server", async () => {
    const p = await start();
    const res = await api(p, "/servers/00000000");
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({
      errors: [
        {
          code: "NotFoundHttpException",
          status: "404",
          detail: "The requested resource could not be found on the server.",
        },
      ],
    });
  });

  it("reports an offline server with zero uptime", async () => {
    const p = await start();
    const res = await api(p, `/servers/${p.server.identifier}/resources`);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      object: "stats",
      attributes: {
        current_state: "offline",
        is_suspended: false,
        resources: {
          memory_bytes: 0,
          cpu_absolute: 0,
          disk_bytes: expect.any(Number),
          network_rx_bytes: 0,
          network_tx_bytes: 0,
          uptime: 0,
        },
      },
    });
  });

  it("reports a running server with growing uptime", async () => {
    let now = Date.now();
    const p = await start({ servers: [{ state: "running" }], now: () => now });
    now += 30;
    const body = await json(await api(p, `/servers/${p.server.identifier}/resources`));
    expect(body.attributes.current_state).toBe("running");
    expect(body.attributes.resources.uptime).toBe(30);
    expect(body.attributes.resources.memory_bytes).toBeGreaterThan(0);
  });

  it("reports the uptime a running server was given", async () => {
    const now = Date.now();
    const p = await start({ servers: [{ state: "running", uptimeMs: 86_400_000 }], now: () => now });
    const body = await json(await api(p, `/servers/${p.server.identifier}/resources`));
    expect(body.attributes.resources.uptime).toBe(86_400_000);
  });

  it("serves the cached resources answer until resourcesCacheMs has passed", async () => {
    const state = async (p: PanelStandIn) =>
      (await json(await api(p, `/servers/${p.server.identifier}/resources`))).attributes.current_state;
    // Cached for ten minutes: still "offline" however slow the machine is.
    const held = await startPanelStandIn({ resourcesCacheMs: 600_000 });
    try {
      expect(await state(held)).toBe("offline");
      held.setState("running");
      expect(await state(held)).toBe("offline");
    } finally {
      await held.close();
    }
    // On a clock the test moves, the cache's age is exact: cached 1 ms before resourcesCacheMs, fresh at it.
    let now = Date.now();
    const p = await start({ resourcesCacheMs: 200, now: () => now });
    expect(await state(p)).toBe("offline");
    p.setState("running");
    now += 199;
    expect(await state(p)).toBe("offline");
    now += 1;
    expect(await state(p)).toBe("running");
  });

  it("holdResources: answers what the panel cached while the game is started, whatever the clock, until released", async () => {
    const state = async (p: PanelStandIn) =>
      (await json(await api(p, `/servers/${p.server.identifier}/resources`))).attributes.current_state;
    let now = Date.now();
    const p = await start({ resourcesCacheMs: 200, now: () => now });
    const held = p.holdResources();
    // A /start just after the panel cached "offline": the game runs, its console takes commands, the cache says offline.
    expect((await power(p, "start")).status).toBe(204);
    await p.waitForState("running");
    now += 60_000;
    expect(await state(p)).toBe("offline");
    expect((await command(p, "list")).status).toBe(204);
    held.release();
    expect(await state(p)).toBe("running");
  });

  it("onRequest: sees each request with its route before it is answered", async () => {
    const p = await start();
    const seen: string[] = [];
    const stop = p.onRequest((call) => seen.push(`${call.kind} ${call.command ?? call.signal ?? ""} ${call.status}`));
    await command(p, "list");
    await power(p, "start");
    stop();
    await api(p, `/servers/${p.server.identifier}/resources`);
    expect(seen).toEqual(["command list 0", "power start 0"]);
    expect(p.calls.map((c) => c.status)).toEqual([502, 204, 200]);
  });

  it("lists the account's servers at /api/client", async () => {
    const p = await start({ servers: [{ name: "a" }, { name: "b" }] });
    const body = await json(await api(p, ""));
    expect(body.object).toBe("list");
    expect(body.data.map((s: { attributes: { name: string } }) => s.attributes.name)).toEqual(["a", "b"]);
  });
});

describe("routing", () => {
  it("answers 405 to the wrong method", async () => {
    const p = await start();
    const res = await api(p, `/servers/${p.server.identifier}/power`);
    expect(res.status).toBe(405);
    expect((await json(res)).errors[0]).toEqual({
      code: "MethodNotAllowedHttpException",
      status: "405",
      detail: `The GET method is not supported for route api/client/servers/${p.server.identifier}/power. Supported methods: POST.`,
    });
  });

  it("answers 404 to an unknown route", async () => {
    const p = await start();
    const res = await api(p, `/servers/${p.server.identifier}/backups`);
    expect(res.status).toBe(404);
    expect((await json(res)).errors[0].code).toBe("NotFoundHttpException");
  });

  it("answers 400 to malformed JSON", async () => {
    const p = await start();
    const res = await api(p, `/servers/${p.server.identifier}/power`, { body: '{"signal": "start"' });
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({
      errors: [
        {
          code: "BadRequestHttpException",
          status: "400",
          detail: "The JSON data passed in the request appears to be malformed: Syntax error",
        },
      ],
    });
    expect(p.state()).toBe("offline");
  });

  it("does not read a JSON body sent without a JSON Content-Type", async () => {
    const p = await start();
    const res = await api(p, `/servers/${p.server.identifier}/power`, {
      body: { signal: "start" },
      contentType: "text/plain",
    });
    expect(res.status).toBe(422);
    expect((await json(res)).errors[0].meta).toEqual({ source_field: "signal", rule: "required" });
  });
});

describe("power", () => {
  it("starts: offline -> starting -> running after startMs", async () => {
    const p = await start({ timings: { startMs: 120, stopMs: 50 } });
    const began = Date.now();
    const res = await power(p, "start");
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    await p.waitForState("starting", 30_000);
    await p.waitForState("running", 30_000);
    expect(Date.now() - began).toBeGreaterThanOrEqual(110);
    expect(p.signals()).toEqual(["start"]);
  });

  it("ignores start while already starting or running", async () => {
    const p = await start();
    await power(p, "start");
    await power(p, "start");
    await p.waitForState("running", 30_000);
    expect((await power(p, "start")).status).toBe(204);
    expect(p.state()).toBe("running");
    expect(messages(p.console()).filter((m) => m?.startsWith("Starting minecraft"))).toHaveLength(1);
  });

  it("stops: running -> stopping -> offline after stopMs", async () => {
    const p = await start({ servers: [{ state: "running" }], timings: { startMs: 50, stopMs: 120 } });
    const began = Date.now();
    expect((await power(p, "stop")).status).toBe(204);
    await p.waitForState("stopping", 30_000);
    await p.waitForState("offline", 30_000);
    expect(Date.now() - began).toBeGreaterThanOrEqual(110);
  });

  it("restarts a running server: stopping, offline, starting, running", async () => {
    const p = await start({ servers: [{ state: "running" }], timings: { startMs: 60, stopMs: 90 } });
    await power(p, "restart");
    await p.waitForState("stopping", 30_000);
    await p.waitForState("running", 30_000);
    const history = p.stateHistory();
    expect(history.map((h) => h.state)).toEqual(["running", "stopping", "offline", "starting", "running"]);
    const [, stopping, offline, starting, running] = history.map((h) => h.at);
    expect((offline ?? 0) - (stopping ?? 0)).toBeGreaterThanOrEqual(85);
    expect((running ?? 0) - (starting ?? 0)).toBeGreaterThanOrEqual(55);
    expect(p.signals()).toEqual(["restart"]);
  });

  it("by default, as Wings does, acts on a power signal only after answering 204, and caches resources", async () => {
    const p = await start({ servers: [{ state: "running" }] });
    expect(p.timing.powerDelayMs).toBeGreaterThan(0);
    expect(p.timing.resourcesCacheMs).toBeGreaterThan(0);
    expect((await power(p, "stop")).status).toBe(204);
    await p.waitForState("stopping", 30_000);
    const answered = p.calls.find((c) => c.kind === "power")?.answeredAt ?? Number.POSITIVE_INFINITY;
    const stopping = p.stateHistory().find((h) => h.state === "stopping")?.at ?? 0;
    expect(stopping).toBeGreaterThanOrEqual(answered);
  });

  it("acts powerDelayMs after answering; 0 acts before the answer; setState cancels a signal not acted on yet", async () => {
    const p = await start({ servers: [{ state: "running" }, { state: "running" }], powerDelayMs: 120 });
    const [a, b] = p.servers;
    expect((await power(p, "restart", a?.identifier)).status).toBe(204);
    expect(p.signals(a?.identifier)).toEqual(["restart"]);
    await p.waitForState("stopping", 30_000, a?.identifier);
    const answered = p.calls.find((c) => c.kind === "power")?.answeredAt ?? Number.POSITIVE_INFINITY;
    const stopping = p.stateHistory(a?.identifier).find((h) => h.state === "stopping")?.at ?? 0;
    expect(stopping - answered).toBeGreaterThanOrEqual(110);
    await p.waitForState("running", 30_000, a?.identifier);

    // b's signal is cancelled by setState; a's, sent after it with the same delay, fires after b's would have.
    await power(p, "stop", b?.identifier);
    p.setState("running", b?.identifier);
    await power(p, "stop", a?.identifier);
    await p.waitForState("stopping", 30_000, a?.identifier);
    expect(p.stateHistory(b?.identifier).map((h) => h.state)).toEqual(["running", "running"]);

    const instant = await startPanelStandIn({ servers: [{ state: "running" }], powerDelayMs: 0 });
    try {
      await power(instant, "stop");
      expect(instant.state()).toBe("stopping");
    } finally {
      await instant.close();
    }
  });

  it("drops a stop that comes during a start before its container runs (Wings' power lock), and answers it 204", async () => {
    // The container runs 300 ms into the start: the stop, 40 ms after its answer, comes while the start holds the lock.
    const p = await start({ timings: { startMs: 400, stopMs: 50, containerMs: 300 } });
    await power(p, "start");
    await p.waitForState("starting", 30_000);
    expect((await power(p, "stop")).status).toBe(204);
    await p.waitForState("running", 30_000);
    await sleep(100);
    expect(p.state()).toBe("running");
    expect(p.signals()).toEqual(["start", "stop"]);
    expect(p.stateHistory().map((h) => h.state)).toEqual(["offline", "starting", "running"]);
    // The lock went with the start's container: the same stop now stops the game.
    await power(p, "stop");
    await p.waitForState("offline", 30_000);
    expect(p.stateHistory().map((h) => h.state)).toEqual(["offline", "starting", "running", "stopping", "offline"]);
  });

  it("acts on a stop that comes once the start's container runs, though the game is still starting", async () => {
    const p = await start({ timings: { startMs: 600_000, stopMs: 50, containerMs: 50 } });
    await power(p, "start");
    const started = () => messages(p.console()).some((m) => m?.startsWith("Starting minecraft server version "));
    await vi.waitFor(() => expect(started()).toBe(true), { timeout: 30_000, interval: 10 });
    expect(p.state()).toBe("starting");
    await power(p, "stop");
    await p.waitForState("offline", 30_000);
    expect(p.stateHistory().map((h) => h.state)).toEqual(["offline", "starting", "stopping", "offline"]);
    expect(p.busy()).toBe(false);
  });

  it("drops a start or a stop that comes while a stop holds the lock, and a stop during a restart", async () => {
    const p = await start({ servers: [{ state: "running" }], timings: { startMs: 60, stopMs: 300 } });
    await power(p, "stop");
    await p.waitForState("stopping", 30_000);
    await power(p, "start");
    await p.waitForState("offline", 30_000);
    await sleep(100);
    expect(p.state()).toBe("offline");

    // A restart holds the lock through its stop and its start: the stop is dropped, and the server runs again.
    p.setState("running");
    await power(p, "restart");
    await p.waitForState("stopping", 30_000);
    await power(p, "stop");
    await p.waitForState("running", 30_000);
    expect(
      p
        .stateHistory()
        .map((h) => h.state)
        .slice(-4),
    ).toEqual(["stopping", "offline", "starting", "running"]);
  });

  it("a restart after a stop typed in the game's console (no power lock) starts the server once it has stopped", async () => {
    const p = await start({ servers: [{ state: "running" }], timings: { startMs: 60, stopMs: 200 } });
    await command(p, "stop");
    expect(p.state()).toBe("stopping");
    await power(p, "restart");
    await p.waitForState("offline", 30_000);
    await p.waitForState("running", 30_000);
    expect(p.stateHistory().map((h) => h.state)).toEqual(["running", "stopping", "offline", "starting", "running"]);
  });

  it("restart from offline just starts", async () => {
    const p = await start();
    await power(p, "restart");
    await p.waitForState("running", 30_000);
    expect(p.stateHistory().map((h) => h.state)).toEqual(["offline", "starting", "running"]);
    expect(messages(p.console())).not.toContain("Stopping the server");
  });

  it("kill goes offline at once, through the power lock a start holds, and cancels that start", async () => {
    // The state machine itself: signals act before the answer, so "at once" is the answer's moment.
    const p = await start({ powerDelayMs: 0 });
    await power(p, "start");
    expect(p.state()).toBe("starting");
    await power(p, "kill");
    expect(p.state()).toBe("offline");
    expect(p.busy()).toBe(false);
    // The lock went with the start: the next start is acted on.
    await power(p, "start");
    expect(p.state()).toBe("starting");
  });

  it.each([
    ["an unknown signal", "reboot", "The selected signal is invalid.", "in"],
    ["a missing signal", undefined, "The signal field is required.", "required"],
    ["an empty signal", "  ", "The signal field is required.", "required"],
  ])("answers 422 to %s", async (_name, signal, detail, rule) => {
    const p = await start();
    const res = await power(p, signal);
    expect(res.status).toBe(422);
    expect(await json(res)).toEqual({
      errors: [{ code: "ValidationException", status: "422", detail, meta: { source_field: "signal", rule } }],
    });
    expect(p.signals()).toEqual([]);
    expect(p.state()).toBe("offline");
  });

  it("waitForState rejects with a clear error on timeout", async () => {
    const p = await start();
    await expect(p.waitForState("running", 50)).rejects.toThrow(
      /did not reach "running" within 50 ms \(it is "offline"\)/,
    );
  });
});

describe("console commands", () => {
  it("answers 502 while the server is offline, and takes commands while it stops (its container still runs)", async () => {
    // "stopping" lasts until the test says otherwise: the command is sent in it, not in a race with it.
    const p = await start({ timings: { startMs: 50, stopMs: 600_000 } });
    const offline = await command(p, "say hi");
    expect(offline.status).toBe(502);
    expect(await json(offline)).toEqual({
      errors: [{ code: "HttpException", status: "502", detail: "Server must be online in order to send commands." }],
    });
    p.setState("running");
    await power(p, "stop");
    await p.waitForState("stopping", 30_000);
    expect((await command(p, "say bye")).status).toBe(204);
    expect(p.commands()).toEqual(["say bye"]);
  });

  it("answers 502 while starting until Wings has started the container, then takes commands in order", async () => {
    // "starting" lasts until the test says otherwise; the container runs 150 ms into it.
    const p = await start({ timings: { startMs: 600_000, stopMs: 50, containerMs: 150 } });
    await power(p, "start");
    await p.waitForState("starting", 30_000);
    const early = await command(p, "save-off");
    expect(early.status).toBe(502);
    expect((await json(early)).errors[0].detail).toBe("Server must be online in order to send commands.");
    // Wings has started the container once the game prints its first line.
    const started = () => messages(p.console()).some((m) => m?.startsWith("Starting minecraft server version "));
    await vi.waitFor(() => expect(started()).toBe(true), { timeout: 30_000, interval: 10 });
    expect(p.state()).toBe("starting");
    expect((await command(p, "say early")).status).toBe(204);
    p.setState("running");
    expect((await command(p, "save-all")).status).toBe(204);
    // setState("starting") is a server Wings has not started yet.
    p.setState("starting");
    expect((await command(p, "say again")).status).toBe(502);
    expect(p.commands()).toEqual(["say early", "save-all"]);
  });

  it("answers 500 in Wings' DaemonConnectionException without a container, until a start recreates it", async () => {
    const p = await start({ timings: { startMs: 50, stopMs: 50, containerMs: 10 } });
    p.removeContainer();
    const res = await command(p, "save-off");
    expect(res.status).toBe(500);
    expect((await json(res)).errors[0]).toMatchObject({
      code: "DaemonConnectionException",
      status: "500",
      detail: expect.stringMatching(
        /^There was an error while communicating with the machine running this server\. This error has been logged, please try again\. \(code: 500\) \(request_id: [0-9a-f-]{36}\)$/,
      ),
    });
    await power(p, "start");
    await p.waitForState("running", 30_000);
    expect((await command(p, "save-off")).status).toBe(204);
  });
  it.each([
    ["missing", undefined],
    ["empty", ""],
    ["blank", "   "],
  ])("answers 422 to a %s command", async (_name, cmd) => {
    const p = await start({ servers: [{ state: "running" }] });
    const res = await command(p, cmd);
    expect(res.status).toBe(422);
    expect((await json(res)).errors[0]).toMatchObject({
      detail: "The command field is required.",
      meta: { source_field: "command", rule: "required" },
    });
  });
});

describe("latest.log", () => {
  it("writes the start and stop lines in the vanilla format, creating directories", async () => {
    dir = tempDir("mcops-testkit-");
    const logFile = join(dir.path, "volumes", "uuid", "logs", "latest.log");
    const p = await start({ logFile });
    await power(p, "start");
    await p.waitForState("running", 30_000);
    await power(p, "stop");
    await p.waitForState("offline", 30_000);
    const text = readFileSync(logFile, "utf8");
    expect(text.endsWith("\n")).toBe(true);
    const lines = text.trimEnd().split("\n");
    for (const line of lines) expect(line).toMatch(LOG_LINE);
    expect(messages(lines)).toEqual([
      "Starting minecraft server version 1.21.4",
      'Done (3.512s)! For help, type "help"',
      "Stopping the server",
      "Stopping server",
      "Saving players",
      "Saving worlds",
    ]);
    expect(p.console()).toEqual(lines);
  });

  it("answers console commands the way the game does", async () => {
    dir = tempDir("mcops-testkit-");
    const logFile = join(dir.path, "latest.log");
    const p = await start({ logFile, servers: [{ state: "running" }], saveDelayMs: 40 });
    for (const cmd of ["say Restart in 5 minutes", "list", 'tellraw @a {"text":"hi"}', "save-off", "save-all flush"]) {
      expect((await command(p, cmd)).status).toBe(204);
    }
    // The save ends on the stand-in's timer: wait for it, never for a time.
    await vi.waitFor(() => expect(messages(p.console())).toContain("Saved the game"), {
      timeout: 30_000,
      interval: 10,
    });
    for (const cmd of ["save-on", "weather clear"]) await command(p, cmd);
    expect(messages(readFileSync(logFile, "utf8").trimEnd().split("\n"))).toEqual([
      "[Server] Restart in 5 minutes",
      "There are 0 of a max of 20 players online: ",
      "Automatic saving is now disabled",
      "Saving the game (this may take a moment!)",
      "Saved the game",
      "Automatic saving is now enabled",
      "Unknown or incomplete command, see below for error",
    ]);
  });

  it("says the game is saved only after its save delay", async () => {
    const p = await start({ servers: [{ state: "running" }], saveDelayMs: 3_600_000 });
    await command(p, "save-all");
    await command(p, "list");
    expect(messages(p.console())).toEqual([
      "Saving the game (this may take a moment!)",
      "There are 0 of a max of 20 players online: ",
    ]);
  });

  it("writes nothing on kill", async () => {
    dir = tempDir("mcops-testkit-");
    const logFile = join(dir.path, "latest.log");
    const p = await start({ logFile, servers: [{ state: "running" }] });
    await power(p, "kill");
    expect(existsSync(logFile)).toBe(false);
  });
});

describe("server status conflicts", () => {
  it.each([
    ["suspended", "This server is currently suspended and the functionality requested is unavailable."],
    ["installing", "This server has not yet completed its installation process, please try again later."],
    ["transferring", "This server is currently being transferred to a new machine, please try again later."],
  ] as const)("answers 409 on every route but details while %s", async (status, detail) => {
    const p = await start({ servers: [{ state: "running", status }] });
    const details = await api(p, `/servers/${p.server.identifier}`);
    expect(details.status).toBe(200);
    // A transfer is not a status value: the details say null and is_transferring.
    expect((await json(details)).attributes).toMatchObject({
      status: status === "transferring" ? null : status,
      [`is_${status}`]: true,
    });
    for (const res of [
      await api(p, `/servers/${p.server.identifier}/resources`),
      await power(p, "stop"),
      await command(p, "list"),
    ]) {
      expect(res.status).toBe(409);
      expect(await json(res)).toEqual({ errors: [{ code: "ServerStateConflictException", status: "409", detail }] });
    }
    expect(p.state()).toBe("running");
    p.setStatus(null);
    expect((await power(p, "kill")).status).toBe(204);
  });
});

describe("rate limit", () => {
  it("sends X-RateLimit-Limit and Remaining and answers 429 past the limit", async () => {
    // The window runs on a clock the test moves: which requests are still in it does not depend on the machine's load.
    let now = Date.now();
    const p = await start({ rateLimit: { limit: 5, windowMs: 500 }, now: () => now });
    const remaining: Array<string | null> = [];
    for (let i = 0; i < 5; i++) {
      const res = await api(p, `/servers/${p.server.identifier}`);
      expect(res.headers.get("x-ratelimit-limit")).toBe("5");
      remaining.push(res.headers.get("x-ratelimit-remaining"));
    }
    expect(remaining).toEqual(["4", "3", "2", "1", "0"]);
    const res = await api(p, `/servers/${p.server.identifier}`);
    expect(res.status).toBe(429);
    expect(await json(res)).toEqual({
      errors: [{ code: "ThrottleRequestsException", status: "429", detail: "Too Many Attempts." }],
    });
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(res.headers.get("x-ratelimit-reset")).toBe(String(Math.floor(now / 1000) + 1));
    now += 500;
    expect((await api(p, `/servers/${p.server.identifier}`)).status).toBe(200);
  });

  it("counts every key of the user against one window, as the panel keys it by the user", async () => {
    const other = `ptlc_${"2".repeat(43)}`;
    const p = await start({ rateLimit: { limit: 2, windowMs: 60_000 }, otherKeys: [other] });
    expect((await api(p, `/servers/${p.server.identifier}`)).status).toBe(200);
    const second = await api(p, `/servers/${p.server.identifier}`, { key: other });
    expect(second.status).toBe(200);
    expect(second.headers.get("x-ratelimit-remaining")).toBe("0");
    expect((await api(p, `/servers/${p.server.identifier}`, { key: other })).status).toBe(429);
    expect((await api(p, `/servers/${p.server.identifier}`)).status).toBe(429);
  });

  it("does not count unauthenticated requests", async () => {
    const p = await start({ rateLimit: { limit: 1, windowMs: 60_000 } });
    await api(p, `/servers/${p.server.identifier}`, { key: null });
    expect((await api(p, `/servers/${p.server.identifier}`)).status).toBe(200);
  });
});

describe("Wings' errors through the panel", () => {
  const envelope = async (res: Response) => ({ status: res.status, error: (await json(res)).errors[0] });

  it("passes Wings' status on for power and command, and keeps 504 with the code for resources", async () => {
    const p = await start({ servers: [{ state: "running" }], resourcesCacheMs: 0 });
    p.inject({ kind: "wings", status: 404 });
    expect(await envelope(await power(p, "stop"))).toEqual({
      status: 404,
      error: {
        code: "DaemonConnectionException",
        status: "404",
        detail: expect.stringMatching(
          /^An error occurred on the remote host: The requested resource does not exist on this instance\.\. \(request id: [0-9a-f-]{36}\)$/,
        ),
      },
    });
    expect(p.signals()).toEqual([]);
    p.inject({ kind: "wings", status: 403, route: "command" });
    expect(await envelope(await command(p, "list"))).toMatchObject({
      status: 403,
      error: { detail: expect.stringContaining("You are not authorized to access this endpoint.. (request id: ") },
    });
    p.inject({ kind: "wings", status: 404, route: "resources" });
    expect(await envelope(await api(p, `/servers/${p.server.identifier}/resources`))).toMatchObject({
      status: 504,
      error: { code: "DaemonConnectionException", status: "504", detail: expect.stringContaining("(code: 404)") },
    });
    // A proxy in front of Wings: no X-Request-Id, so the panel writes an empty one.
    p.inject({ kind: "wings", status: 502, route: "power" });
    expect(await envelope(await power(p, "restart"))).toMatchObject({
      status: 502,
      error: { detail: expect.stringMatching(/\(code: 502\) \(request_id: \)$/) },
    });
    // No answer at all (Wings down or past the panel's Guzzle timeout).
    p.inject({ kind: "wings", route: "command" });
    expect(await envelope(await command(p, "list"))).toMatchObject({
      status: 504,
      error: { detail: "Could not establish a connection to the machine running this server. Please try again." },
    });
    // Wings' own 502 to a command is CommandController's "Server must be online".
    p.inject({ kind: "wings", status: 502, route: "command" });
    expect(await envelope(await command(p, "list"))).toMatchObject({
      status: 502,
      error: { code: "HttpException", detail: "Server must be online in order to send commands." },
    });
    expect(p.calls.filter((c) => c.fault === "wings")).toHaveLength(6);
  });

  it("asks Wings for resources only when its cache is stale, and never on the details route", async () => {
    const p = await start({ servers: [{ state: "running" }], resourcesCacheMs: 60_000 });
    expect((await api(p, `/servers/${p.server.identifier}/resources`)).status).toBe(200);
    p.inject({ kind: "wings", status: 404 });
    expect((await api(p, `/servers/${p.server.identifier}`)).status).toBe(200);
    expect((await api(p, `/servers/${p.server.identifier}/resources`)).status).toBe(200);
    expect((await power(p, "kill")).status).toBe(404);
  });

  it("writes the panel's default current_state, stopped, when Wings' answer has no state", async () => {
    const p = await start({ servers: [{ state: "running" }] });
    p.setStateReported(false);
    const res = await json(await api(p, `/servers/${p.server.identifier}/resources`));
    expect(res.attributes.current_state).toBe("stopped");
  });
});

describe("faults", () => {
  it("answers an injected 504 with the daemon connection error, on the chosen route only", async () => {
    const p = await start({ servers: [{ state: "running" }] });
    p.inject({ kind: "status", status: 504, route: "command" });
    expect((await api(p, `/servers/${p.server.identifier}`)).status).toBe(200);
    const res = await command(p, "list");
    expect(res.status).toBe(504);
    expect(await json(res)).toEqual({
      errors: [
        {
          code: "DaemonConnectionException",
          status: "504",
          detail: "Could not establish a connection to the machine running this server. Please try again.",
        },
      ],
    });
    expect((await command(p, "list")).status).toBe(204);
    expect(p.commands()).toEqual(["list"]);
  });

  it("answers an injected 500 with the generic error, `times` times", async () => {
    const p = await start();
    p.inject({ kind: "status", status: 500, times: 2 });
    for (let i = 0; i < 2; i++) {
      const res = await power(p, "start");
      expect(res.status).toBe(500);
      expect((await json(res)).errors[0].detail).toBe(
        "An unexpected error was encountered while processing this request, please try again.",
      );
    }
    expect(p.state()).toBe("offline");
    expect((await power(p, "start")).status).toBe(204);
  });

  it("answers an injected 429 with Retry-After", async () => {
    const now = Date.now();
    const p = await start({ now: () => now });
    p.inject({ kind: "rate-limit", retryAfterSeconds: 2 });
    const res = await api(p, `/servers/${p.server.identifier}/resources`);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("2");
    expect(res.headers.get("x-ratelimit-reset")).toBe(String(Math.floor(now / 1000) + 2));
    expect((await json(res)).errors[0].code).toBe("ThrottleRequestsException");
  });

  it("drops the connection so fetch fails, and records the call with status 0", async () => {
    const p = await start();
    p.inject({ kind: "drop", route: "power" });
    await expect(power(p, "start")).rejects.toThrow();
    expect(p.state()).toBe("offline");
    expect(p.calls[0]).toMatchObject({ kind: "power", signal: "start", status: 0, fault: "drop" });
    expect((await power(p, "start")).status).toBe(204);
  });

  it("delays the answer and then does the work", async () => {
    const p = await start();
    p.inject({ kind: "delay", ms: 200 });
    const began = performance.now();
    expect((await power(p, "start")).status).toBe(204);
    expect(performance.now() - began).toBeGreaterThanOrEqual(190);
    expect(p.signals()).toEqual(["start"]);
  });
});

describe("records", () => {
  it("records every call with its kind, server, signal or command, and status", async () => {
    const p = await start({ servers: [{}, { state: "running" }] });
    const [a, b] = p.servers;
    await api(p, `/servers/${a?.uuid}`);
    await power(p, "start", a?.identifier);
    await command(p, "list", b?.identifier);
    await api(p, "/servers/ffffffff/resources");
    expect(
      p.calls.map(({ method, kind, serverId, signal, command: cmd, status }) => ({
        method,
        kind,
        serverId,
        signal,
        cmd,
        status,
      })),
    ).toEqual([
      { method: "GET", kind: "details", serverId: a?.identifier, signal: undefined, cmd: undefined, status: 200 },
      { method: "POST", kind: "power", serverId: a?.identifier, signal: "start", cmd: undefined, status: 204 },
      { method: "POST", kind: "command", serverId: b?.identifier, signal: undefined, cmd: "list", status: 204 },
      { method: "GET", kind: "resources", serverId: "ffffffff", signal: undefined, cmd: undefined, status: 404 },
    ]);
    expect(p.signals(a?.identifier)).toEqual(["start"]);
    expect(p.signals(b?.uuid)).toEqual([]);
    expect(p.commands(b?.identifier)).toEqual(["list"]);
    expect(p.state(b?.uuid)).toBe("running");
  });

  it("close ends keep-alive connections and pending transitions", async () => {
    const p = await start();
    await power(p, "start");
    await p.waitForState("starting", 30_000);
    await p.close();
    await expect(api(p, `/servers/${p.server.identifier}`)).rejects.toThrow();
    await sleep(120);
    expect(p.state()).toBe("starting");
  });
});

describe("tempDir", () => {
  it("creates a directory under the system temp dir and removes it on cleanup", () => {
    const t = tempDir("mcops-tk-");
    expect(existsSync(t.path)).toBe(true);
    expect(t.path).toContain("mcops-tk-");
    t.cleanup();
    expect(existsSync(t.path)).toBe(false);
  });
});

describe("startUnderCachedOffline and stopOrder", () => {
  it("records what the volume held at each request of a tool that stops the game, swaps, and starts it", async () => {
    const p = await start({ timings: { startMs: 80, stopMs: 200 } });
    let volume = "old";
    const scene = await startUnderCachedOffline(p, () => volume);
    const state = async () =>
      (await json(await api(p, `/servers/${p.server.identifier}/resources`))).attributes.current_state;
    expect(await state()).toBe("offline");
    expect((await command(p, "list")).status).toBe(204);
    await power(p, "stop");
    await p.waitForState("offline");
    expect((await command(p, "list")).status).toBe(502);
    volume = "new";
    scene.release();
    await power(p, "start");
    scene.close();
    expect(stopOrder(p, scene)).toEqual({
      beforeStop: ["command list 204"],
      atStop: "old",
      atStopped: "old",
      atStart: "new",
      offlineFromStoppedToStart: true,
    });
  });

  it("says the game ran between the confirmation and the start when it did", async () => {
    const p = await start({ timings: { startMs: 80, stopMs: 80 } });
    const scene = await startUnderCachedOffline(p, () => "same");
    await power(p, "stop");
    await p.waitForState("offline");
    expect((await command(p, "list")).status).toBe(502);
    p.setState("running");
    await power(p, "start");
    scene.close();
    expect(stopOrder(p, scene).offlineFromStoppedToStart).toBe(false);
  });
});
