/**
 * The Modrinth stand-in held to Modrinth's own answers. Each exchange in test/contracts/modrinth/ is built from
 * modrinth/code (the API's openapi.yaml and labrinth's routes, models, error and rate-limit code; its `source` says
 * where, the folder's README names the snapshot and licences) and addressed to the real host; it is replayed against
 * the stand-in's base for that host, in the state the exchange needs, and the answer must have the real status, every
 * header the real answer lists, and the real body's shape. A stand-in that drifts from Modrinth fails here, naming the
 * exchange and its source.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Answer, RealExchange, ReplayState } from "../src/contract.ts";
import { contractProblems, expectLikeReal, named, realExchanges, replay, standIns } from "../src/contract.ts";
import type { ModrinthProjectSpec, ModrinthStandIn, ModrinthStandInOptions } from "../src/modrinth.ts";
import { MODRINTH_ROUTES, startModrinthStandIn } from "../src/modrinth.ts";

const exchanges = realExchanges("modrinth");

/** The projects the fixtures name: openapi.yaml's example ids, and a modpack whose file's name needs encoding. */
function projects(): ModrinthProjectSpec[] {
  return [
    {
      id: "AABBCCDD",
      slug: "my_project",
      versions: [
        {
          id: "IIJJKKLL",
          versionNumber: "1.0.0",
          gameVersions: ["1.16.5", "1.17.1"],
          loaders: ["fabric"],
          featured: true,
          files: [{ filename: "my_file.jar" }],
        },
      ],
    },
    {
      id: "PACKPACK",
      slug: "cozy-pack",
      versions: [
        {
          id: "PACKVER1",
          versionNumber: "1.0",
          gameVersions: ["1.21.4"],
          loaders: ["fabric"],
          files: [{ filename: "Cozy Pack (1.0).mrpack", bytes: Buffer.from("PK\u0005\u0006".padEnd(22, "\u0000")) }],
        },
      ],
    },
  ];
}

const stands = standIns((options?: ModrinthStandInOptions) =>
  startModrinthStandIn({ projects: projects(), ...options }),
);

afterEach(() => stands.closeAll());

/** The stand-in's base for each real host. */
function bases(m: ModrinthStandIn): Record<string, string> {
  return { "https://api.modrinth.com": m.api, "https://cdn.modrinth.com": m.cdn };
}

/** A request to a real address, sent to the stand-in's base for its host. */
function send(m: ModrinthStandIn, request: RealExchange["request"]): Promise<Answer> {
  const origin = /^https:\/\/[^/]+/.exec(request.path)?.[0] ?? "";
  const base = bases(m)[origin];
  if (base === undefined) throw new Error(`${request.path}: no stand-in base for ${origin}`);
  return replay(base, { ...request, path: request.path.slice(origin.length) });
}

const STATES: Record<string, ReplayState<ModrinthStandInOptions, ModrinthStandIn>> = {
  // The allowance used up by a burst just before the exchange's request (labrinth's own limit, 300 a minute).
  "over the rate limit: 429 ratelimit_error": { before: (m) => m.exhaust() },
};

/** labrinth's answer to a path no route matches (routes/not_found.rs). */
const isUnknownRoute = (e: RealExchange) =>
  e.response.status === 404 && (e.response.body as { error?: unknown } | undefined)?.error === "not_found";

describe("Modrinth's own answers, replayed against the stand-in", () => {
  it("are named once each and on a route of MODRINTH_ROUTES (but the unknown route); each route is listed once, with its source and a real exchange", () => {
    const table = { routes: MODRINTH_ROUTES, states: STATES, offTable: isUnknownRoute, everyRouteReal: true };
    expect(contractProblems(exchanges, table)).toEqual([]);
  });

  // A file's bytes are not in the fixtures: the CDN's answers are not compared by body.
  it.each(named(exchanges))("%s", async (_name, real) => {
    const state = STATES[real.name] ?? {};
    const m = await stands.start(state.options);
    await state.before?.(m);
    const likeness = real.request.path.startsWith("https://cdn.modrinth.com/") ? ({ bodyless: "any" } as const) : {};
    expectLikeReal(real, await send(m, real.request), likeness);
  });

  it("serves each CDN file with the Content-Type labrinth stored it with, at the address the API gives", async () => {
    const m = await stands.start();
    for (const real of exchanges.filter((e) => e.request.path.startsWith("https://cdn.modrinth.com/"))) {
      const answer = await send(m, real.request);
      expect(answer.headers.get("content-type"), real.name).toBe(real.response.headers?.["Content-Type"]);
      const [, project = "", version = "", name = ""] =
        /\/data\/([^/]+)\/versions\/([^/]+)\/([^/]+)$/.exec(real.request.path) ?? [];
      expect(m.file(project, version, decodeURIComponent(name)).url, real.name).toBe(real.request.path);
    }
  });

  it("answers the 429 with labrinth's words, and the 404s without a body", async () => {
    for (const real of exchanges.filter((e) => e.response.status === 429 || e.response.status === 404)) {
      const state = STATES[real.name] ?? {};
      const m = await stands.start(state.options);
      await state.before?.(m);
      const answer = await send(m, real.request);
      if (real.response.body === undefined) expect(answer.body, real.name).toBeUndefined();
      else if (real.response.status === 429) {
        expect(answer.body, real.name).toMatchObject({
          error: "ratelimit_error",
          description: expect.stringMatching(/^rate limit exceeded; retry after \d+ milliseconds$/),
        });
      } else expect(answer.body, real.name).toEqual(real.response.body);
    }
  });
});
