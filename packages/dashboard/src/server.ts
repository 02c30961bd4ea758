import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { CATEGORIES } from "@mcops/core/categories";
import { type NotifyConfig, redactWebhookUrl } from "@mcops/core/config";
import { JobError, UsageError } from "@mcops/core/errors";
import { recordingLogger } from "@mcops/core/events";
import { COLOURS, createNotifier, failureOf } from "@mcops/core/http";
import type { Logger } from "@mcops/core/log";
import { LOG_FILES } from "@mcops/core/log-events";
import { configFile } from "@mcops/core/paths";
import type { ToolContext } from "@mcops/core/tool";
import { VERSION } from "@mcops/core/version";
import { type AuthResult, clientAddress, createAuthenticator, type ThrottleOptions } from "./auth.ts";
import { createCsrf, crossOriginReason, sessionCookie, sessionFrom } from "./csrf.ts";
import { dashboardPage, type Flash, messagePage } from "./page.ts";
import { passwdFile } from "./passwd.ts";
import { webhookFailureWords } from "./remote-answer.ts";
import type { ServeSettings } from "./settings.ts";
import { describeError, readSettings, saveSettings } from "./settings-store.ts";
import { createStatusReader } from "./status.ts";
import { STYLE } from "./style.ts";
import { ALLOW_ANY_WEBHOOK, allowsAnyWebhookHost, checkWebhookHost } from "./webhook-host.ts";

/**
 * The dashboard's HTTP server (node:http, no framework): `GET /` the page, `GET /style.css`, `POST /settings` (save),
 * `POST /test` (test message). Every request, the stylesheet and error pages included, must pass basic auth first;
 * every answer carries the security headers; every form post must pass the CSRF checks. A post answers with a
 * redirect to the page (303), which shows its outcome once.
 */
type DashboardContext = Pick<ToolContext, "paths" | "env" | "clock" | "stderr">;

export interface DashboardOptions {
  /** host:port to listen on (default 127.0.0.1:8088; port 0 takes a free one). */
  listen?: string | undefined;
  throttle?: ThrottleOptions;
  /** How often the panel and the game are asked at most (default 10 s). */
  statusCacheMs?: number;
  /**
   * Trust X-Real-IP and X-Forwarded-Proto from a proxy on the loopback address. Default: only when the environment
   * has DASHBOARD_TRUST_PROXY=1 (the unit sets it, behind nginx); otherwise the connection's own address counts, so a
   * local user cannot name another address to escape the sign-in slowdown.
   */
  trustProxy?: boolean;
}

export interface Dashboard {
  /** http://host:port */
  url: string;
  close(): Promise<void>;
}

export const DEFAULT_LISTEN = "127.0.0.1:8088";

const TRUST_PROXY = "DASHBOARD_TRUST_PROXY";

/** `127.0.0.1:8088`, `[::1]:8088`, `0.0.0.0:80`, or a bare port (on 127.0.0.1). */
export function parseListen(text: string): { host: string; port: number } {
  const match = /^\[([0-9A-Fa-f:.]+)\]:(\d{1,5})$/.exec(text) ?? /^([A-Za-z0-9.-]+):(\d{1,5})$/.exec(text);
  const bare = /^\d{1,5}$/.test(text) ? text : undefined;
  const host = match?.[1] ?? (bare ? "127.0.0.1" : undefined);
  const port = Number(match?.[2] ?? bare);
  if (host === undefined || !Number.isInteger(port) || port > 65535) {
    throw new UsageError(`"${text}" is not an address to listen on`, {
      where: "--listen",
      hint: `write it as host:port, e.g. ${DEFAULT_LISTEN}`,
    });
  }
  return { host, port };
}

const LOOPBACK_HOST = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy":
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "same-origin",
  "Cache-Control": "no-store",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
};

const HTML = "text/html; charset=utf-8";
const MAX_FORM_BYTES = 16 * 1024;

function send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { "Content-Type": type, "Content-Length": String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}

/** The urlencoded body of a form post; a number: the status to refuse it with (413, 415). */
async function readForm(req: IncomingMessage): Promise<URLSearchParams | number> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") return 415;
  if (Number(req.headers["content-length"] ?? 0) > MAX_FORM_BYTES) return 413;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) return 413;
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/**
 * What every request shares: the context, the settings' loaders, the log, the sign-in, the form tokens, the status
 * and the flashes.
 */
interface Site {
  ctx: DashboardContext;
  settings: ServeSettings;
  logger: Logger;
  trustProxy: boolean;
  allowAnyHost: boolean;
  auth: ReturnType<typeof createAuthenticator>;
  csrf: ReturnType<typeof createCsrf>;
  status: ReturnType<typeof createStatusReader>;
  flashes: ReturnType<typeof flashStore>;
}

/** The outcome of a post, shown once by the page it redirects to; per browser session, bounded. */
function flashStore() {
  const flashes = new Map<string, Flash>();
  return {
    put(session: string, flash: Flash): void {
      flashes.delete(session);
      flashes.set(session, flash);
      if (flashes.size > 200) flashes.delete(flashes.keys().next().value as string);
    },
    take(session: string): Flash | undefined {
      const flash = flashes.get(session);
      flashes.delete(session);
      return flash;
    },
  };
}

function openSite(ctx: DashboardContext, settings: ServeSettings, options: DashboardOptions): Site {
  const trustProxy = options.trustProxy ?? ctx.env[TRUST_PROXY] === "1";
  const logger: Logger = recordingLogger(ctx, "dashboard");
  const secret = randomBytes(32);
  const auth = createAuthenticator({
    file: passwdFile(ctx.paths),
    clock: ctx.clock,
    logger,
    secret,
    trustProxy,
    ...(options.throttle ? { throttle: options.throttle } : {}),
  });
  return {
    ctx,
    settings,
    logger,
    trustProxy,
    allowAnyHost: allowsAnyWebhookHost(ctx.env),
    auth,
    csrf: createCsrf(secret),
    status: createStatusReader(
      ctx,
      settings,
      options.statusCacheMs === undefined ? {} : { cacheMs: options.statusCacheMs },
    ),
    flashes: flashStore(),
  };
}

/** The page came over https through the trusted proxy on the loopback address (its cookie is then Secure). */
function viaHttps(site: Site, req: IncomingMessage): boolean {
  return (
    site.trustProxy && req.headers["x-forwarded-proto"] === "https" && clientAddress(req, false).startsWith("127.")
  );
}

async function page(site: Site, req: IncomingMessage, res: ServerResponse, user: string): Promise<void> {
  const { ctx, csrf } = site;
  let session = sessionFrom(req);
  const headers: Record<string, string> = {};
  if (!session) {
    session = csrf.newSession();
    headers["Set-Cookie"] = sessionCookie(session, viaHttps(site, req));
  }
  const flash = site.flashes.take(session);
  const html = dashboardPage({
    user,
    csrf: csrf.tokenFor(session, user),
    settings: readSettings(ctx.paths, ctx.env),
    status: await site.status.read(),
    flash,
    now: ctx.clock.now(),
    version: VERSION,
  });
  send(res, 200, HTML, html, headers);
}

/** `POST /settings`: webhook.json saved from the form, or why not. */
function save(site: Site, form: URLSearchParams, user: string): Flash {
  const { ctx, logger } = site;
  const chosen = new Set(form.getAll("events"));
  try {
    const result = saveSettings(
      configFile(ctx.paths, "webhook.json"),
      {
        version: form.get("version") ?? "",
        webhookUrl: form.get("webhook_url") ?? undefined,
        forgetUrl: form.get("forget") === "1",
        events: Object.fromEntries(CATEGORIES.map((c) => [c, chosen.has(c)])) as Record<
          (typeof CATEGORIES)[number],
          boolean
        >,
      },
      { allowAnyHost: site.allowAnyHost },
    );
    logger.info(`webhook.json saved by ${user}: ${result.changes.join(", ") || "no change"}`);
    let text = "Saved. Every tool uses it from its next message, the running log-tailer and idle-monitor services too.";
    if (result.wasInsecure !== undefined) {
      const mode = result.wasInsecure.toString(8);
      logger.warn(`webhook.json was mode ${mode} (readable by others); it is mode 600 now`);
      text += ` webhook.json was readable by others (mode ${mode}) and is mode 600 now; if others could log in to this machine, make a new webhook.`;
    }
    return { kind: "ok", text };
  } catch (error) {
    const line = describeError(error);
    logger.warn(`webhook.json not saved (${user}): ${line}`);
    return { kind: "error", text: `Not saved: ${line}` };
  }
}

/** The webhook settings a test message goes out with, or why it cannot go out. */
function testMessageConfig(
  site: Site,
  user: string,
): { ok: true; config: NotifyConfig; url: string } | { ok: false; flash: Flash } {
  let config: NotifyConfig;
  try {
    config = site.settings.notify();
  } catch (error) {
    return { ok: false, flash: { kind: "error", text: `Test message not sent: ${describeError(error)}` } };
  }
  if (!config.webhookUrl) {
    const text = "Test message not sent: no webhook address is saved. Enter one and save first.";
    return { ok: false, flash: { kind: "error", text } };
  }
  // The rule of the form holds for an address from webhook.env or the environment too: the page posts to Discord.
  if (!site.allowAnyHost) {
    try {
      checkWebhookHost(config.webhookUrl);
    } catch (error) {
      const line = describeError(error);
      site.logger.warn(`test message refused (${user}): ${line}`);
      return { ok: false, flash: { kind: "error", text: `Test message not sent: ${line}` } };
    }
  }
  return { ok: true, config, url: config.webhookUrl };
}

/** `POST /test`: a test message posted through core's notifier, which logs its outcome for the page's list. */
async function testMessage(site: Site, user: string): Promise<Flash> {
  const checked = testMessageConfig(site, user);
  if (!checked.ok) return checked.flash;
  const { config, url } = checked;
  const { ctx, logger } = site;
  const notifier = createNotifier({
    config,
    paths: ctx.paths,
    logger,
    clock: ctx.clock,
    // Someone waits at the page: one more try at most (a 429 included), and never a long rate-limit wait.
    maxAttempts: 2,
    backoffMs: 500,
    maxWaitMs: 10_000,
    timeoutMs: 10_000,
  });
  const where = redactWebhookUrl(url);
  // The notifier logs the outcome (`notification "Test message" sent` or `... not sent: ...`), which the page lists.
  logger.info(`test message asked for by ${user}, to ${where}`);
  const result = await notifier.send({
    title: "Test message",
    description: `Sent from the mcops dashboard by ${user}. If you can read this, notifications reach this channel.`,
    colour: COLOURS.info,
  });
  if (result.status === "sent") return { kind: "ok", text: `Test message sent to ${where}.` };
  // The log has the notifier's whole line; the page gets the status, never what the remote side answered.
  const why = result.status === "failed" ? webhookFailureWords(failureOf(result)) : "no webhook address is set";
  return { kind: "error", text: `Test message not sent: ${why}` };
}

/** A form post: from the page's own origin, a form within bounds, the session's token; then its outcome, once. */
async function post(site: Site, req: IncomingMessage, res: ServerResponse, user: string, path: string): Promise<void> {
  const refuse = (why: string) => {
    site.logger.warn(`refused a form post to ${path} from ${clientAddress(req, site.trustProxy)}: ${why}`);
    send(
      res,
      403,
      HTML,
      messagePage(
        "Form refused",
        "This form did not come from the dashboard's own page, or the page is too old. Go back, load the page again and repeat.",
      ),
    );
  };
  const foreign = crossOriginReason(req);
  if (foreign) return refuse(foreign);
  const form = await readForm(req);
  if (typeof form === "number") {
    res.setHeader("Connection", "close");
    return send(res, form, HTML, messagePage("Refused", form === 413 ? "The form is too large." : "Not a form."));
  }
  const session = sessionFrom(req);
  if (!session || !site.csrf.verify(session, user, form.get("csrf") ?? undefined)) {
    return refuse(session ? "wrong form token" : "no session cookie");
  }
  site.flashes.put(session, path === "/settings" ? save(site, form, user) : await testMessage(site, user));
  res.writeHead(303, { Location: "/", "Content-Length": "0" });
  res.end();
}

/** The answer to a request that did not sign in: 401 (asks for the password), 429 (slow down) or 503. */
function refuseSignIn(res: ServerResponse, result: Exclude<AuthResult, { ok: true }>): void {
  if (result.status === 401) {
    send(res, 401, HTML, messagePage("Sign-in required", "This dashboard needs its user name and password."), {
      "WWW-Authenticate": 'Basic realm="mcops dashboard", charset="UTF-8"',
    });
  } else if (result.status === 429) {
    const text = `Too many failed sign-ins from your address: try again in ${result.retryAfterS} s.`;
    send(res, 429, HTML, messagePage("Slow down", text), { "Retry-After": String(result.retryAfterS) });
  } else {
    const text = `Nobody can sign in: the dashboard has no usable password file. See /var/log/${LOG_FILES.dashboard}.`;
    send(res, 503, HTML, messagePage("Sign-in unavailable", text));
  }
}

/** Every request: the security headers, the sign-in, then the route. */
async function handle(site: Site, req: IncomingMessage, res: ServerResponse): Promise<void> {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  const result = await site.auth.check(req);
  if (!result.ok) return refuseSignIn(res, result);
  const path = new URL(req.url ?? "/", "http://dashboard.invalid").pathname;
  const method = req.method ?? "GET";
  const reading = method === "GET" || method === "HEAD";
  if (path === "/" || path === "/style.css") {
    if (!reading) return send(res, 405, HTML, messagePage("Not allowed", `${method} ${path}`), { Allow: "GET, HEAD" });
    if (path === "/style.css") return send(res, 200, "text/css; charset=utf-8", STYLE);
    return page(site, req, res, result.user);
  }
  if (path === "/settings" || path === "/test") {
    if (method !== "POST")
      return send(res, 405, HTML, messagePage("Not allowed", `${method} ${path}`), { Allow: "POST" });
    return post(site, req, res, result.user, path);
  }
  send(res, 404, HTML, messagePage("Not found", "There is nothing here. The dashboard is one page: /."));
}

/** The HTTP server, listening; a taken or impossible address is a JobError that says what to do. */
async function listen(site: Site, host: string, port: number): Promise<Server> {
  const server = createServer(
    { requestTimeout: 30_000, headersTimeout: 10_000, maxHeaderSize: 16 * 1024 },
    (req, res) => {
      handle(site, req, res).catch((error: unknown) => {
        site.logger.error(`${req.method} ${req.url}: ${describeError(error)}`);
        if (!res.headersSent) {
          send(
            res,
            500,
            HTML,
            messagePage("Something went wrong", `See /var/log/${LOG_FILES.dashboard} on the server.`),
          );
        } else res.destroy();
      });
    },
  );
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      const hint =
        error.code === "EADDRINUSE"
          ? "another program listens there: stop it or choose another address with --listen"
          : "choose another address with --listen";
      reject(new JobError(`cannot listen on ${host}:${port} (${error.code})`, { hint }));
    });
    server.listen(port, host, () => resolve());
  });
  return server;
}

/** `settings`: serveSettings' loaders (settings.ts), which the page calls at each request that needs them. */
export async function startDashboard(
  ctx: DashboardContext,
  settings: ServeSettings,
  options: DashboardOptions = {},
): Promise<Dashboard> {
  const { host, port } = parseListen(options.listen ?? DEFAULT_LISTEN);
  const site = openSite(ctx, settings, options);
  const server = await listen(site, host, port);
  const bound = server.address() as AddressInfo;
  const url = `http://${bound.family === "IPv6" ? `[${bound.address}]` : bound.address}:${bound.port}`;
  site.logger.info(`listening on ${url}`);
  if (site.allowAnyHost) {
    site.logger.warn(`${ALLOW_ANY_WEBHOOK}=1: webhook addresses on any host are accepted, not only Discord's`);
  }
  if (!LOOPBACK_HOST.test(host)) {
    site.logger.warn(
      `listening on ${host}, not the loopback address: passwords cross the network unencrypted unless a TLS proxy is in front`,
    );
  }
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
