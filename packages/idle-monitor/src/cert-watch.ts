import type { Actor } from "./act.ts";

/**
 * The certificates (issue 20): once a UTC day the monitor runs `certs check` (CERT_CHECK_COMMAND, default the certs
 * tool installed beside it) and posts one yellow health warning for each certificate whose line says it expires
 * within CERT_WARN, has expired, or cannot be read: the origin certificate of the panel, and Wings' (a silently
 * expired Wings certificate makes the panel's console fail to load). Where certs is not installed, nothing is checked.
 */
export interface CertWarning {
  title: string;
  description: string;
}

// The name may hold spaces (a file "old site.crt"): it ends at the last ": " before what certs check says of it.
const LINE = /^(origin|wings) (.+?): (valid until .*|EXPIRED.*|cannot read it.*)$/;
/** How long the daily check may take. */
const CHECK_TIMEOUT_MS = 60_000;

/** The warnings in `certs check`'s lines: the certificates that need the operator. */
export function certWarnings(stdout: string): CertWarning[] {
  return stdout.split("\n").flatMap((line) => {
    const match = LINE.exec(line);
    if (!match) return [];
    const [, kind, name, said] = match as unknown as [string, string, string, string];
    const what = kind === "origin" ? `The panel's origin certificate (${name})` : `Wings' certificate (${name})`;
    if (/within CERT_WARN/.test(said)) {
      const until = /valid until (\S+) \((\d+) days\)/.exec(said);
      return [
        {
          title: `Certificate expires in ${until?.[2] ?? "a few"} days: ${kind} ${name}`,
          description: `${what} is valid until ${until?.[1] ?? "soon"}. ${advice(kind)}`,
        },
      ];
    }
    if (/^EXPIRED/.test(said)) {
      return [
        {
          title: `Certificate expired: ${kind} ${name}`,
          description: `${what} ${said.toLowerCase()}. ${advice(kind)}`,
        },
      ];
    }
    if (/^cannot read it/.test(said)) {
      return [{ title: `Certificate not readable: ${kind} ${name}`, description: `${what}: ${said}.` }];
    }
    return [];
  });
}

function advice(kind: string): string {
  return kind === "origin"
    ? "Create a new origin certificate in Cloudflare (SSL/TLS → Origin Server) and install it: certs origin --domain …"
    : "Let's Encrypt renews it by itself: look at `certbot renew --dry-run` and `systemctl list-timers certbot`.";
}

/** The daily check: run once per UTC day; each warning posted under `health`, in yellow. */
export async function watchCerts(
  actor: Actor,
  command: string | undefined,
  now: number,
  post: (warning: CertWarning) => Promise<void>,
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<void> {
  const day = new Date(now).toISOString().slice(0, 10);
  if (!command || actor.state.certsCheckedDay === day) return;
  actor.state.certsCheckedDay = day;
  // Bounded: a certs check that hangs (an NFS mount, a TLS peer that never answers) must not stop the monitor.
  const signal = AbortSignal.any([actor.ctx.signal, AbortSignal.timeout(timeoutMs)]);
  const result = await actor.ctx.runner.run(command, ["check"], { signal });
  if (result.code !== 0 && result.code !== 1) {
    const said = result.stderr.trim().split("\n").at(-1);
    actor.logger.warn(
      `the daily certificate check failed (exit ${result.code ?? result.signal})${said ? `: ${said}` : ""}`,
      {
        echo: false,
      },
    );
    return;
  }
  const warnings = certWarnings(result.stdout);
  if (!warnings.length) actor.logger.info(`certificates checked: ${result.stdout.trim().replaceAll("\n", "; ")}`);
  for (const warning of warnings) await post(warning);
}
