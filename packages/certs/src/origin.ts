import { existsSync, linkSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ExitCode, JobError, UsageError } from "@mcops/core/errors";
import { writeFileAtomic } from "@mcops/core/fs";
import type { ToolContext } from "@mcops/core/tool";
import { readRegular } from "./files.ts";
import { certificateNames, readPair } from "./pem.ts";

/**
 * `certs origin` (docs/system.md 5, "Panel TLS"): the CDN's origin certificate and its key, from files or pasted on
 * standard input, cleaned (byte-order mark, CRLF), checked (PEM, the key matches the certificate, the names cover the
 * panel's host, not expired), and installed as `<ssl-dir>/<domain>.crt` (644) and `.key` (600) atomically, the pair
 * before kept as `.previous`. When nginx is installed its configuration is tested (`nginx -t`); if that fails, the
 * previous pair is put back. Nothing is written when a check fails.
 */
export interface OriginOptions {
  domain: string;
  cert?: string | undefined;
  key?: string | undefined;
  /** The panel's host name the certificate must cover (default: the domain). */
  host?: string | undefined;
  sslDir: string;
  /** The configuration test: default `nginx -t` when nginx is on the PATH; "" for none. */
  nginxTest?: string | undefined;
  /** Standard input, when neither file is given (a paste). */
  stdin?: NodeJS.ReadableStream | undefined;
}

/** A certificate and a key are a few KiB; a chain a few more. */
const MAX_BYTES = 1024 * 1024;

export async function runOrigin(ctx: Pick<ToolContext, "stdout" | "runner" | "clock">, options: OriginOptions) {
  const domain = checkDomain(options.domain);
  const host = (options.host ?? domain).toLowerCase();
  const pasted = !options.cert && !options.key ? await readStdin(options.stdin ?? process.stdin) : undefined;
  if (pasted === undefined && (!options.cert || !options.key)) {
    throw new UsageError("give both --cert and --key, or neither and paste both on standard input");
  }
  const certText = pasted ?? readBounded(options.cert as string);
  const keyText = pasted ?? readBounded(options.key as string);
  const where = pasted
    ? { cert: "the paste", key: "the paste" }
    : { cert: options.cert as string, key: options.key as string };
  const pair = readPair(certText, keyText, where);
  const { certificate } = pair;
  if (!certificate.checkPrivateKey(pair.key)) {
    throw new UsageError("the key does not match the certificate (their public keys differ)", {
      hint: "use the private key Cloudflare showed with this certificate; a new certificate needs its own key",
    });
  }
  const names = certificateNames(certificate);
  if (!certificate.checkHost(host)) {
    throw new UsageError(`the certificate is for ${names.join(", ") || "no name"}, not for ${host}`, {
      hint: `create an origin certificate that covers ${host} (Cloudflare offers *.${domain} and ${domain})`,
    });
  }
  const now = ctx.clock.now();
  const until = Date.parse(certificate.validTo);
  if (until <= now) {
    throw new UsageError(`the certificate expired on ${isoDay(until)}`, { hint: "create a new origin certificate" });
  }
  if (Date.parse(certificate.validFrom) > now) {
    throw new UsageError(`the certificate is valid only from ${isoDay(Date.parse(certificate.validFrom))}`, {
      hint: "check the machine's clock, or wait",
    });
  }
  const files = install(options.sslDir, domain, pair.certPem, pair.keyPem);
  const tested = await testNginx(ctx, options.nginxTest, files);
  const years = Math.round((until - now) / (365.25 * 86_400_000));
  ctx.stdout.write(
    `Installed ${files.crt} (644) and ${files.key} (600): for ${names.join(", ")}, valid until ${isoDay(until)} (${years} years); ${tested}\n`,
  );
  return ExitCode.ok;
}

function checkDomain(domain: string): string {
  const d = domain.trim().toLowerCase().replace(/\.$/, "");
  if (!/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(d)) {
    throw new UsageError(`--domain ${JSON.stringify(domain)} is not a domain name`, {
      hint: "e.g. --domain example.com",
    });
  }
  return d;
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** A file of the operator's, at most MAX_BYTES, refused when it is not a regular file (a FIFO would block). */
function readBounded(file: string): string {
  try {
    return readRegular(file, MAX_BYTES);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOTREG") throw new UsageError(`${file} is not a regular file`);
    if (code === "EFBIG") throw new UsageError(`${file} is larger than 1 MiB: not a certificate or a key`);
    throw new UsageError(`cannot read ${file} (${code})`);
  }
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    size += (chunk as Buffer).length;
    if (size > MAX_BYTES) throw new UsageError("the paste is larger than 1 MiB: not a certificate and a key");
    chunks.push(Buffer.from(chunk as Buffer));
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The paths of the pair, and which of them had a file before (linked as .previous). */
interface Installed {
  crt: string;
  key: string;
  hadPrevious: boolean;
  previous: Set<string>;
  /** The files the new pair was written to, so far. */
  written: Set<string>;
}

/**
 * Writes the new pair: each file written whole beside its place (exact mode whatever the umask) and renamed over it;
 * what was there is first linked as `.previous`, so at no moment is either file missing.
 */
function install(sslDir: string, domain: string, certPem: string, keyPem: string): Installed {
  mkdirSync(sslDir, { recursive: true, mode: 0o755 });
  const crt = join(sslDir, `${domain}.crt`);
  const key = join(sslDir, `${domain}.key`);
  const installed: Installed = {
    crt,
    key,
    hadPrevious: existsSync(crt) && existsSync(key),
    previous: new Set(),
    written: new Set(),
  };
  try {
    for (const [file, text, mode] of [
      [key, keyPem, 0o600],
      [crt, certPem, 0o644],
    ] as const) {
      if (existsSync(file)) {
        rmSync(`${file}.previous`, { force: true, recursive: true });
        linkSync(file, `${file}.previous`);
        installed.previous.add(file);
      }
      writeFileAtomic(file, text, mode, { exactMode: true });
      installed.written.add(file);
    }
  } catch (error) {
    // A failure between the two (a full disk): the pair before comes back, never a new key with an old certificate.
    restore(installed);
    throw new JobError(
      `installing the pair in ${sslDir} failed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      {
        hint: installed.hadPrevious ? "the previous certificate and key are back in place" : "nothing was installed",
      },
    );
  }
  return installed;
}

/** `nginx -t` (or the configured test) when there is one; a failure puts the previous pair back and is the error. */
async function testNginx(
  ctx: Pick<ToolContext, "runner">,
  command: string | undefined,
  files: Installed,
): Promise<string> {
  const test = (command ?? (onPath("nginx") ? "nginx -t" : "")).trim();
  if (!test) return "nginx is not installed here, so no configuration test ran";
  // Words separated by spaces (no shell, no quotes): "nginx -t -c /etc/nginx/nginx.conf".
  const [program, ...args] = test.trim().split(/\s+/) as [string, ...string[]];
  const result = await ctx.runner.run(program, args, {});
  if (result.code === ExitCode.ok) return `${test} passed; reload nginx: systemctl reload nginx`;
  const said = `${result.stderr}${result.stdout}`.trim().split("\n").filter(Boolean).at(-1) ?? `exit ${result.code}`;
  restore(files);
  throw new JobError(`${test} failed with the new certificate: ${said}`, {
    hint: files.hadPrevious
      ? "the previous certificate and key are back in place; nginx was not reloaded"
      : "the new files were removed; nginx was not reloaded",
  });
}

/**
 * Each file written as it was: its .previous back where one was made, else the new file removed; a .previous linked
 * to a file that was then not replaced is dropped (the file itself is the one it was).
 */
function restore(files: Installed): void {
  for (const file of [files.key, files.crt]) {
    if (files.written.has(file)) {
      if (files.previous.has(file)) renameSync(`${file}.previous`, file);
      else rmSync(file, { force: true });
    } else if (files.previous.has(file)) rmSync(`${file}.previous`, { force: true });
  }
}

function onPath(program: string): boolean {
  return (process.env.PATH ?? "").split(":").some((dir) => dir && existsSync(join(dir, program)));
}
