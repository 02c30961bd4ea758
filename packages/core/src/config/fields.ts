import { isAbsolute, normalize } from "node:path";
import * as z from "zod/mini";
import { durationMs } from "../format.ts";

/**
 * Field builders: the kinds of value a configuration field can hold, each a zod schema over the text of an env file
 * line, an environment variable or a flag, whose messages name what is wrong and say what to do. A tool declares its
 * own fields from these (its settings.ts); core holds no tool's fields.
 */

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

export type Ctx = z.core.$RefinementCtx<string>;
export type Check = (value: string, ctx: Ctx) => void;

export function fail(ctx: Ctx, message: string, hint?: string): void {
  ctx.addIssue({ code: "custom", message, params: { hint } });
}

/** Every field: not empty, no stray quotes, no white space; then the field's own check. */
export function field(check?: Check) {
  return z.string().check(
    z.superRefine((value, ctx) => {
      if (value === "") return fail(ctx, "is empty", "give it a value, or remove the line to use the default");
      if (/["']/.test(value)) return fail(ctx, "has a stray quote character in it", "remove the quote characters");
      if (/\s/.test(value)) return fail(ctx, "has white space in it", "remove the spaces");
      check?.(value, ctx);
    }),
  );
}

export function httpUrl(value: string, ctx: Ctx, example: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail(ctx, "is not a URL", `write it in full, e.g. ${example}`);
    return undefined;
  }
  if (url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname))) return url;
  fail(ctx, `must be an https:// address (got ${url.protocol}//)`, `use ${example}`);
  return undefined;
}

export const panelUrlSchema = z.pipe(
  field((value, ctx) => {
    const url = httpUrl(value, ctx, "https://panel.example.com");
    if (url && /\/api(\/|$)/.test(url.pathname)) {
      fail(ctx, "must be the panel's base address, without /api/...", `use ${url.origin}`);
    } else if (url && (url.username || url.password)) {
      // The panel client refuses to send to it (as fetch did), and the address is named in its messages, where a
      // password must never show.
      fail(ctx, "must not hold a user name or password", `use ${url.origin}`);
    }
  }),
  z.transform((value: string) => value.replace(/\/+$/, "")),
);

export const clientKeySchema = field((value, ctx) => {
  if (value.startsWith("ptla_")) {
    return fail(
      ctx,
      "is an application API key, but the client API needs a client key",
      "create one under Account → API Credentials in the panel (it starts with ptlc_)",
    );
  }
  if (!/^ptlc_[A-Za-z0-9]{20,}$/.test(value) && !/^[A-Za-z0-9]{32,}$/.test(value)) {
    fail(ctx, "does not look like a panel client API key", "copy it again from Account → API Credentials (ptlc_...)");
  }
});

/** A server's UUID as the panel and Wings write it (Wings names the volume directory and the container by it). */
export const SERVER_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const serverIdSchema = field((value, ctx) => {
  if (SERVER_UUID.test(value)) {
    return fail(ctx, "is the full server UUID", `use its first 8 characters: ${value.slice(0, 8).toLowerCase()}`);
  }
  if (!/^[0-9a-f]{8}$/.test(value)) {
    fail(
      ctx,
      `must be the first 8 characters of the server's UUID (8 hex digits, got ${value.length} characters)`,
      "copy it from the panel's address of the server: /server/<8 characters>",
    );
  }
});

/** An absolute path, normalised: `/srv/volumes/abc/` and `/srv//volumes/./abc` are `/srv/volumes/abc`. */
export const absolutePathSchema = z.pipe(
  field((value, ctx) => {
    if (!isAbsolute(value)) fail(ctx, `must be an absolute path (got "${value}")`, "start it with /");
  }),
  z.transform((value: string) => normalize(value).replace(/(.)\/+$/, "$1")),
);

export const hostSchema = field((value, ctx) => {
  const match = /^[A-Za-z0-9.-]+(?::(\d{1,5}))?$/.exec(value);
  if (!match) fail(ctx, "is not a host name", "e.g. play.example.com");
  else if (match[1] !== undefined && !(Number(match[1]) >= 1 && Number(match[1]) <= 65535))
    fail(ctx, `has port ${match[1]}, which no server listens on`, "a port is 1-65535, e.g. play.example.com:25565");
});

export const countSchema = z.pipe(
  field((value, ctx) => {
    if (!/^\d{1,6}$/.test(value)) fail(ctx, "must be a whole number", "e.g. 30");
  }),
  z.transform((value: string) => Number(value)),
);

export const secondsSchema = z.pipe(
  field((value, ctx) => {
    if (!/^\d{1,6}$/.test(value) || Number(value) === 0) fail(ctx, "must be a number of seconds above 0", "e.g. 60");
  }),
  z.transform((value: string) => Number(value)),
);

/** A file size as restic writes it: digits and a unit k, m, g or t (binary). */
export const sizeSchema = field((value, ctx) => {
  if (!/^\d{1,9}[kmgt]$/i.test(value) || /^0+[kmgt]$/i.test(value)) {
    fail(ctx, "must be a size above 0 with its unit", "e.g. 4G (k, m, g or t)");
  }
});

export const yesNoSchema = z.pipe(
  field((value, ctx) => {
    if (!/^(yes|no|true|false|on|off|1|0)$/i.test(value)) fail(ctx, "must be yes or no", "e.g. yes");
  }),
  z.transform((value: string) => /^(yes|true|on|1)$/i.test(value)),
);

/** Comma-separated, no spaces (an env value cannot hold them unquoted); empty items dropped. */
export const listSchema = z.pipe(
  field(),
  z.transform((value: string) => value.split(",").filter(Boolean)),
);

export const ownerSchema = z.pipe(
  field((value, ctx) => {
    if (!/^\d+:\d+$/.test(value))
      fail(ctx, "must be uid:gid in numbers", "the container's user is 988:988 (docs/system.md 2.6)");
  }),
  z.transform((value: string) => {
    const [uid, gid] = value.split(":").map(Number) as [number, number];
    return { uid, gid };
  }),
);

export const pingUrlSchema = field((value, ctx) => {
  httpUrl(value, ctx, "https://hc-ping.com/<uuid>");
});

/** A service's base address (a mirror, or a stand-in in tests); no trailing slash. */
export const baseUrlSchema = z.pipe(
  field((value, ctx) => {
    httpUrl(value, ctx, "https://fill.papermc.io");
  }),
  z.transform((value: string) => value.replace(/\/+$/, "")),
);

export const durationSchema = z.pipe(
  field((value, ctx) => {
    if (!durationMs(value)) fail(ctx, "is not a duration above 0", "write it like 30m, 90s or 2h");
  }),
  z.transform((value: string) => durationMs(value) as number),
);

/** A duration, or off (0, no, off): undefined. */
export const durationOrOffSchema = z.pipe(
  field((value, ctx) => {
    if (!/^(off|no|0)$/i.test(value) && !durationMs(value)) {
      fail(ctx, "is not a duration or off", "write it like 2h, or off");
    }
  }),
  z.transform((value: string) => (/^(off|no|0)$/i.test(value) ? undefined : durationMs(value))),
);

/** A share of a whole: `10%` or `10` (percent), 0 to 100; a fraction (0.1 for 10 %). */
export const percentSchema = z.pipe(
  field((value, ctx) => {
    const match = /^(\d{1,3}(?:\.\d{1,2})?)%?$/.exec(value);
    if (!match || Number(match[1]) > 100) fail(ctx, "is not a percentage", "write it like 10%");
  }),
  z.transform((value: string) => Number(value.replace("%", "")) / 100),
);

/** Docker's socket, or off (no, 0): undefined when off. */
export const dockerSocketSchema = z.pipe(
  field((value, ctx) => {
    if (!/^(off|no|0)$/i.test(value) && !value.startsWith("/")) {
      fail(ctx, `must be the path of Docker's socket or off (got "${value}")`, "e.g. /var/run/docker.sock");
    }
  }),
  z.transform((value: string) => (/^(off|no|0)$/i.test(value) ? undefined : value)),
);
