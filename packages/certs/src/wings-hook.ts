import { X509Certificate } from "node:crypto";
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ExitCode, UsageError } from "@mcops/core/errors";
import { writeFileAtomic } from "@mcops/core/fs";
import type { ToolContext } from "@mcops/core/tool";
import { wingsCertFile, wingsUrl } from "./check.ts";
import { readRegular } from "./files.ts";

/**
 * `certs wings-hook` (docs/system.md 5, "Node daemon TLS"): the Let's Encrypt deploy hook certbot runs after it renewed
 * the play host's certificate. Wings reads its certificate only when it starts, so without the hook it goes on
 * serving the old one until it expires, and the panel's console stops loading. The hook restarts Wings, waits until it
 * answers, and posts "Wings certificate renewed (valid until …)" through the webhook tool, or a red message saying
 * what failed. Where Wings answers is read from its config.yml at each run (`certs wings-url`: api.host, api.port,
 * api.ssl.enabled), unless an address was given at install.
 */
export const HOOK_NAME = "restart-wings.sh";

/** Where the hook asks Wings when neither an address was given nor config.yml could be read: the panel's default. */
export const DEFAULT_WINGS_URL = "https://127.0.0.1:8080";

/** The script, for tools installed under `prefix` and Wings answering at `url` (undefined: as config.yml says). */
export function hookScript(prefix: string, url: string | undefined): string {
  const q = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
  return `#!/usr/bin/env bash
# Installed by mcops (certs wings-hook). certbot runs it after it renewed a certificate, with RENEWED_LINEAGE set to
# the certificate's directory: Wings reads its certificate only at start, so it is restarted, and the channel is told.
set -uo pipefail
MCOPS=\${MCOPS_PREFIX:-${q(prefix)}}
WINGS_URL=\${WINGS_URL:-${q(url ?? "")}}
# Unless given, where Wings answers is what its config says now (api.host, api.port, api.ssl.enabled).
if [ -z "$WINGS_URL" ]; then
  WINGS_URL=$("$MCOPS/certs" wings-url \${WINGS_CONFIG:+--wings-config "$WINGS_CONFIG"} 2>/dev/null) || WINGS_URL=""
  [[ "$WINGS_URL" =~ ^https?://[^[:space:]]+$ ]] || WINGS_URL=${q(DEFAULT_WINGS_URL)}
fi
WAIT=\${WINGS_WAIT:-120}
[[ "$WAIT" =~ ^[0-9]{1,4}$ ]] || WAIT=120
cert="\${RENEWED_LINEAGE:-/nonexistent}/fullchain.pem"

# certbot runs every deploy hook for every certificate it renewed: only Wings' own (its config's api.ssl.cert) counts.
if [ -n "\${RENEWED_LINEAGE:-}" ]; then
  wings_cert=$("$MCOPS/certs" wings-cert \${WINGS_CONFIG:+--wings-config "$WINGS_CONFIG"} 2>/dev/null) || wings_cert=""
  if [ -n "$wings_cert" ] && [ "$(dirname -- "$(realpath -ms -- "$wings_cert")")" != "$(realpath -ms -- "$RENEWED_LINEAGE")" ]; then
    exit 0
  fi
fi
valid_until=$("$MCOPS/certs" expiry "$cert" 2>/dev/null) || valid_until="an unknown date"

if ! out=$(systemctl restart wings 2>&1); then
  "$MCOPS/webhook" "Wings certificate renewed, but Wings did not restart" \\
    "systemctl restart wings failed: \${out:-no output}. The panel's console uses the old certificate until Wings restarts (journalctl -u wings)." error
  exit 1
fi
if ! command -v curl >/dev/null 2>&1; then
  "$MCOPS/webhook" "Wings certificate renewed (valid until $valid_until)" \
    "Wings was restarted; curl is not installed here, so whether it answers was not checked." warning
  exit 0
fi
for ((i = 0; i < WAIT; i += 2)); do
  # Any HTTP answer (401 without a token) is Wings up; 000 is nothing listening yet.
  code=$(curl -sk -o /dev/null -w '%{http_code}' --max-time 2 "$WINGS_URL/api/system" 2>/dev/null || true)
  if [ -n "$code" ] && [ "$code" != "000" ]; then
    "$MCOPS/webhook" "Wings certificate renewed (valid until $valid_until)" "Wings restarted and answers at $WINGS_URL." success
    exit 0
  fi
  sleep 2
done
"$MCOPS/webhook" "Wings certificate renewed, but Wings does not answer" \\
  "Wings was restarted, but nothing answered at $WINGS_URL within $WAIT s (journalctl -u wings)." error
exit 1
`;
}

export interface WingsHookOptions {
  hooksDir: string;
  prefix: string;
  /** Where Wings answers; undefined: read from its config.yml at each run. */
  wingsUrl?: string | undefined;
}

export async function runWingsHook(ctx: Pick<ToolContext, "stdout">, options: WingsHookOptions): Promise<number> {
  if (options.wingsUrl !== undefined && !/^https?:\/\/[^\s'"]+$/.test(options.wingsUrl)) {
    throw new UsageError(`--wings-url ${JSON.stringify(options.wingsUrl)} is not an address`, {
      hint: "e.g. https://127.0.0.1:8080",
    });
  }
  mkdirSync(options.hooksDir, { recursive: true, mode: 0o755 });
  const file = join(options.hooksDir, HOOK_NAME);
  const script = hookScript(options.prefix, options.wingsUrl);
  const where = options.wingsUrl ?? "the address Wings' config.yml gives (api.host, api.port, api.ssl.enabled)";
  let current: string | undefined;
  try {
    current = readFileSync(file, "utf8");
  } catch {
    current = undefined;
  }
  if (current === script && (fstatMode(file) & 0o777) === 0o755) {
    ctx.stdout.write(`${file} is installed already\n`);
    return ExitCode.ok;
  }
  writeFileAtomic(file, script, 0o755, { exactMode: true });
  ctx.stdout.write(
    `Installed ${file}: after each renewal certbot runs it: it restarts Wings, waits until it answers at ${where}, and posts to the channel\n`,
  );
  return ExitCode.ok;
}

/** Wings' config.yml is a few KiB: a larger one is not read. */
const WINGS_CONFIG_MAX_BYTES = 256 * 1024;

function fstatMode(file: string): number {
  const fd = openSync(file, "r");
  try {
    return fstatSync(fd).mode;
  } finally {
    closeSync(fd);
  }
}

/** `certs wings-cert`: the certificate file Wings' config names (exit 1 when it names none), for the hook. */
export async function runWingsCert(ctx: Pick<ToolContext, "stdout">, config: string): Promise<number> {
  let file: string | "off" | undefined;
  try {
    file = wingsCertFile(readRegular(config, WINGS_CONFIG_MAX_BYTES));
  } catch (error) {
    throw new UsageError(`cannot read ${config} (${(error as NodeJS.ErrnoException).code})`);
  }
  if (!file || file === "off") throw new UsageError(`${config} names no TLS certificate for Wings (api.ssl)`);
  ctx.stdout.write(`${file}\n`);
  return ExitCode.ok;
}

/** `certs wings-url`: where Wings answers, from its config.yml (exit 2 when it cannot be read or names no address). */
export async function runWingsUrl(ctx: Pick<ToolContext, "stdout">, config: string): Promise<number> {
  let text: string;
  try {
    text = readRegular(config, WINGS_CONFIG_MAX_BYTES);
  } catch (error) {
    throw new UsageError(`cannot read ${config} (${(error as NodeJS.ErrnoException).code})`);
  }
  const url = wingsUrl(text);
  if (!url) throw new UsageError(`${config}: api.host or api.port is not an address Wings could listen on`);
  ctx.stdout.write(`${url}\n`);
  return ExitCode.ok;
}

/** `certs expiry FILE`: the day a certificate expires (YYYY-MM-DD), for the hook's message. */
export async function runExpiry(ctx: Pick<ToolContext, "stdout">, file: string): Promise<number> {
  let text: string;
  try {
    text = readRegular(file);
  } catch (error) {
    throw new UsageError(`cannot read ${file} (${(error as NodeJS.ErrnoException).code})`);
  }
  const certificate = new X509Certificate(text);
  ctx.stdout.write(`${new Date(certificate.validTo).toISOString().slice(0, 10)}\n`);
  return ExitCode.ok;
}
