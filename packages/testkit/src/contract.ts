/**
 * What keeps a stand-in honest: every route names the public source it follows, and a vendor's real answers, copied
 * from that source into `test/contracts/<service>/`, are compared with what the stand-in answers. A stand-in that
 * drifts from the real service (a field renamed, a number turned into a string, a header dropped) fails a test.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** One route of a stand-in and where its behaviour comes from: a repository and path, or a documentation page. */
export interface RouteSource {
  method: string;
  /** The path as the vendor writes it, with `{placeholders}`. */
  path: string;
  source: string;
}

/**
 * One real exchange as the vendor's source or documentation shows it. `body` is the real answer (or its example);
 * `headers` lists header names the real service sends that a client may read (values are examples).
 */
export interface RealExchange {
  name: string;
  /** Repository and path, or the documentation page, the example is copied from. */
  source: string;
  request: { method: string; path: string; body?: unknown };
  response: { status: number; headers?: Record<string, string>; body?: unknown };
}

/** The JSON type of a value as a shape comparison sees it. */
function kind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/**
 * Where `ours` differs in shape from `real`: each key of a real object must be in ours with the same JSON type,
 * recursively; arrays are compared element by element against the real array's first element. A real `null` accepts
 * anything (the vendor writes null for "not set", and the stand-in may have set it). Extra keys in ours are allowed:
 * a client must not depend on them, and the clients' own schemas are tested against the real bodies.
 */
export function shapeDifferences(real: unknown, ours: unknown, at = "$"): string[] {
  if (real === null) return [];
  const want = kind(real);
  const got = kind(ours);
  if (want !== got) return [`${at}: the real answer has ${want}, the stand-in ${got}`];
  if (want === "array") {
    const [first] = real as unknown[];
    if (first === undefined) return [];
    return (ours as unknown[]).flatMap((item, i) => shapeDifferences(first, item, `${at}[${i}]`));
  }
  if (want === "object") {
    const mine = ours as Record<string, unknown>;
    return Object.entries(real as Record<string, unknown>).flatMap(([key, value]) =>
      key in mine ? shapeDifferences(value, mine[key], `${at}.${key}`) : [`${at}.${key}: missing in the stand-in`],
    );
  }
  return [];
}

/** The real exchanges of a service: every `*.json` file in `dir`, each one exchange or a list of them. */
export function loadExchanges(dir: string): RealExchange[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .flatMap((name) => {
      const parsed = JSON.parse(readFileSync(join(dir, name), "utf8")) as RealExchange | RealExchange[];
      return Array.isArray(parsed) ? parsed : [parsed];
    });
}

/** Header names of `real` missing from a stand-in answer's headers. */
export function missingHeaders(real: Record<string, string> | undefined, ours: Headers): string[] {
  return Object.keys(real ?? {}).filter((name) => !ours.has(name));
}

/** The services whose real answers are kept in `test/contracts/<service>/`. */
export type ContractService = "panel" | "discord" | "cloudflare" | "digitalocean" | "downloads";

/** The real exchanges of a service, as kept in this package's `test/contracts/<service>/`. */
export function realExchanges(service: ContractService): RealExchange[] {
  return loadExchanges(fileURLToPath(new URL(`../test/contracts/${service}`, import.meta.url)));
}

/** A route's path as a pattern matching a real request's path (the query left off): a `{placeholder}` is a segment. */
export function routePattern(path: string, prefix = ""): RegExp {
  const escaped = `${prefix}${path}`.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+");
  return new RegExp(`^${escaped}$`);
}

/** The path of an exchange's request without its query. */
export function pathOf(exchange: RealExchange): string {
  return exchange.request.path.split("?")[0] ?? "";
}

/**
 * One row of a client's table of the bodies it reads: the route (its method, and its path as the vendor writes it
 * with a `{placeholder}` for each segment that varies), and which answers: its successes (2xx) or its failures.
 * `name` says what reads them (the schema's name).
 */
export interface BodyRead {
  name: string;
  method: string;
  path: string;
  answers: "success" | "failure";
}

/** The row's words in a test's name: "serverSchema reads GET /api/client/servers/{server} (success)". */
function describeRead(row: BodyRead): string {
  return `${row.name} reads ${row.method} ${row.path} (${row.answers})`;
}

/**
 * Every real body a client's table says it reads, as test cases `[name, row, exchange]` (an exchange with a body, on
 * the row's route, with an answer of the row's kind); and the rows that matched no real body, which a test must find
 * empty: a row that reads nothing would pass without checking anything.
 */
export function bodiesRead<R extends BodyRead>(
  exchanges: RealExchange[],
  rows: readonly R[],
): { cases: Array<[string, R, RealExchange]>; unmatched: string[] } {
  const cases = rows.flatMap((row) =>
    exchanges
      .filter(
        (e) =>
          e.response.body !== undefined &&
          e.request.method === row.method &&
          routePattern(row.path).test(pathOf(e)) &&
          (e.response.status >= 200 && e.response.status < 300) === (row.answers === "success"),
      )
      .map((e): [string, R, RealExchange] => [`${describeRead(row)}: ${e.name}`, row, e]),
  );
  const used = new Set(cases.map(([, row]) => row));
  return { cases, unmatched: rows.filter((row) => !used.has(row)).map(describeRead) };
}
