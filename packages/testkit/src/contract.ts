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
  /**
   * Keys of the body the source itself calls optional or nullable, which the stand-in may leave out or answer null,
   * each with the source's words as the reason: JSON paths, `[]` for any index (`$.result[].account`).
   */
  optional?: Record<string, string>;
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
function shapeDifferences(real: unknown, ours: unknown, at = "$"): string[] {
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
function loadExchanges(dir: string): RealExchange[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .flatMap((name) => {
      const parsed = JSON.parse(readFileSync(join(dir, name), "utf8")) as RealExchange | RealExchange[];
      return Array.isArray(parsed) ? parsed : [parsed];
    });
}

/** Header names of `real` missing from a stand-in answer's headers. */
function missingHeaders(real: Record<string, string> | undefined, ours: Headers): string[] {
  return Object.keys(real ?? {}).filter((name) => !ours.has(name));
}

/** The services whose real answers are kept in `test/contracts/<service>/`. */
export type ContractService = "panel" | "discord" | "cloudflare" | "digitalocean" | "downloads" | "modrinth" | "docker";

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

/** What a stand-in answered: the status, the headers, and the body (JSON when the answer says so, else its text). */
export interface Answer {
  status: number;
  headers: Headers;
  /** Undefined for an empty body. */
  body: unknown;
}

/** The stand-in's value for a `{placeholder}`: an id it made, a key it holds; undefined when it has none. */
export type PlaceholderValue = (name: string) => string | number | undefined | Promise<string | number | undefined>;

/**
 * `text` with each `{placeholder}` replaced by `value(name)`; a placeholder without a value is an error in the
 * fixture, named with `text`.
 */
export async function fill(text: string, value: PlaceholderValue = () => undefined): Promise<string> {
  let filled = text;
  for (const [whole, name = ""] of text.matchAll(/\{([^{}\s"]+)\}/g)) {
    const found = await value(name);
    if (found === undefined) throw new Error(`no value for ${whole} in ${text}`);
    filled = filled.replace(whole, String(found));
  }
  return filled;
}

/** How a client of the service makes a request: the headers it sends (a bearer key, Accept), its path's values. */
export interface Client {
  headers?: Record<string, string>;
  value?: PlaceholderValue;
  /**
   * Fill a JSON body's strings too (DigitalOcean's bodies name ids): a whole `"{name}"` becomes the value itself, so
   * an id that is a number stays one. A body that is a string (not JSON) is sent as it is.
   */
  fillBody?: boolean;
}

/** A JSON value with its strings filled as `Client.fillBody` says. */
async function fillJson(json: unknown, value: PlaceholderValue = () => undefined): Promise<unknown> {
  if (typeof json === "string") {
    const whole = /^\{([^{}\s"]+)\}$/.exec(json);
    const found = whole ? await value(whole[1] ?? "") : undefined;
    return found ?? fill(json, value);
  }
  if (Array.isArray(json)) return Promise.all(json.map((item) => fillJson(item, value)));
  if (json === null || typeof json !== "object") return json;
  const entries = Object.entries(json).map(async ([key, item]) => [key, await fillJson(item, value)] as const);
  return Object.fromEntries(await Promise.all(entries));
}

/**
 * Sends a real exchange's request (or one shaped like it) to the stand-in at `baseUrl` as `client` would: the path's
 * placeholders filled (and the body's, with `fillBody`), the client's headers, a JSON body with its Content-Type (a
 * string is sent as it is, for bodies that are not JSON). The answer's body is read whole.
 */
export async function replay(baseUrl: string, request: RealExchange["request"], client: Client = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...client.headers };
  let body: string | undefined;
  if (request.body !== undefined) {
    headers["Content-Type"] = "application/json";
    if (typeof request.body === "string") body = request.body;
    else body = JSON.stringify(client.fillBody ? await fillJson(request.body, client.value) : request.body);
  }
  const res = await fetch(`${baseUrl}${await fill(request.path, client.value)}`, {
    method: request.method,
    headers,
    body,
    signal: AbortSignal.timeout(60_000), // only ends a hang: a busy machine can take seconds to answer on loopback
  });
  const text = await res.text();
  const json = res.headers.get("content-type")?.startsWith("application/json") && text !== "";
  return { status: res.status, headers: res.headers, body: json ? JSON.parse(text) : text === "" ? undefined : text };
}

/** How an answer is held to the real one. */
export interface Likeness {
  /**
   * A real exchange without a body: the stand-in must answer none ("none", the default), or its body is not compared
   * ("any": a download whose bytes the fixture does not hold).
   */
  bodyless?: "none" | "any";
}

/**
 * Where a stand-in's answer differs from the real one: its status, the headers the real answer lists that it lacks,
 * and its body's shape (`shapeDifferences`), less the keys the exchange calls optional being absent or null.
 */
export function answerDifferences(real: RealExchange, ours: Answer, likeness: Likeness = {}): string[] {
  const differences: string[] = [];
  if (ours.status !== real.response.status) {
    differences.push(`status: the real answer has ${real.response.status}, the stand-in ${ours.status}`);
  }
  const missing = missingHeaders(real.response.headers, ours.headers);
  if (missing.length > 0) differences.push(`headers missing in the stand-in: ${missing.join(", ")}`);
  if (real.response.body !== undefined) {
    const optional = real.optional ?? {};
    for (const difference of shapeDifferences(real.response.body, ours.body)) {
      const at = difference.slice(0, difference.indexOf(": "));
      const absentOrNull = / missing in the stand-in$|, the stand-in null$/.test(difference);
      if (!(absentOrNull && at.replace(/\[\d+\]/g, "[]") in optional)) differences.push(`body shape: ${difference}`);
    }
  } else if ((likeness.bodyless ?? "none") === "none" && ours.body !== undefined) {
    differences.push(`body: the real answer has none, the stand-in ${JSON.stringify(ours.body).slice(0, 200)}`);
  }
  return differences;
}

/** Throws, naming the exchange and its source, when the stand-in's answer differs from the real one. */
export function expectLikeReal(real: RealExchange, ours: Answer, likeness?: Likeness): void {
  const differences = answerDifferences(real, ours, likeness);
  if (differences.length === 0) return;
  throw new Error(`${real.name} (real answer from ${real.source}):\n  ${differences.join("\n  ")}`);
}

/** What an exchange needs to be replayed: the stand-in's options, steps before the request and checks after it. */
export interface ReplayState<O, S> {
  options?: O;
  before?: (stand: S) => Promise<void> | void;
  after?: (stand: S) => Promise<void> | void;
}

/**
 * One real exchange replayed: a stand-in started in the state `states` keeps under the exchange's name (else a fresh
 * one), the steps before, the request as `send` makes it, the answer held to the real one (`expectLikeReal`, which
 * throws naming the exchange and its source), then the state's checks after.
 */
export async function replayInState<O, S, T extends ReplayState<O, S>>(
  real: RealExchange,
  states: Record<string, T>,
  start: (options?: O) => Promise<S>,
  send: (stand: S, state: Partial<T>) => Promise<Answer>,
  likeness?: Likeness,
): Promise<void> {
  const state: Partial<T> = states[real.name] ?? {};
  const stand = await start(state.options);
  await state.before?.(stand);
  expectLikeReal(real, await send(stand, state), likeness);
  await state.after?.(stand);
}

/** The exchange is on the route: the same method, and its path (less the query) matches the route's under `prefix`. */
export function onRoute(exchange: RealExchange, route: RouteSource, prefix = ""): boolean {
  return route.method === exchange.request.method && routePattern(route.path, prefix).test(pathOf(exchange));
}

/** A service's fixtures and its stand-in's route table, as `contractProblems` holds them to each other. */
export interface ContractTable {
  routes: readonly RouteSource[];
  /** The states kept by exchange name: each must name one. */
  states?: Record<string, unknown>;
  /** The table's paths are under this prefix in the exchanges ("/client/v4"). */
  prefix?: string;
  /**
   * How an exchange is matched to a route, when not by `onRoute` (a 405 on another method's path). A route is still
   * covered only by an exchange `onRoute`.
   */
  on?: (exchange: RealExchange, route: RouteSource) => boolean;
  /** Exchanges that need be on no route: a path asked for because it is not there. */
  offTable?: (exchange: RealExchange) => boolean;
  /** Every route must have an exchange on it (`onRoute`): the table is no wider than the fixtures. */
  everyRouteReal?: boolean;
}

/**
 * What is wrong with a service's fixtures and its route table: no exchanges at all, an exchange named twice, a state
 * that names no exchange, an optional key not written as a JSON path or without the source's reason; an exchange on
 * no route; a route listed twice, or naming no source; with `everyRouteReal`, a route no exchange is on.
 */
export function contractProblems(exchanges: RealExchange[], table: ContractTable): string[] {
  const problems = exchanges.length === 0 ? ["there are no real exchanges"] : [];
  const names = exchanges.map((e) => e.name);
  problems.push(...names.filter((name, i) => names.indexOf(name) !== i).map((name) => `exchange named twice: ${name}`));
  for (const name of Object.keys(table.states ?? {})) {
    if (!names.includes(name)) problems.push(`a state names no exchange: ${name}`);
  }
  for (const e of exchanges) {
    for (const [path, reason] of Object.entries(e.optional ?? {})) {
      if (!/^\$(\[\])?(\.[A-Za-z_]+(\[\])?)+$/.test(path) || reason.trim() === "") {
        problems.push(`${e.name}: optional ${path} is not a JSON path with the source's reason`);
      }
    }
  }
  const on = table.on ?? ((e: RealExchange, r: RouteSource) => onRoute(e, r, table.prefix));
  const routes = table.routes;
  for (const e of exchanges) {
    if (!table.offTable?.(e) && !routes.some((r) => on(e, r))) {
      problems.push(`on no route: ${e.request.method} ${e.request.path}`);
    }
  }
  const routeNames = routes.map((r) => `${r.method} ${r.path}`);
  routes.forEach((r, i) => {
    const name = routeNames[i];
    if (routeNames.indexOf(name ?? "") !== i) problems.push(`route listed twice: ${name}`);
    if (r.source.trim() === "") problems.push(`route names no source: ${name}`);
    if (table.everyRouteReal && !exchanges.some((e) => onRoute(e, r, table.prefix))) {
      problems.push(`route without a real exchange: ${name}`);
    }
  });
  return problems;
}

/** Test cases `[name, item]`: exchanges by name, routes as "METHOD path". */
export function named<T extends RealExchange | RouteSource>(items: readonly T[]): Array<[string, T]> {
  return items.map((item): [string, T] => ["name" in item ? item.name : `${item.method} ${item.path}`, item]);
}

/** The stand-ins a test file starts, each closed after its test: `start` in the test, `closeAll` in afterEach. */
export function standIns<O, S extends { close(): Promise<void> }>(start: (options?: O) => Promise<S>) {
  let open: S[] = [];
  return {
    start: async (options?: O): Promise<S> => {
      const stand = await start(options);
      open.push(stand);
      return stand;
    },
    closeAll: async (): Promise<void> => {
      const closing = open;
      open = [];
      await Promise.all(closing.map((stand) => stand.close()));
    },
  };
}
