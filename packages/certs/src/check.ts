import { X509Certificate } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:tls";
import { ExitCode } from "@mcops/core/errors";
import { formatDuration } from "@mcops/core/format";
import { toolLogger } from "@mcops/core/log";
import { writeGauges } from "@mcops/core/textfile";
import type { ToolContext } from "@mcops/core/tool";
import { parse as parseYaml } from "yaml";
import { readRegular } from "./files.ts";
import type { CheckSettings } from "./settings.ts";

/**
 * `certs check`: when the origin certificate and Wings' certificate expire, as lines and as Prometheus textfile
 * gauges (`mcops_cert_expiry_seconds{cert,name}` in mcops_certs.prom); exit 1 when one expires within CERT_WARN
 * (default 14 days), is expired, or cannot be read. Wings' certificate is the file its config names (`api.ssl.cert`
 * in /etc/pterodactyl/config.yml), else the one it serves (`--wings host:port`, a TLS handshake).
 */
export interface CheckOptions {
  sslDir: string;
  /** Only this domain's origin certificate (default: every .crt in the directory). */
  domain?: string | undefined;
  wingsConfig: string;
  /** host:port for a TLS handshake with Wings, when its config names no certificate file. */
  wings?: string | undefined;
}

export interface Expiry {
  cert: "origin" | "wings";
  name: string;
  /** Epoch ms; undefined when it could not be read (why in `error`). */
  until?: number | undefined;
  error?: string | undefined;
}

/** `settings` is CERT_WARN and where the gauges go, read by checkSettings (settings.ts) before the run. */
export async function runCheck(
  ctx: Pick<ToolContext, "paths" | "env" | "stdout" | "stderr" | "clock">,
  settings: CheckSettings,
  options: CheckOptions,
): Promise<number> {
  const expiries = [...originExpiries(options), ...(await wingsExpiries(options))];
  const now = ctx.clock.now();
  let bad = false;
  for (const e of expiries) {
    const line = describe(e, now, settings.CERT_WARN);
    bad ||= line.bad;
    ctx.stdout.write(`${line.text}\n`);
  }
  if (expiries.length === 0) {
    ctx.stdout.write(`no certificate found (${options.sslDir}, ${options.wingsConfig})\n`);
    bad = true;
  }
  const logger = toolLogger({
    logDir: ctx.paths.logDir,
    file: "mc-certs.log",
    stderr: ctx.stderr,
    env: ctx.env,
    clock: ctx.clock,
  });
  writeGauges(
    expiries
      .filter((e) => e.until !== undefined)
      .map((e) => ({
        name: "mcops_cert_expiry_seconds",
        help: "Seconds until the certificate expires (negative: expired).",
        value: Math.round(((e.until as number) - now) / 1000),
        labels: { cert: e.cert, name: e.name },
      })),
    { dir: settings.BACKUP_TEXTFILE_DIR, file: "mcops_certs.prom", serverId: settings.SERVER_ID ?? "", logger },
  );
  return bad ? ExitCode.failed : ExitCode.ok;
}

function describe(e: Expiry, now: number, warnMs: number): { text: string; bad: boolean } {
  const what = `${e.cert} ${e.name}`;
  if (e.until === undefined) return { text: `${what}: cannot read it (${e.error})`, bad: true };
  const day = new Date(e.until).toISOString().slice(0, 10);
  const left = e.until - now;
  if (left <= 0) return { text: `${what}: EXPIRED on ${day}`, bad: true };
  const within = left < warnMs;
  const days = Math.floor(left / 86_400_000);
  const warn = within ? ` — within CERT_WARN (${formatDuration(warnMs)}): renew it` : "";
  return { text: `${what}: valid until ${day} (${days} days)${warn}`, bad: within };
}

function fileExpiry(cert: Expiry["cert"], name: string, file: string): Expiry {
  try {
    return { cert, name, until: Date.parse(new X509Certificate(readRegular(file)).validTo) };
  } catch (error) {
    return { cert, name, error: `${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
}

function originExpiries(options: CheckOptions): Expiry[] {
  let names: string[];
  try {
    names = options.domain ? [`${options.domain}.crt`] : readdirSync(options.sslDir).filter((n) => n.endsWith(".crt"));
  } catch {
    return options.domain ? [{ cert: "origin", name: options.domain, error: `${options.sslDir} cannot be read` }] : [];
  }
  return names.map((n) => fileExpiry("origin", n.replace(/\.crt$/, ""), join(options.sslDir, n)));
}

/** Wings' `api` block as its config.yml says it, read with a YAML parser; undefined when the file says none. */
function wingsApi(configText: string): Record<string, unknown> | undefined {
  let config: unknown;
  try {
    config = parseYaml(configText, { maxAliasCount: 10 });
  } catch {
    return undefined;
  }
  const api = (config as { api?: unknown } | null)?.api;
  return api && typeof api === "object" ? (api as Record<string, unknown>) : undefined;
}

/**
 * A YAML 1.1 true as Wings' parser reads one (gopkg.in/yaml.v2 resolve.go: y, yes, true, on, each in lower case,
 * capitalised or upper case); the YAML 1.2 parser here reads only `true` as a boolean and leaves the rest strings.
 * `tRUE` or `yES` is no boolean to yaml.v2 (Wings refuses the file), so not true here either.
 */
const YAML_V2_TRUE = new Set(["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"]);
function yamlTrue(value: unknown): boolean {
  return value === true || (typeof value === "string" && YAML_V2_TRUE.has(value));
}

/**
 * Wings' TLS as its config.yml says it (`api.ssl.enabled`, `api.ssl.cert`), read with a YAML parser: any indentation,
 * quotes, comments, `yes`/`true`. `off`: TLS is not enabled; undefined: the file says nothing of it.
 */
export function wingsCertFile(configText: string): string | "off" | undefined {
  const ssl = wingsApi(configText)?.ssl as { enabled?: unknown; cert?: unknown } | undefined;
  if (!ssl || typeof ssl !== "object") return undefined;
  if (!yamlTrue(ssl.enabled)) return "off";
  return typeof ssl.cert === "string" && ssl.cert ? ssl.cert : undefined;
}

/**
 * Where Wings answers on this machine, from its config.yml: `api.ssl.enabled` (https, else http), `api.port` and
 * `api.host`, with Wings' own defaults where the file says nothing (pterodactyl/wings @ f1c5bbd42d42 config/config.go,
 * ApiConfiguration: host 0.0.0.0, port 8080, ssl off). Wings listens on `host:port`: a wildcard host (0.0.0.0, [::],
 * none) is asked on the loopback. Undefined when a value is not one Wings could listen on.
 */
export function wingsUrl(configText: string): string | undefined {
  const api = wingsApi(configText) ?? {};
  const ssl = api.ssl as { enabled?: unknown } | undefined;
  const scheme = ssl && typeof ssl === "object" && yamlTrue(ssl.enabled) ? "https" : "http";
  const port = api.port ?? 8080;
  if (!/^\d{1,5}$/.test(String(port)) || Number(port) < 1 || Number(port) > 65_535) return undefined;
  const host = api.host ?? "0.0.0.0";
  if (typeof host !== "string") return undefined;
  let address: string;
  if (host === "" || host === "0.0.0.0") address = "127.0.0.1";
  else if (host === "[::]" || host === "::") address = "[::1]";
  else if (/^\[[0-9A-Fa-f:.]+\]$/.test(host) || /^[A-Za-z0-9.-]{1,253}$/.test(host)) address = host;
  else return undefined;
  return `${scheme}://${address}:${Number(port)}`;
}

async function wingsExpiries(options: CheckOptions): Promise<Expiry[]> {
  let text: string | undefined;
  try {
    text = readRegular(options.wingsConfig);
  } catch {
    text = undefined; // no Wings here (or not readable): only a handshake, when asked for
  }
  const file = text === undefined ? undefined : wingsCertFile(text);
  if (file && file !== "off") return [fileExpiry("wings", file, file)];
  if (options.wings) return [await handshakeExpiry(options.wings)];
  // A config that exists but does not say where the certificate is: said, not silently skipped.
  if (text !== undefined && file === undefined) {
    return [{ cert: "wings", name: options.wingsConfig, error: "no api.ssl.cert in it" }];
  }
  return [];
}

/** The certificate Wings serves, by a TLS handshake (not verified: only its date is read), within 10 s. */
function handshakeExpiry(address: string): Promise<Expiry> {
  const match = /^(.+?):(\d{1,5})$/.exec(address);
  const host = match?.[1] ?? address;
  const port = Number(match?.[2] ?? 8080);
  return new Promise((resolve) => {
    const socket = connect({
      host,
      port,
      servername: /^[\d.]+$/.test(host) ? undefined : host,
      rejectUnauthorized: false,
    });
    const done = (e: Expiry) => {
      socket.destroy();
      resolve(e);
    };
    socket.setTimeout(10_000, () => done({ cert: "wings", name: address, error: "no answer within 10 s" }));
    socket.once("error", (error) => done({ cert: "wings", name: address, error: error.message }));
    socket.once("secureConnect", () => {
      const validTo = socket.getPeerCertificate().valid_to;
      done(
        validTo
          ? { cert: "wings", name: address, until: Date.parse(validTo) }
          : { cert: "wings", name: address, error: "no certificate" },
      );
    });
  });
}
