import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { type Clock, systemClock } from "@mcops/core/clock";
import { type Paths, resolvePaths } from "@mcops/core/paths";
import {
  type DiscordStandIn,
  type PanelStandIn,
  startDiscordStandIn,
  startPanelStandIn,
  type TempDir,
  tempDir,
  toolEnv,
  waitUntil,
} from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { passwdFile, setPassword } from "../src/passwd.ts";
import { type Dashboard, startDashboard } from "../src/server.ts";
import { serveSettings } from "../src/settings.ts";

/** The server in this process, driven over real HTTP on 127.0.0.1 (the browser tests drive the built executable). */
const PASSWORD = "correct horse battery";
const CHEAP = { ln: 10, r: 8, p: 1 };

let dir: TempDir;
let env: NodeJS.ProcessEnv;
let paths: Paths;
let discord: DiscordStandIn;
let panel: PanelStandIn;
let dashboard: Dashboard;
let stderr: string;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  ms: number;
}

function call(
  method: string,
  path: string,
  options: { auth?: string | false; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  const auth = options.auth === undefined ? `admin:${PASSWORD}` : options.auth;
  if (auth) headers.authorization = `Basic ${Buffer.from(auth).toString("base64")}`;
  if (options.body !== undefined) headers["content-length"] = String(Buffer.byteLength(options.body));
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${dashboard.url}${path}`, { method, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, ms: Date.now() - started }),
      );
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/** Loads the page like a browser: its session cookie and the form's token. */
async function openPage(): Promise<{ cookie: string; csrf: string; version: string; body: string }> {
  const page = await call("GET", "/");
  expect(page.status).toBe(200);
  const cookie = String(page.headers["set-cookie"]).split(";")[0] as string;
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1] as string;
  const version = /name="version" value="([^"]+)"/.exec(page.body)?.[1] as string;
  return { cookie, csrf, version, body: page.body };
}

function postForm(path: string, cookie: string, fields: Array<[string, string]>, headers: Record<string, string> = {}) {
  const host = new URL(dashboard.url).host;
  return call("POST", path, {
    headers: {
      cookie,
      origin: `http://${host}`,
      "content-type": "application/x-www-form-urlencoded",
      ...headers,
    },
    body: new URLSearchParams(fields).toString(),
  });
}

const webhookJson = () => join(paths.configDir, "webhook.json");

beforeEach(async () => {
  dir = tempDir("mcops-dashboard-server-");
  env = toolEnv(dir.path);
  paths = resolvePaths(env);
  mkdirSync(paths.configDir, { recursive: true });
  await setPassword(passwdFile(paths), "admin", PASSWORD, CHEAP);
  discord = await startDiscordStandIn();
  // Up for two hours already: the page has an uptime to show without waiting for one to build up.
  panel = await startPanelStandIn({ servers: [{ state: "running", uptimeMs: 2 * 3_600_000 }] });
  writeFileSync(
    join(paths.configDir, "backup.env"),
    `CONTROL_URL=${panel.url}\nCONTROL_KEY=${panel.apiKey}\nSERVER_ID=${panel.server.identifier}\nGAME_ADDRESS=127.0.0.1:9\n`,
    { mode: 0o600 },
  );
  stderr = "";
  dashboard = await start(env);
});

function start(environment: NodeJS.ProcessEnv, clock: Clock = systemClock): Promise<Dashboard> {
  const ctx = { paths, env: environment, clock, stderr: { write: (t: string) => (stderr += t) } };
  return startDashboard(ctx, serveSettings(ctx), {
    listen: "127.0.0.1:0",
    throttle: { baseMs: 300, maxMs: 1200 },
    statusCacheMs: 0,
  });
}

/**
 * The dashboard again, with these variables added to its environment: DASHBOARD_ALLOW_ANY_WEBHOOK=1 for a test that
 * posts to the Discord stand-in on 127.0.0.1, DASHBOARD_TRUST_PROXY=1 to take nginx's X-Real-IP.
 */
async function restartWith(extra: Record<string, string>): Promise<void> {
  await dashboard.close();
  env = { ...env, ...extra };
  dashboard = await start(env);
}

const ANY_HOST = { DASHBOARD_ALLOW_ANY_WEBHOOK: "1" };
const dashboardLog = () => readFileSync(join(paths.logDir, "mc-dashboard.log"), "utf8");

afterEach(async () => {
  await dashboard.close();
  await discord.close();
  await panel.close();
  dir.cleanup();
});

describe("sign-in", () => {
  it("is required for everything: the page, the stylesheet, the forms, unknown paths", async () => {
    for (const [method, path] of [
      ["GET", "/"],
      ["GET", "/style.css"],
      ["POST", "/settings"],
      ["POST", "/test"],
      ["GET", "/nothing-here"],
      ["HEAD", "/"],
    ] as const) {
      const answer = await call(method, path, { auth: false });
      expect(answer.status, `${method} ${path}`).toBe(401);
      expect(answer.headers["www-authenticate"]).toBe('Basic realm="mcops dashboard", charset="UTF-8"');
      expect(answer.body).not.toContain("webhook");
    }
  });

  it("answers a wrong password with 401 after a pause, refuses tries during the pause with 429, then lets the right one in", async () => {
    // The dashboard's time moves only when it has slept out a penalty (each sleep also takes its real time), and the
    // test decides when the second guess's penalty is over: the third guess comes "during the pause" on any machine.
    let now = Date.now();
    let held: Promise<void> = Promise.resolve();
    const clock: Clock = {
      now: () => now,
      async sleep(ms, signal) {
        await systemClock.sleep(ms, signal);
        await held;
        now += ms;
      },
    };
    await dashboard.close();
    dashboard = await start(env, clock);

    const wrong = await call("GET", "/", { auth: "admin:wrong password" });
    expect(wrong.status).toBe(401);
    expect(wrong.ms).toBeGreaterThanOrEqual(280);
    let release = (): void => undefined;
    held = new Promise((resolve) => (release = resolve));
    const answered: string[] = [];
    const second = call("GET", "/", { auth: "admin:another guess" }).then((answer) => {
      answered.push("second");
      return answer;
    });
    const log = () => readFileSync(join(paths.logDir, "mc-dashboard.log"), "utf8");
    await waitUntil(() => log().includes("(2 in a row)"), "the second failed sign-in in mc-dashboard.log", 60_000);
    // The second guess now waits out its 600 ms; a third one meanwhile is turned away at once.
    const during = await call("GET", "/", { auth: "admin:a third guess" });
    answered.push("during");
    expect(during.status).toBe(429);
    expect(during.headers["retry-after"]).toBe("1");
    release();
    expect((await second).status).toBe(401);
    expect(answered).toEqual(["during", "second"]);
    expect((await call("GET", "/")).status).toBe(200);
    expect(log()).toMatch(/WARN failed sign-in as "admin" from 127\.0\.0\.1 \(1 in a row\); next try in 300 ms/);
    expect(log()).toMatch(/\(2 in a row\); next try in 600 ms/);
    expect(log()).not.toContain("(3 in a row)");
    expect(log()).not.toContain("wrong password");
  });

  it("slows down by the connection's address, whatever X-Real-IP says, unless DASHBOARD_TRUST_PROXY=1", async () => {
    // A local user (a loopback connection) naming a new X-Real-IP each time: one slowdown for all of them.
    const guess = (realIp: string, password: string) =>
      call("GET", "/", { auth: `admin:${password}`, headers: { "x-real-ip": realIp } });
    expect((await guess("203.0.113.1", "first guess")).status).toBe(401);
    expect((await guess("203.0.113.2", "second guess")).status).toBe(401);
    expect(dashboardLog()).toMatch(/failed sign-in as "admin" from 127\.0\.0\.1 \(1 in a row\); next try in 300 ms/);
    expect(dashboardLog()).toMatch(/failed sign-in as "admin" from 127\.0\.0\.1 \(2 in a row\); next try in 600 ms/);
    expect(dashboardLog()).not.toContain("203.0.113.");
  });

  it("with DASHBOARD_TRUST_PROXY=1 takes nginx's X-Real-IP: each address has its own slowdown", async () => {
    await restartWith({ DASHBOARD_TRUST_PROXY: "1" });
    const guess = (realIp: string, password: string) =>
      call("GET", "/", { auth: `admin:${password}`, headers: { "x-real-ip": realIp } });
    expect((await guess("203.0.113.1", "first guess")).status).toBe(401);
    expect((await guess("203.0.113.2", "second guess")).status).toBe(401);
    expect(dashboardLog()).toMatch(/from 203\.0\.113\.1 \(1 in a row\); next try in 300 ms/);
    expect(dashboardLog()).toMatch(/from 203\.0\.113\.2 \(1 in a row\); next try in 300 ms/);
    expect(dashboardLog()).not.toContain("(2 in a row)");
  });

  it("refuses an unknown user like a wrong password, without writing the name down", async () => {
    expect((await call("GET", "/", { auth: `${PASSWORD}:${PASSWORD}` })).status).toBe(401);
    const log = readFileSync(join(paths.logDir, "mc-dashboard.log"), "utf8");
    expect(log).toMatch(/WARN failed sign-in as an unknown user name from 127\.0\.0\.1 \(1 in a row\)/);
    expect(log).not.toContain(PASSWORD);
  });

  it("takes a new password at once, without a restart", async () => {
    expect((await call("GET", "/")).status).toBe(200);
    await new Promise((r) => setTimeout(r, 20));
    await setPassword(passwdFile(paths), "admin", "a brand new password", CHEAP);
    expect((await call("GET", "/", { auth: "admin:a brand new password" })).status).toBe(200);
    expect((await call("GET", "/")).status).toBe(401);
  });

  it("answers 503 to everyone when the password file becomes unusable", async () => {
    writeFileSync(passwdFile(paths), "garbage\n", { mode: 0o600 });
    const answer = await call("GET", "/");
    expect(answer.status).toBe(503);
    expect(readFileSync(join(paths.logDir, "mc-dashboard.log"), "utf8")).toMatch(
      /ERROR nobody can sign in: line 1 is not a user:hash line/,
    );
  });
});

describe("the page", () => {
  it("carries the security headers, sets an HttpOnly SameSite=Strict session cookie and has no script", async () => {
    const page = await call("GET", "/");
    expect(page.headers).toMatchObject({
      "content-security-policy": expect.stringContaining("default-src 'none'"),
      "x-frame-options": "DENY",
      "x-content-type-options": "nosniff",
      "referrer-policy": "same-origin",
      "cache-control": "no-store",
      "content-type": "text/html; charset=utf-8",
    });
    expect(page.headers["content-security-policy"]).not.toMatch(/script-src|unsafe/);
    expect(String(page.headers["set-cookie"])).toMatch(
      /^mcops_dashboard=[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict$/,
    );
    expect(page.body).not.toMatch(/<script|\son\w+=|\sstyle=/i);
    const css = await call("GET", "/style.css");
    expect(css.status).toBe(200);
    expect(css.headers["content-type"]).toBe("text/css; charset=utf-8");
    expect(css.headers["x-content-type-options"]).toBe("nosniff");
  });

  it("marks the cookie Secure when the proxy says the page came over https, and DASHBOARD_TRUST_PROXY=1 trusts it", async () => {
    const untrusted = await call("GET", "/", { headers: { "x-forwarded-proto": "https" } });
    expect(String(untrusted.headers["set-cookie"])).toMatch(/SameSite=Strict$/);
    await restartWith({ DASHBOARD_TRUST_PROXY: "1" });
    const page = await call("GET", "/", { headers: { "x-forwarded-proto": "https" } });
    expect(String(page.headers["set-cookie"])).toMatch(/; Secure$/);
  });

  it("shows the address the tools use with its token hidden, and the categories as webhook.json has them", async () => {
    const url = `${discord.webhookUrl()}`;
    writeFileSync(webhookJson(), JSON.stringify({ webhook_url: url, events: { join: false } }), { mode: 0o600 });
    const { body } = await openPage();
    const token = discord.webhooks[0]?.token as string;
    expect(body).not.toContain(token);
    expect(body).toContain(`${discord.url}/api/webhooks/${discord.webhooks[0]?.id}/***`);
    expect(body).toMatch(/value="join">/);
    expect(body).toMatch(/value="leave" checked>/);
  });

  it("shows the server's state and uptime from the panel, the last backup and recent notifications", async () => {
    mkdirSync(paths.logDir, { recursive: true });
    writeFileSync(
      join(paths.logDir, "mc-backup.log"),
      "2026-11-21T06:00:00Z INFO === Backup started ===\n2026-11-21T06:00:42Z INFO === Backup done === took 42 s, added 12.3 MiB, repository 1.20 GiB, snapshot 1a2b3c4d\n",
    );
    writeFileSync(
      join(paths.logDir, "mc-log-tailer.log"),
      "2026-11-21T07:00:05Z INFO join Steve: Steve joined the game (line 12)\n" +
        '2026-11-21T07:00:05Z INFO notification "Steve joined the game" not sent: the join category is off\n' +
        "2026-11-21T07:05:09Z INFO leave Steve: Steve left the game (line 20)\n" +
        '2026-11-21T07:05:09Z INFO notification "Steve left the game" sent\n',
    );
    const { body } = await openPage();
    // The stand-in was started two hours into the server's uptime (beforeEach).
    expect(body).toMatch(/<span class="state running">running<\/span>, up 2 h \d+ min/);
    expect(body).toContain("took 42 s · added 12.3 MiB · repository 1.20 GiB · snapshot 1a2b3c4d");
    expect(body).toMatch(/<td>Steve left the game<\/td><td class="muted">game log<\/td><td>sent<\/td>/);
    expect(body).toMatch(
      /<td>Steve joined the game<\/td><td class="muted">game log<\/td><td><span class="muted">off<\/span> <span class="why">the join category is off/,
    );
    expect(body).toMatch(/Players<\/dt><dd class="bad">unknown <span class="why">no answer/);
    expect(body).toContain('<dt>Health</dt><dd class="muted">no figures yet');
  });

  it("shows the idle monitor's latest health figures, escaped", async () => {
    mkdirSync(paths.stateDir, { recursive: true });
    const health = { at: Date.now() - 3 * 60_000, tps: 11.24, memory: 0.376, volumeFree: 0.74, cacheFree: "<b>" };
    writeFileSync(join(paths.stateDir, "idle-monitor.json"), JSON.stringify({ lastActivity: 1, health }));
    const { body } = await openPage();
    expect(body).toMatch(
      /<dt>Health<\/dt><dd>11\.2 TPS · memory 38 % of its limit · 74 % free on the volume(?:'|&#39;|&#x27;)s disk <span class="muted">\(<time [^>]+>3 min ago<\/time>\)<\/span><\/dd>/,
    );
    expect(body).not.toContain("restic&#39;s cache"); // a figure that is not a number is not shown
  });

  it("says what keeps the panel from answering instead of failing", async () => {
    panel.inject({ kind: "status", status: 401, times: 5 });
    const { body } = await openPage();
    expect(body).toMatch(/State<\/dt><dd class="bad">unknown <span class="why">the panel refused the API key/);
  });

  it("reads backup.env whenever it asks the panel: a change shows without a restart", async () => {
    expect((await openPage()).body).toMatch(/<span class="state running">running<\/span>/);
    writeFileSync(join(paths.configDir, "backup.env"), `CONTROL_URL=${panel.url}\nGAME_ADDRESS=127.0.0.1:9\n`, {
      mode: 0o600,
    });
    expect((await openPage()).body).toMatch(
      /State<\/dt><dd class="bad">unknown <span class="why">CONTROL_KEY is not set/,
    );
  });

  it("shows the panel's refusal as its status, never the words of its answer", async () => {
    panel.inject({
      kind: "status",
      status: 403,
      times: 5,
      body: { errors: [{ code: "AccessDenied-REMOTE-CODE", status: "403", detail: "instance-id i-0REMOTE-DETAIL" }] },
    });
    const { body } = await openPage();
    expect(body).toMatch(
      /State<\/dt><dd class="bad">unknown <span class="why">the API key may not do this on server \w{8} \(HTTP 403\) \(/,
    );
    expect(body).not.toContain("REMOTE");
  });

  it("answers 404 for other paths and 405 for the wrong method", async () => {
    expect((await call("GET", "/admin")).status).toBe(404);
    expect((await call("GET", "/settings")).status).toBe(405);
    expect((await call("POST", "/")).headers.allow).toBe("GET, HEAD");
  });
});

describe("form posts", () => {
  it("save webhook.json and show the outcome once on the page they redirect to", async () => {
    await restartWith(ANY_HOST); // the stand-in's address is on 127.0.0.1
    const { cookie, csrf, version } = await openPage();
    const fields: Array<[string, string]> = [
      ["csrf", csrf],
      ["version", version],
      ["webhook_url", discord.webhookUrl()],
      ...["leave", "death", "backup", "health"].map((c): [string, string] => ["events", c]),
    ];
    const saved = await postForm("/settings", cookie, fields);
    expect(saved.status).toBe(303);
    expect(saved.headers.location).toBe("/");
    const json = JSON.parse(readFileSync(webhookJson(), "utf8"));
    expect(json.webhook_url).toBe(discord.webhookUrl());
    expect(json.events).toEqual({
      join: false,
      leave: true,
      death: true,
      start: false,
      stop: false,
      crash: false,
      backup: true,
      idle: false,
      restart: false,
      health: true,
    });
    expect(statSync(webhookJson()).mode & 0o777).toBe(0o600);
    const after = await call("GET", "/", { headers: { cookie } });
    expect(after.body).toContain('class="flash ok" role="status">Saved.');
    expect((await call("GET", "/", { headers: { cookie } })).body).not.toContain("Saved.");
    expect(readFileSync(join(paths.logDir, "mc-dashboard.log"), "utf8")).toMatch(
      /INFO webhook\.json saved by admin: address set, join off, start off, stop off, crash off, idle off, restart off/,
    );
  });

  it("show why an address was not taken, and change nothing", async () => {
    const { cookie, csrf, version } = await openPage();
    await postForm("/settings", cookie, [
      ["csrf", csrf],
      ["version", version],
      ["webhook_url", "https://example.com/not-a-webhook"],
    ]);
    const page = await call("GET", "/", { headers: { cookie } });
    expect(page.body).toMatch(
      /class="flash error" role="alert">Not saved: the webhook address is not a webhook address/,
    );
    expect(() => statSync(webhookJson())).toThrow();
  });

  it("refuse an address on any host but Discord's unless DASHBOARD_ALLOW_ANY_WEBHOOK=1, writing nothing", async () => {
    const kept = `${JSON.stringify({ webhook_url: "https://discord.com/api/webhooks/1/kept", events: {} })}\n`;
    writeFileSync(webhookJson(), kept, { mode: 0o600 });
    for (const address of [
      discord.webhookUrl(), // the stand-in, http://127.0.0.1:<port>/api/webhooks/<id>/<token>
      "https://127.0.0.1/api/webhooks/1/x",
      "https://169.254.169.254/api/webhooks/1/x",
      "https://evil.example/api/webhooks/1/x",
      "https://discord.com.evil.example/api/webhooks/1/x",
    ]) {
      const { cookie, csrf, version } = await openPage();
      const posted = await postForm("/settings", cookie, [
        ["csrf", csrf],
        ["version", version],
        ["webhook_url", address],
        ["events", "join"],
      ]);
      expect(posted.status).toBe(303);
      const page = await call("GET", "/", { headers: { cookie } });
      const flash = /class="flash error" role="alert">([^<]*)<\/p>/.exec(page.body)?.[1];
      expect(flash, address).toBe(
        "Not saved: the webhook address must be https:// on discord.com or discordapp.com (or their ptb. and canary. sub-domains) (webhook address) — copy it from Discord; to allow any host, start the dashboard with DASHBOARD_ALLOW_ANY_WEBHOOK=1",
      );
      expect(readFileSync(webhookJson(), "utf8"), address).toBe(kept);
    }
    expect(discord.requests).toHaveLength(0);
    expect(dashboardLog()).not.toContain("webhook.json saved");

    for (const address of [
      "https://discord.com/api/webhooks/123456789012345678/tokenAAAA",
      "https://ptb.discord.com/api/v10/webhooks/123456789012345678/tokenBBBB",
      "https://canary.discordapp.com/api/webhooks/123456789012345678/tokenCCCC",
    ]) {
      const { cookie, csrf, version } = await openPage();
      await postForm("/settings", cookie, [
        ["csrf", csrf],
        ["version", version],
        ["webhook_url", address],
      ]);
      expect((await call("GET", "/", { headers: { cookie } })).body).toContain('class="flash ok" role="status">Saved.');
      expect(JSON.parse(readFileSync(webhookJson(), "utf8")).webhook_url).toBe(address);
    }

    // The variable lifts the rule: the stand-in's loopback address is taken.
    await restartWith(ANY_HOST);
    const { cookie, csrf, version } = await openPage();
    await postForm("/settings", cookie, [
      ["csrf", csrf],
      ["version", version],
      ["webhook_url", discord.webhookUrl()],
    ]);
    expect(JSON.parse(readFileSync(webhookJson(), "utf8")).webhook_url).toBe(discord.webhookUrl());
  });

  it("do not send a test message to an address off Discord's hosts, wherever it was set", async () => {
    writeFileSync(join(paths.configDir, "webhook.env"), `WEBHOOK_URL=${discord.webhookUrl()}\n`, { mode: 0o600 });
    const { cookie, csrf } = await openPage();
    expect((await postForm("/test", cookie, [["csrf", csrf]])).status).toBe(303);
    expect((await call("GET", "/", { headers: { cookie } })).body).toMatch(
      /flash error" role="alert">Test message not sent: the webhook address must be https:\/\/ on discord\.com .* DASHBOARD_ALLOW_ANY_WEBHOOK=1</,
    );
    expect(discord.requests).toHaveLength(0);
    expect(dashboardLog()).toMatch(/WARN test message refused \(admin\): the webhook address must be/);
  });

  it("show a failed test message as its status, never what the webhook host answered", async () => {
    await restartWith(ANY_HOST);
    writeFileSync(join(paths.configDir, "webhook.env"), `WEBHOOK_URL=${discord.webhookUrl()}\n`, { mode: 0o600 });
    discord.inject({
      kind: "status",
      status: 400,
      body: {
        message: "ami-id REMOTE-MESSAGE",
        code: 50035,
        errors: { embeds: { _errors: [{ code: "X", message: "REMOTE-FORM-ERROR — with a dash" }] } },
      },
    });
    const { cookie, csrf } = await openPage();
    await postForm("/test", cookie, [["csrf", csrf]]);
    const page = (await call("GET", "/", { headers: { cookie } })).body;
    expect(page).toContain(
      'flash error" role="alert">Test message not sent: the message was refused (HTTP 400) — this is a bug in mcops if it repeats; run with MCOPS_DEBUG=1 and report it</p>',
    );
    expect(page).toMatch(
      /<td>Test message<\/td><td class="muted">dashboard<\/td><td><span class="bad">not sent<\/span> <span class="why">the message was refused \(HTTP 400\) — this is a bug/,
    );
    expect(page).not.toContain("REMOTE");
    // What Discord said stays in the log, root's to read.
    expect(dashboardLog()).toContain("REMOTE-MESSAGE");
  });

  it("are refused with 403, changing nothing, without the page's token, from another origin, or with no origin", async () => {
    const { cookie, csrf, version } = await openPage();
    const fields: Array<[string, string]> = [
      ["csrf", csrf],
      ["version", version],
      ["webhook_url", discord.webhookUrl()],
    ];
    const attempts = [
      postForm("/settings", cookie, fields.slice(1)),
      postForm("/settings", cookie, [["csrf", `${csrf.slice(0, -2)}xx`], ...fields.slice(1)]),
      postForm("/settings", "", fields),
      postForm("/settings", cookie, fields, { origin: "http://127.0.0.1:1" }),
      postForm("/settings", cookie, fields, { origin: "null" }),
      call("POST", "/settings", {
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields).toString(),
      }),
      postForm("/test", cookie, []),
    ];
    for (const answer of await Promise.all(attempts)) {
      expect(answer.status).toBe(403);
      expect(answer.body).toContain("Form refused");
    }
    expect(() => statSync(webhookJson())).toThrow();
    expect(discord.messages).toHaveLength(0);
    expect(readFileSync(join(paths.logDir, "mc-dashboard.log"), "utf8")).toMatch(
      /WARN refused a form post to \/settings from 127\.0\.0\.1: sent from 127\.0\.0\.1:1, not 127\.0\.0\.1:\d+/,
    );
  });

  it("refuse a body that is too large or not a form", async () => {
    const { cookie } = await openPage();
    const big = await postForm("/settings", cookie, [["x", "y".repeat(20_000)]]);
    expect(big.status).toBe(413);
    const json = await postForm("/settings", cookie, [], { "content-type": "application/json" });
    expect(json.status).toBe(415);
  });

  it("send a test message through the notifier and show the result, or why it failed", async () => {
    await restartWith(ANY_HOST);
    writeFileSync(join(paths.configDir, "webhook.env"), `WEBHOOK_URL=${discord.webhookUrl()}\n`, { mode: 0o600 });
    writeFileSync(webhookJson(), JSON.stringify({ events: { join: false, backup: false } }), { mode: 0o600 });
    const { cookie, csrf } = await openPage();
    expect((await postForm("/test", cookie, [["csrf", csrf]])).status).toBe(303);
    const [message] = await discord.waitForMessages(1);
    expect(message?.body.embeds[0].title).toBe("Test message");
    expect(message?.body.allowed_mentions).toEqual({ parse: [] });
    expect((await call("GET", "/", { headers: { cookie } })).body).toMatch(
      /flash ok" role="status">Test message sent to http:\/\/127\.0\.0\.1:\d+\/api\/webhooks\/\d+\/\*\*\*\./,
    );

    discord.deleteWebhook(0);
    await postForm("/test", cookie, [["csrf", csrf]]);
    const page = await call("GET", "/", { headers: { cookie } });
    expect(page.body).toMatch(/flash error" role="alert">Test message not sent: the webhook does not exist/);
    expect(page.body).toMatch(
      /<td>Test message<\/td><td class="muted">dashboard<\/td><td><span class="bad">not sent<\/span> <span class="why">the webhook does not exist/,
    );
    expect(page.body).toMatch(/<td>Test message<\/td><td class="muted">dashboard<\/td><td>sent<\/td>/);
    const log = readFileSync(join(paths.logDir, "mc-dashboard.log"), "utf8");
    expect(log).toMatch(
      /INFO test message asked for by admin, to http:\/\/127\.0\.0\.1:\d+\/api\/webhooks\/\d+\/\*\*\*\n/,
    );
    expect(log.match(/INFO notification "Test message" sent\n/g)).toHaveLength(1);
    expect(log.match(/ERROR notification "Test message" not sent: the webhook does not exist/g)).toHaveLength(1);
  });

  it("say so when there is no address to send a test message to", async () => {
    const { cookie, csrf } = await openPage();
    await postForm("/test", cookie, [["csrf", csrf]]);
    expect((await call("GET", "/", { headers: { cookie } })).body).toContain("no webhook address is saved");
    expect(discord.messages).toHaveLength(0);
  });
});
